package sqlite

import (
	"strings"

	"github.com/ragd/ragd/internal/rag"
)

// where collects the conditions on the documents table (alias d) of one query and their arguments.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return "1"
	}
	return "(" + strings.Join(w.conds, ") AND (") + ")"
}

func stringArgs(v []string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}

// visible adds the visibility predicate of rag.Store: admin, owner, a read or write grant naming p, or a
// collection visible to p (docs/security.md).
func (w *where) visible(p rag.Principal) {
	if p.Admin {
		return
	}
	readers := p.Readers()
	in := placeholders(len(readers))
	cols, colArgs := visibleCollections(p)
	w.add(`d.owner = ? OR EXISTS (SELECT 1 FROM json_each(d.readers) r WHERE r.value IN (`+in+`))
		OR EXISTS (SELECT 1 FROM json_each(d.writers) r WHERE r.value IN (`+in+`))
		OR d.collection_id IN (`+cols+`)`,
		append(append(append([]any{p.ID}, stringArgs(readers)...), stringArgs(readers)...), colArgs...)...)
}

// visibleCollections is a query of the IDs of the collections whose documents p reads by the collection's
// visibility: public ones, those p or one of its teams owns, and team ones owned by a user who shares a
// team with p. It is not correlated with the outer query, so SQLite runs it once.
func visibleCollections(p rag.Principal) (string, []any) {
	names := p.Names()
	return `SELECT c.id FROM collections c WHERE c.visibility = 'public' OR c.owner IN (` + placeholders(len(names)) + `)
		OR (c.visibility = 'team' AND c.owner IN (SELECT 'user:' || m.user_name FROM team_members m WHERE m.team IN (` +
		placeholders(len(p.Groups)) + `)))`, append(stringArgs(names), stringArgs(p.Groups)...)
}

// writable adds the write predicate: admin, owner, a write grant naming p, or a collection p writes to.
func (w *where) writable(p rag.Principal) {
	if p.Admin {
		return
	}
	readers := p.Readers()
	cols, colArgs := writableCollections(p)
	w.add(`d.owner = ? OR EXISTS (SELECT 1 FROM json_each(d.writers) r WHERE r.value IN (`+placeholders(len(readers))+`))
		OR d.collection_id IN (`+cols+`)`, append(append([]any{p.ID}, stringArgs(readers)...), colArgs...)...)
}

// writableCollections is a query of the IDs of the collections p adds documents to: those it owns, and
// those owned by a team it is an admin of (membership read from team_members now, not from p).
func writableCollections(p rag.Principal) (string, []any) {
	return `SELECT c.id FROM collections c WHERE c.owner = ?
		OR c.owner IN (SELECT 'team:' || m.team FROM team_members m WHERE m.role = 'admin' AND 'user:' || m.user_name = ?)`,
		[]any{p.ID, p.ID}
}

// filter adds the conditions of f; CodeInvalid for a malformed metadata condition.
func (w *where) filter(f rag.Filter) error {
	if len(f.Collections) > 0 {
		n := placeholders(len(f.Collections))
		args := stringArgs(f.Collections)
		w.add(`d.collection_id IN (SELECT id FROM collections WHERE id IN (`+n+`) OR name IN (`+n+`))`, append(args, args...)...)
	}
	if len(f.DocumentIDs) > 0 {
		w.add(`d.id IN (`+placeholders(len(f.DocumentIDs))+`)`, stringArgs(f.DocumentIDs)...)
	}
	if len(f.Tags) > 0 {
		w.add(`EXISTS (SELECT 1 FROM json_each(d.tags) t WHERE t.value IN (`+placeholders(len(f.Tags))+`))`, stringArgs(f.Tags)...)
	}
	if len(f.MediaTypes) > 0 {
		w.add(`d.media_type IN (`+placeholders(len(f.MediaTypes))+`)`, stringArgs(f.MediaTypes)...)
	}
	if f.CreatedAfter != nil {
		w.add(`d.created_at >= ?`, f.CreatedAfter.UnixMicro())
	}
	if f.CreatedBefore != nil {
		w.add(`d.created_at <= ?`, f.CreatedBefore.UnixMicro())
	}
	if f.UpdatedAfter != nil {
		w.add(`d.updated_at >= ?`, f.UpdatedAfter.UnixMicro())
	}
	if f.UpdatedBefore != nil {
		w.add(`d.updated_at <= ?`, f.UpdatedBefore.UnixMicro())
	}
	for _, mc := range f.Metadata {
		if err := w.meta(mc); err != nil {
			return err
		}
	}
	return nil
}

var metaOps = map[rag.MetaOp]string{rag.OpEq: "=", rag.OpGt: ">", rag.OpGte: ">=", rag.OpLt: "<", rag.OpLte: "<="}

// meta adds one metadata condition. The field is looked up with json_each rather than a JSON path so that
// any key works; a comparison only matches a value of the same JSON type (numbers numerically, strings by
// code point, booleans for eq/ne/in only), and ne is the negation of eq (a missing field matches it).
func (w *where) meta(mc rag.MetaCond) error {
	if mc.Key == "" {
		return rag.Errorf(rag.CodeInvalid, "metadata condition without a key")
	}
	switch mc.Op {
	case rag.OpEq, rag.OpNe, rag.OpGt, rag.OpGte, rag.OpLt, rag.OpLte:
		if len(mc.Values) != 1 {
			return rag.Errorf(rag.CodeInvalid, "metadata %s on %q takes one value, not %d", mc.Op, mc.Key, len(mc.Values))
		}
	case rag.OpIn:
		if len(mc.Values) == 0 {
			return rag.Errorf(rag.CodeInvalid, "metadata in on %q needs values", mc.Key)
		}
	default:
		return rag.Errorf(rag.CodeInvalid, "unknown metadata operator %q", mc.Op)
	}
	cmp := metaOps[mc.Op]
	if cmp == "" { // ne and in compare for equality
		cmp = "="
	}
	var alts []string
	args := []any{mc.Key}
	for _, v := range mc.Values {
		switch x := normalizeMetaValue(v).(type) {
		case float64:
			alts = append(alts, `m.type IN ('integer', 'real') AND m.value `+cmp+` ?`)
			args = append(args, x)
		case string:
			alts = append(alts, `m.type = 'text' AND m.value `+cmp+` ?`)
			args = append(args, x)
		case bool:
			if cmp != "=" {
				return rag.Errorf(rag.CodeInvalid, "metadata %s on %q cannot compare booleans", mc.Op, mc.Key)
			}
			if x {
				alts = append(alts, `m.type = 'true'`)
			} else {
				alts = append(alts, `m.type = 'false'`)
			}
		default:
			return rag.Errorf(rag.CodeInvalid, "metadata value %v for %q must be a string, number or boolean", v, mc.Key)
		}
	}
	cond := `EXISTS (SELECT 1 FROM json_each(d.metadata) m WHERE m.key = ? AND ((` + strings.Join(alts, `) OR (`) + `)))`
	if mc.Op == rag.OpNe {
		cond = "NOT " + cond
	}
	w.add(cond, args...)
	return nil
}

// normalizeMetaValue turns Go numbers other than float64 (callers that did not decode JSON) into float64.
func normalizeMetaValue(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case float32:
		return float64(x)
	case uint:
		return float64(x)
	case uint32:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return v
}
