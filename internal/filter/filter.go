// Package filter reads document filters as people type them — `ragd search --filter` expressions and the
// query parameters of GET /api/documents — into a rag.Filter, with one meaning on every surface:
//
//   - Dates: a bound is RFC 3339, or a date YYYY-MM-DD (UTC) that stands for the whole day. An "after"
//     bound starts at that day's first instant, a "before" bound ends at its last, both inclusive as
//     rag.Filter's bounds are: created_before=2024-05-01 includes documents created on 1 May.
//   - Types: a media type, or a short name (pdf, docx/word, hwp/hangul (HWP and HWPX), hwpx, xlsx/excel,
//     pptx/powerpoint, md/markdown, html, text/txt) for its types, or a programming language (go,
//     python/py, typescript/ts, …) for its source files: `type=go`. (Not a key `language`, which would
//     hide a metadata field of that name.)
//
// The CLI and the HTTP server both use it; it imports neither.
package filter

import (
	"strconv"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/rag"
)

// mediaAliases are the short names of media types.
var mediaAliases = map[string][]string{
	"pdf":        {extract.MediaPDF},
	"docx":       {extract.MediaDOCX},
	"word":       {extract.MediaDOCX},
	"hwp":        {extract.MediaHWP, extract.MediaHWPX},
	"hwpx":       {extract.MediaHWPX},
	"hangul":     {extract.MediaHWP, extract.MediaHWPX},
	"xlsx":       {extract.MediaXLSX},
	"excel":      {extract.MediaXLSX},
	"pptx":       {extract.MediaPPTX},
	"powerpoint": {extract.MediaPPTX},
	"md":         {extract.MediaMarkdown, extract.MediaMDX},
	"markdown":   {extract.MediaMarkdown, extract.MediaMDX},
	"html":       {extract.MediaHTML},
	"text":       {extract.MediaText},
	"txt":        {extract.MediaText},
}

// MediaTypes expands short names (pdf, md, …) and programming languages (go, python, ts — see
// extract.CodeMediaTypes) to their media types; other values are kept as they are.
func MediaTypes(names []string) []string {
	var out []string
	for _, n := range names {
		if mts, ok := mediaAliases[strings.ToLower(strings.TrimSpace(n))]; ok {
			out = append(out, mts...)
		} else if mts := extract.CodeMediaTypes(n); mts != nil {
			out = append(out, mts...)
		} else {
			out = append(out, n)
		}
	}
	return out
}

// Time reads a bound: RFC 3339, or YYYY-MM-DD meaning the whole day (UTC) — its first instant for an
// "after" bound, its last for a "before" bound (end true). CodeInvalid otherwise.
func Time(s string, end bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, rag.Errorf(rag.CodeInvalid, "want RFC 3339 or YYYY-MM-DD, got %q", s)
	}
	if end {
		t = t.Add(24*time.Hour - time.Nanosecond)
	}
	return t, nil
}

// fields maps the keys of document conditions, with their accepted spellings, to the condition.
var fields = map[string]string{
	"collection": "collection", "collections": "collection",
	"tag": "tag", "tags": "tag",
	"type": "type", "media_type": "type", "media_types": "type",
	"document": "document", "document_id": "document", "document_ids": "document",
	"created_after": "created_after", "created_before": "created_before",
	"updated_after": "updated_after", "updated_before": "updated_before",
}

// IsField reports whether key names a document condition (see Field) rather than a metadata field.
func IsField(key string) bool {
	_, ok := fields[key]
	return ok
}

// Field sets the document condition named key from vals (ORed): collection, tag, type (media type or short
// name), document, created_after, created_before, updated_after, updated_before (one date each; plural and
// long spellings such as tags or media_type also work). Errors: CodeInvalid naming the key, also for a key
// that is not a document condition.
func Field(f *rag.Filter, key string, vals []string) error {
	field, ok := fields[key]
	if !ok {
		return rag.Errorf(rag.CodeInvalid, "%q is not a document condition", key)
	}
	switch field {
	case "collection":
		f.Collections = append(f.Collections, vals...)
	case "tag":
		f.Tags = append(f.Tags, vals...)
	case "type":
		f.MediaTypes = append(f.MediaTypes, MediaTypes(vals)...)
	case "document":
		f.DocumentIDs = append(f.DocumentIDs, vals...)
	default:
		if len(vals) != 1 {
			return rag.Errorf(rag.CodeInvalid, "%s takes one date (got %d)", key, len(vals))
		}
		t, err := Time(vals[0], strings.HasSuffix(field, "_before"))
		if err != nil {
			return rag.Errorf(rag.CodeInvalid, "%s: %s", key, rag.ErrorMessage(err))
		}
		switch field {
		case "created_after":
			f.CreatedAfter = &t
		case "created_before":
			f.CreatedBefore = &t
		case "updated_after":
			f.UpdatedAfter = &t
		default:
			f.UpdatedBefore = &t
		}
	}
	return nil
}

// Parse turns filter expressions into a rag.Filter. Forms: key=value (equals; a|b|c means any of),
// key!=value, key>=v, key<=v, key>v, key<v. The keys Field knows are document conditions; other keys are
// metadata fields, whose values compare as numbers or booleans when they parse as such. Errors:
// CodeInvalid naming the expression.
func Parse(exprs []string) (rag.Filter, error) {
	var f rag.Filter
	for _, e := range exprs {
		key, op, val, ok := splitExpr(e)
		if !ok || key == "" {
			return f, rag.Errorf(rag.CodeInvalid, "%q: want key=value, key!=value, key>=value, key<=value, key>value or key<value", e)
		}
		vals := strings.Split(val, "|")
		if IsField(key) {
			if op != rag.OpEq {
				return f, rag.Errorf(rag.CodeInvalid, "%q: %s takes key=value", e, key)
			}
			if err := Field(&f, key, vals); err != nil {
				return f, err
			}
			continue
		}
		if op == rag.OpEq && len(vals) > 1 {
			op = rag.OpIn
		}
		cond := rag.MetaCond{Key: key, Op: op}
		for _, v := range vals {
			cond.Values = append(cond.Values, Value(v))
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

// Value reads a metadata value as typed on the command line: a number, true or false, else the string.
func Value(v string) any {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	if v == "true" || v == "false" {
		return v == "true"
	}
	return v
}
