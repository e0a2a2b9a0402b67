package postgres

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/ragd/ragd/internal/rag"
)

// args collects the parameters of a statement being built.
type args []any

// add appends v and returns its placeholder.
func (a *args) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// forgetVisibility makes every query built by docConditions, graphScope and boardOf leave out the visibility
// predicate, as a query that forgot it would: TestRowSecurity sets it to show that the policies alone still
// keep each read path to the principal's rows. Never set outside that test.
var forgetVisibility atomic.Bool

// unrestricted says whether p's queries leave out the visibility predicate: p is an admin (or the test
// seam forgetVisibility is set).
func unrestricted(p rag.Principal) bool { return p.Admin || forgetVisibility.Load() }

// docConditions returns the SQL conditions (ANDed, on documents aliased d) that restrict to documents visible
// to p and matching f; nil when nothing is restricted.
func docConditions(a *args, p rag.Principal, f rag.Filter) ([]string, error) {
	var w []string
	if !unrestricted(p) {
		readers := a.add(p.Readers())
		w = append(w, fmt.Sprintf("(d.owner = %s OR d.readers && %s::text[] OR d.writers && %s::text[] OR d.collection_id IN (%s))",
			a.add(p.ID), readers, readers, visibleCollections(a, p)))
	}
	if len(f.Collections) > 0 {
		w = append(w, fmt.Sprintf("d.collection_id IN (SELECT id FROM {S}.collections WHERE id = ANY(%[1]s::text[]) OR name = ANY(%[1]s::text[]))",
			a.add(f.Collections)))
	}
	if len(f.DocumentIDs) > 0 {
		w = append(w, fmt.Sprintf("d.id = ANY(%s::text[])", a.add(f.DocumentIDs)))
	}
	if len(f.Tags) > 0 {
		w = append(w, fmt.Sprintf("d.tags && %s::text[]", a.add(f.Tags)))
	}
	if len(f.MediaTypes) > 0 {
		w = append(w, fmt.Sprintf("d.media_type = ANY(%s::text[])", a.add(f.MediaTypes)))
	}
	if f.CreatedAfter != nil {
		w = append(w, "d.created_at >= "+a.add(*f.CreatedAfter))
	}
	if f.CreatedBefore != nil {
		w = append(w, "d.created_at <= "+a.add(*f.CreatedBefore))
	}
	if f.UpdatedAfter != nil {
		w = append(w, "d.updated_at >= "+a.add(*f.UpdatedAfter))
	}
	if f.UpdatedBefore != nil {
		w = append(w, "d.updated_at <= "+a.add(*f.UpdatedBefore))
	}
	for _, c := range f.Metadata {
		cond, err := metaCondition(a, c)
		if err != nil {
			return nil, err
		}
		w = append(w, cond)
	}
	return w, nil
}

// visibleCollections is a query of the IDs of the collections whose documents p reads by the
// collection's visibility: public ones, those p or one of its teams owns, and team ones owned by a user who
// shares a team with p (docs/security.md).
func visibleCollections(a *args, p rag.Principal) string {
	return fmt.Sprintf(`SELECT c.id FROM {S}.collections c WHERE c.visibility = 'public' OR c.owner = ANY(%s::text[])
		OR (c.visibility = 'team' AND c.owner IN (SELECT 'user:' || m.user_name FROM {S}.team_members m WHERE m.team = ANY(%s::text[])))`,
		a.add(p.Names()), a.add(nonNil(p.Groups)))
}

// writable is the write predicate on documents d: owner, a write grant naming p, or a collection p writes
// to (see writableCollections); "TRUE" for admins.
func writable(a *args, p rag.Principal) string {
	if p.Admin {
		return "TRUE"
	}
	return fmt.Sprintf("(d.owner = %s OR d.writers && %s::text[] OR d.collection_id IN (%s))", a.add(p.ID), a.add(p.Readers()), writableCollections(a, p))
}

// writableCollections is a query of the IDs of the collections p adds documents to: those it owns, and
// those owned by a team it is an admin of (membership read from team_members now, not from p).
func writableCollections(a *args, p rag.Principal) string {
	id := a.add(p.ID)
	return fmt.Sprintf(`SELECT c.id FROM {S}.collections c WHERE c.owner = %[1]s
		OR c.owner IN (SELECT 'team:' || m.team FROM {S}.team_members m WHERE m.role = 'admin' AND 'user:' || m.user_name = %[1]s)`, id)
}

