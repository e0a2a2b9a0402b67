package meta

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// Filter turns a question's conditions into the metadata conditions stores apply inside their candidate
// queries: a computed field's value becomes the conditions that define it (against asOf), and named rows
// become a condition on the key that replaces the others (a name says which row; the place words around it
// only repeat it).
func (s *Schema) Filter(q *Query, asOf time.Time) []rag.MetaCond {
	if len(q.Named) > 0 {
		c := rag.MetaCond{Key: s.Key, Op: rag.OpIn}
		for _, k := range q.Named {
			c.Values = append(c.Values, k)
		}
		return []rag.MetaCond{c}
	}
	var out []rag.MetaCond
	for _, c := range q.Conds {
		f := s.byName[c.Key]
		if f == nil || len(f.Computed) == 0 {
			out = append(out, c)
			continue
		}
		// eq one computed value: its conditions. Any other use of a computed field (in, ne) is not
		// expressible as one AND of conditions; in of one value is eq.
		if (c.Op == rag.OpEq || c.Op == rag.OpIn) && len(c.Values) == 1 {
			v, _ := c.Values[0].(string)
			for _, cc := range f.Computed[v] {
				out = append(out, s.resolve(cc, asOf))
			}
		}
	}
	return out
}

func (s *Schema) resolve(c Cond, asOf time.Time) rag.MetaCond {
	v := c.Value
	if strings.HasPrefix(v, "$as_of") {
		v, _ = resolveAsOf(v, asOf)
	}
	val, _ := s.byName[c.Field].Parse(v)
	return rag.MetaCond{Key: c.Field, Op: c.Op, Values: []any{val}}
}

// Value is a row's value of field as stored, or for a computed field the value its conditions give as of
// asOf ("" when none does).
func (s *Schema) Value(r Row, field string, asOf time.Time) any {
	f := s.byName[field]
	if f == nil || len(f.Computed) == 0 {
		return r.Meta[field]
	}
	for _, v := range sortedKeys(f.Computed) {
		ok := true
		for _, c := range f.Computed[v] {
			if !Holds(r.Meta, s.resolve(c, asOf)) {
				ok = false
				break
			}
		}
		if ok {
			return v
		}
	}
	return ""
}

// Holds reports whether metadata m satisfies c, comparing as stores do: numbers numerically, strings by code
// point (so ISO dates in calendar order), and only values of the same type.
func Holds(m map[string]any, c rag.MetaCond) bool {
	v, ok := m[c.Key]
	match := func(want any) (int, bool) {
		if !ok {
			return 0, false
		}
		switch x := v.(type) {
		case float64:
			y, isNum := rag.Number(want)
			if !isNum {
				return 0, false
			}
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		case string:
			y, isStr := want.(string)
			if !isStr {
				return 0, false
			}
			return strings.Compare(x, y), true
		case bool:
			y, isBool := want.(bool)
			return 0, isBool && x == y
		}
		return 0, false
	}
	switch c.Op {
	case rag.OpIn, rag.OpEq:
		for _, w := range c.Values {
			if cmp, ok := match(w); ok && cmp == 0 {
				return true
			}
		}
		return false
	case rag.OpNe:
		cmp, ok := match(c.Values[0])
		return !ok || cmp != 0
	}
	cmp, typed := match(c.Values[0])
	if !typed {
		return false
	}
	switch c.Op {
	case rag.OpGt:
		return cmp > 0
	case rag.OpGte:
		return cmp >= 0
	case rag.OpLt:
		return cmp < 0
	case rag.OpLte:
		return cmp <= 0
	}
	return false
}

