package cli

import (
	"strconv"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// parseFilters turns --filter expressions into a rag.Filter. Forms: key=value (equals; a|b|c means any of),
// key!=value, key>=v, key<=v, key>v, key<v. Reserved keys: collection, tag, type (media type), document,
// created_after, created_before, updated_after, updated_before (RFC 3339 or YYYY-MM-DD). Other keys are
// metadata fields; values that parse as numbers or booleans compare as such.
func parseFilters(exprs []string, collections []string) (rag.Filter, error) {
	f := rag.Filter{Collections: collections}
	for _, e := range exprs {
		key, op, val, ok := splitExpr(e)
		if !ok || key == "" {
			return f, usageErr("--filter %q: want key=value, key!=value, key>=value, key<=value, key>value or key<value", e)
		}
		vals := strings.Split(val, "|")
		switch key {
		case "collection":
			f.Collections = append(f.Collections, vals...)
			continue
		case "tag", "tags":
			f.Tags = append(f.Tags, vals...)
			continue
		case "type", "media_type":
			f.MediaTypes = append(f.MediaTypes, vals...)
			continue
		case "document", "document_id":
			f.DocumentIDs = append(f.DocumentIDs, vals...)
			continue
		case "created_after", "created_before", "updated_after", "updated_before":
			t, err := parseTime(val)
			if err != nil {
				return f, usageErr("--filter %s: %v", key, err)
			}
			switch key {
			case "created_after":
				f.CreatedAfter = &t
			case "created_before":
				f.CreatedBefore = &t
			case "updated_after":
				f.UpdatedAfter = &t
			default:
				f.UpdatedBefore = &t
			}
			continue
		}
		if op == rag.OpEq && len(vals) > 1 {
			op = rag.OpIn
		}
		cond := rag.MetaCond{Key: key, Op: op}
		for _, v := range vals {
			cond.Values = append(cond.Values, typed(v))
		}
		f.Metadata = append(f.Metadata, cond)
	}
	return f, nil
}

func splitExpr(e string) (key string, op rag.MetaOp, val string, ok bool) {
	i := strings.IndexAny(e, "!<>=")
	if i < 0 {
		return "", "", "", false
	}
	key, rest := strings.TrimSpace(e[:i]), e[i:]
	for _, o := range []struct {
		s  string
		op rag.MetaOp
	}{{"!=", rag.OpNe}, {">=", rag.OpGte}, {"<=", rag.OpLte}, {"=", rag.OpEq}, {">", rag.OpGt}, {"<", rag.OpLt}} {
		if strings.HasPrefix(rest, o.s) {
			return key, o.op, strings.TrimSpace(rest[len(o.s):]), true
		}
	}
	return "", "", "", false
}

func typed(v string) any {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	if b, err := strconv.ParseBool(v); err == nil && (v == "true" || v == "false") {
		return b
	}
	return v
}

func parseTime(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02", v)
}