// metaCondition translates one metadata condition. Comparisons are typed: a number only equals or orders
// against numbers, a string against strings (byte order, so ISO dates compare as dates), a bool equals bools;
// a document without the field matches only ne.
func metaCondition(a *args, c rag.MetaCond) (string, error) {
	if c.Key == "" {
		return "", rag.Errorf(rag.CodeInvalid, "metadata condition needs a key")
	}
	field := "d.metadata -> " + a.add(c.Key)
	switch c.Op {
	case rag.OpEq, rag.OpNe, rag.OpIn:
		if c.Op != rag.OpIn && len(c.Values) != 1 {
			return "", rag.Errorf(rag.CodeInvalid, "metadata %s on %q takes one value", c.Op, c.Key)
		}
		if len(c.Values) == 0 {
			return "", rag.Errorf(rag.CodeInvalid, "metadata in on %q needs values", c.Key)
		}
		vals := make([]string, len(c.Values))
		for i, v := range c.Values {
			j, err := metaJSON(c.Key, v)
			if err != nil {
				return "", err
			}
			vals[i] = j
		}
		switch c.Op {
		case rag.OpEq:
			// The containment test lets the planner use documents_metadata_idx (GIN, jsonb_path_ops); the
			// equality keeps eq exact (containment would also match an array holding the value).
			v := a.add(vals[0])
			return fmt.Sprintf("d.metadata @> jsonb_build_object(%s::text, %s::jsonb) AND (%s) = %s::jsonb", a.add(c.Key), v, field, v), nil
		case rag.OpNe:
			return fmt.Sprintf("(%s) IS DISTINCT FROM %s::jsonb", field, a.add(vals[0])), nil
		default:
			return fmt.Sprintf("(%s) = ANY(%s::jsonb[])", field, a.add(vals)), nil
		}
	case rag.OpGt, rag.OpGte, rag.OpLt, rag.OpLte:
		if len(c.Values) != 1 {
			return "", rag.Errorf(rag.CodeInvalid, "metadata %s on %q takes one value", c.Op, c.Key)
		}
		op := map[rag.MetaOp]string{rag.OpGt: ">", rag.OpGte: ">=", rag.OpLt: "<", rag.OpLte: "<="}[c.Op]
		switch v := c.Values[0].(type) {
		case float64, float32, int, int64, int32, json.Number:
			n, err := toFloat(v)
			if err != nil {
				return "", rag.Errorf(rag.CodeInvalid, "metadata %s on %q: %v", c.Op, c.Key, err)
			}
			return fmt.Sprintf("(CASE WHEN jsonb_typeof(%[1]s) = 'number' THEN (%[1]s)::text::float8 END) %[2]s %[3]s::float8",
				field, op, a.add(n)), nil
		case string:
			return fmt.Sprintf(`(CASE WHEN jsonb_typeof(%[1]s) = 'string' THEN (%[1]s) #>> '{}' END) COLLATE "C" %[2]s %[3]s::text`,
				field, op, a.add(v)), nil
		default:
			return "", rag.Errorf(rag.CodeInvalid, "metadata %s on %q compares numbers or strings, not %T", c.Op, c.Key, v)
		}
	}
	return "", rag.Errorf(rag.CodeInvalid, "unknown metadata operator %q", c.Op)
}

// metaJSON encodes a condition value as JSON, accepting what JSON decoding produces.
func metaJSON(key string, v any) (string, error) {
	switch v.(type) {
	case string, bool, float64, float32, int, int64, int32, json.Number:
	default:
		return "", rag.Errorf(rag.CodeInvalid, "metadata value for %q must be a string, number or bool, not %T", key, v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", rag.Errorf(rag.CodeInvalid, "metadata value for %q: %v", key, err)
	}
	return string(b), nil
}

func toFloat(v any) (float64, error) {
	switch n := v.(type) {
	case float64:
		return n, nil
	case float32:
		return float64(n), nil
	case int:
		return float64(n), nil
	case int64:
		return float64(n), nil
	case int32:
		return float64(n), nil
	case json.Number:
		return n.Float64()
	}
	return 0, fmt.Errorf("not a number: %T", v)
}

// where joins conditions into a WHERE clause body ("TRUE" when there are none).
func where(conds []string) string {
	if len(conds) == 0 {
		return "TRUE"
	}
	return strings.Join(conds, " AND ")
}