// Display shows a row's value of field: money as 1,200만원 / 1억 9,800만원, counts with commas, the rest as
// stored.
func (s *Schema) Display(r Row, field string, asOf time.Time) string {
	v := s.Value(r, field, asOf)
	f := s.byName[field]
	if v == nil {
		return ""
	}
	if x, ok := v.(float64); ok && f != nil {
		switch f.Type {
		case TypeMoney:
			return Won(int64(x))
		case TypeInteger:
			return commas(int64(x)) + f.Unit
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// Won writes an amount the way Korean announcements do: 1,200만원, 1억 9,800만원, 22만원, 1만 5,000원.
func Won(n int64) string {
	if n == 0 {
		return "0원"
	}
	if n%10000 != 0 {
		man, won := n/10000, n%10000
		if man == 0 {
			return commas(won) + "원"
		}
		return commas(man) + "만 " + commas(won) + "원"
	}
	eok, rest := n/100000000, (n/10000)%10000
	switch {
	case eok > 0 && rest > 0:
		return commas(eok) + "억 " + commas(rest) + "만원"
	case eok > 0:
		return commas(eok) + "억원"
	}
	return commas(rest) + "만원"
}

func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// Columns are the fields an answer about q shows: the title, the fields the question names or orders by,
// then the schema's list fields.
func (s *Schema) Columns(q *Query) []string {
	cols := []string{s.Title}
	addCol := func(name string) {
		name = strings.TrimPrefix(name, "-")
		if name == "" || name == s.Key || s.byName[name] == nil || s.byName[name].Extract != "" {
			return
		}
		for _, c := range cols {
			if c == name {
				return
			}
		}
		cols = append(cols, name)
	}
	addCol(q.Order)
	for _, a := range q.Asked {
		addCol(a)
	}
	for _, c := range q.Conds {
		addCol(c.Key)
	}
	for _, l := range s.List {
		addCol(l)
	}
	return cols
}

// Sort orders rows by order ("field" ascending, "-field" descending; the schema's order_by when ""), then by
// key.
func (s *Schema) Sort(rows []Row, order string, asOf time.Time) {
	if order == "" {
		order = s.OrderBy
	}
	desc := strings.HasPrefix(order, "-")
	field := strings.TrimPrefix(order, "-")
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := s.Value(rows[i], field, asOf), s.Value(rows[j], field, asOf)
		if c := compareAny(a, b); c != 0 {
			if desc {
				return c > 0
			}
			return c < 0
		}
		return fmt.Sprint(rows[i].Meta[s.Key]) < fmt.Sprint(rows[j].Meta[s.Key])
	})
}

func compareAny(a, b any) int {
	x, xn := rag.Number(a)
	y, yn := rag.Number(b)
	switch {
	case xn && yn:
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case xn:
		return -1
	case yn:
		return 1
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// Table renders rows as a markdown table of cols.
func (s *Schema) Table(rows []Row, cols []string, asOf time.Time) string {
	var b strings.Builder
	b.WriteString("|")
	for _, c := range cols {
		b.WriteString(" " + cell(s.byName[c].Label()) + " |")
	}
	b.WriteString("\n|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("|")
		for _, c := range cols {
			b.WriteString(" " + cell(s.Display(r, c, asOf)) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func cell(v string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(v)
}

// ExtractValue reads field from a row's document text by the field's extract pattern ("" when it does not
// occur or the field has none).
func (s *Schema) ExtractValue(field, docText string) string {
	f := s.byName[field]
	if f == nil || f.extract == nil {
		return ""
	}
	m := f.extract.FindStringSubmatch(docText)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[1])
}

// RecordText is the document of a record that has none: its title and a table of its fields, so that its
// values are searchable like a document's text.
func (s *Schema) RecordText(m map[string]any) string {
	r := Row{Meta: m}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n| | |\n|---|---|\n", s.Display(r, s.Title, time.Time{}))
	for _, f := range s.Fields {
		if len(f.Computed) > 0 || m[f.Name] == nil {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s |\n", cell(f.Label()), cell(s.Display(r, f.Name, time.Time{})))
	}
	return b.String()
}

// Condition is one condition read out of a question, as a client shows it (rag.QuestionCondition).
type Condition = rag.QuestionCondition

var opSigns = map[rag.MetaOp]string{rag.OpEq: ": ", rag.OpIn: ": ", rag.OpNe: " ≠ ", rag.OpGt: " > ", rag.OpGte: " ≥ ",
	rag.OpLt: " < ", rag.OpLte: " ≤ "}

// Conditions are q's conditions as a client shows them: the named rows first (by their titles, from rows),
// then the conditions in the question's order.
func (s *Schema) Conditions(q *Query, rows []Row) []Condition {
	var out []Condition
	if len(q.Named) > 0 {
		c := Condition{Field: s.Key, Label: s.label(s.Title), Op: rag.OpIn}
		var titles []string
		for _, k := range q.Named {
			c.Values = append(c.Values, k)
			title := k
			for _, r := range rows {
				if r.Meta[s.Key] == k {
					if t, ok := r.Meta[s.Title].(string); ok && t != "" {
						title = t
					}
					break
				}
			}
			titles = append(titles, title)
		}
		c.Text = c.Label + ": " + strings.Join(titles, ", ")
		out = append(out, c)
	}
	for _, mc := range q.Conds {
		c := Condition{Field: mc.Key, Label: s.label(mc.Key), Op: mc.Op, Values: mc.Values}
		var vals []string
		for _, v := range mc.Values {
			vals = append(vals, s.show(mc.Key, v))
		}
		c.Text = c.Label + opSigns[mc.Op] + strings.Join(vals, ", ")
		out = append(out, c)
	}
	return out
}

func (s *Schema) label(field string) string {
	if f := s.byName[field]; f != nil {
		return f.Label()
	}
	return field
}

// show is one value of field as answers show it: money in won, counts with their unit.
func (s *Schema) show(field string, v any) string {
	f := s.byName[field]
	var n int64
	switch x := v.(type) {
	case float64:
		n = int64(x)
	case int64:
		n = x
	case int:
		n = int64(x)
	default:
		return fmt.Sprint(v)
	}
	switch {
	case f != nil && f.Type == TypeMoney:
		return Won(n)
	case f != nil && f.Type == TypeInteger:
		return commas(n) + f.Unit
	}
	return strconv.FormatInt(n, 10)
}

// Drop removes from q the conditions on the given fields (the key field: the named rows), as a client
// that removed them asks, and decides again what q asks: named rows gone, a fact or content question
// becomes a list of the rows its other conditions select, or an ordinary question when none are left.
func (q *Query) Drop(fields []string, key string) {
	if len(fields) == 0 {
		return
	}
	q.Conds = slices.DeleteFunc(q.Conds, func(c rag.MetaCond) bool { return slices.Contains(fields, c.Key) })
	if slices.Contains(fields, key) {
		q.Named = nil
	}
	switch {
	case len(q.Named) > 0:
	case q.Kind == KindCompare && (len(q.Conds) > 0 || q.Order != ""):
	case len(q.Conds) > 0:
		q.Kind = KindList
	default:
		q.Kind = KindNone
	}
}
