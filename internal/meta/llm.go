package meta

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// Reading a question with a language model (docs/metadata.md, "Reading a question with the LLM"): when a
// hosted generator with structured output is configured, the answer service also asks it for the
// question's filter, in a JSON schema derived from the collection's schema, validates what it returns, and
// merges it with what the offline rules read (the rules win where both name a field; the model adds
// fields, named rows and a kind the rules missed). A failed call leaves the rules' reading.

// maxPromptTitles bounds the row titles the prompt lists so the model can name rows; with more rows it
// names them by a fragment of the title, matched here.
const maxPromptTitles = 200

// LLMFilterSchema is the JSON schema of the model's reading of a question: conditions on the schema's
// fields (field and op as enums, values as strings: whole numbers in won, dates YYYY-MM-DD, enum values as
// the schema writes them), the rows it names and what the question asks.
func (s *Schema) LLMFilterSchema() rag.JSONSchema {
	var fields []any
	for _, f := range s.Fields {
		if f.Name != s.Key && f.Name != s.Title {
			fields = append(fields, f.Name)
		}
	}
	str := map[string]any{"type": "string"}
	enum := func(vals ...any) map[string]any { return map[string]any{"type": "string", "enum": vals} }
	obj := func(props map[string]any, order ...any) map[string]any {
		return map[string]any{"type": "object", "properties": props, "required": order, "additionalProperties": false}
	}
	cond := obj(map[string]any{
		"field":  enum(fields...),
		"op":     enum(string(rag.OpEq), string(rag.OpIn), string(rag.OpGt), string(rag.OpGte), string(rag.OpLt), string(rag.OpLte)),
		"values": map[string]any{"type": "array", "items": str},
	}, "field", "op", "values")
	top := obj(map[string]any{
		"conditions": map[string]any{"type": "array", "items": cond},
		"named":      map[string]any{"type": "array", "items": str},
		"kind":       enum("none", string(KindList), string(KindFact), string(KindContent), string(KindCompare)),
	}, "conditions", "named", "kind")
	return rag.JSONSchema{Name: "record_filter", Schema: top}
}

// LLMFilterPrompt is the system and user message that ask a model for the filter of question over rows
// (their titles are listed when there are few), relative dates against asOf.
func (s *Schema) LLMFilterPrompt(question string, rows []Row, asOf time.Time) (system, user string) {
	var b strings.Builder
	b.WriteString("You turn a question about a table of records into a filter on its fields. Today is ")
	b.WriteString(asOf.Format(time.DateOnly))
	b.WriteString(": resolve relative dates (this month, within 7 days, next week) against it.\n\nFields:\n")
	for _, f := range s.Fields {
		if f.Name == s.Key || f.Name == s.Title {
			continue
		}
		fmt.Fprintf(&b, "- %s (%s)", f.Name, f.Type)
		if f.Display != "" {
			fmt.Fprintf(&b, ", shown as %q", f.Display)
		}
		if len(f.Aliases) > 0 {
			fmt.Fprintf(&b, ", also called %s", strings.Join(f.Aliases, ", "))
		}
		if vals := s.values(f, rows); len(vals) > 0 {
			fmt.Fprintf(&b, "; values: %s", strings.Join(vals, ", "))
		}
		switch f.Type {
		case TypeMoney:
			b.WriteString("; a whole number of won (1000만원 = 10000000)")
		case TypeDate:
			b.WriteString("; a date YYYY-MM-DD")
		case TypeInteger:
			b.WriteString("; a whole number")
		}
		b.WriteString("\n")
	}
	b.WriteString("\nA condition is a field, an op (eq, in, gt, gte, lt, lte; 이하 is lte, 미만 lt, 이상 gte, 초과 gt) and its values " +
		"as strings. Use only values listed for a field that lists them. Put in named the records the question names by title " +
		"(or a part of a title). kind: list (records matching conditions), fact (a value of named records), content (what " +
		"named records' documents say), compare (records side by side), none (nothing about the table). Add nothing the " +
		"question does not say.")
	if titles := s.titles(rows); len(titles) > 0 && len(titles) <= maxPromptTitles {
		b.WriteString("\n\nRecord titles:\n")
		for _, t := range titles {
			b.WriteString("- " + t + "\n")
		}
	}
	return b.String(), "Question: " + question
}

// values are the values a question can name of an enum or text field: declared, computed, or the rows'.
func (s *Schema) values(f Field, rows []Row) []string {
	switch {
	case len(f.Computed) > 0:
		return sortedKeys(f.Computed)
	case len(f.Values) > 0:
		return f.Values
	case f.Type == TypeEnum || (f.Type == TypeText && f.Words):
		if vals := distinct(rows, f.Name); len(vals) <= maxPromptTitles {
			return vals
		}
	}
	return nil
}

func (s *Schema) titles(rows []Row) []string {
	var out []string
	for _, r := range rows {
		if t, _ := r.Meta[s.Title].(string); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// LLMReading is what a model read out of a question, after validation.
type LLMReading struct {
	Query *Query
	// Dropped counts the conditions and named rows validation refused: a field the schema lacks (or the
	// key and title), an op the field's type does not take, a value that does not parse or is not one of
	// the field's values, a title that names no row or several.
	Dropped int
}

// ParseLLMFilter validates a model's answer to LLMFilterPrompt against the schema and rows: what does not
// fit is dropped and counted. An answer that is not JSON of the schema is an error.
func (s *Schema) ParseLLMFilter(raw []byte, rows []Row) (*LLMReading, error) {
	var ans struct {
		Conditions []struct {
			Field  string   `json:"field"`
			Op     string   `json:"op"`
			Values []string `json:"values"`
		} `json:"conditions"`
		Named []string `json:"named"`
		Kind  string   `json:"kind"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, fmt.Errorf("the model's filter is not JSON of the schema: %w", err)
	}
	out := &LLMReading{Query: &Query{}}
	q := out.Query
	for _, c := range ans.Conditions {
		f := s.byName[c.Field]
		op := rag.MetaOp(c.Op)
		if f == nil || f.Name == s.Key || f.Name == s.Title || len(c.Values) == 0 || !opFits(f, op, len(c.Values)) {
			out.Dropped++
			continue
		}
		mc := rag.MetaCond{Key: f.Name, Op: op}
		for _, v := range c.Values {
			if f.Type == TypeText && f.Words && (op == rag.OpEq || op == rag.OpIn) {
				// A word of a value (서울) stands for every value with that word, as the rules read it.
				for _, w := range wordValues(rows, f.Name, strings.TrimSpace(v)) {
					if !slices.Contains(mc.Values, any(w)) {
						mc.Values = append(mc.Values, w)
					}
				}
				mc.Op = rag.OpIn
				continue
			}
			val, err := f.Parse(v)
			if err != nil || (f.Type == TypeEnum && !s.known(*f, v)) {
				continue
			}
			mc.Values = append(mc.Values, val)
		}
		if len(mc.Values) == 0 {
			out.Dropped++
			continue
		}
		if mc.Op == rag.OpIn && len(mc.Values) == 1 {
			mc.Op = rag.OpEq
		}
		q.Conds = append(q.Conds, mc)
	}
	for _, n := range ans.Named {
		key := s.namedRow(n, rows)
		if key == "" {
			out.Dropped++
			continue
		}
		if !slices.Contains(q.Named, key) {
			q.Named = append(q.Named, key)
		}
	}
	switch k := Kind(ans.Kind); k {
	case KindList, KindFact, KindContent, KindCompare:
		q.Kind = k
	}
	switch {
	case len(q.Conds) == 0 && len(q.Named) == 0:
		q.Kind = KindNone // nothing of the table: an ordinary question
	case q.Kind == KindNone, len(q.Named) == 0 && (q.Kind == KindFact || q.Kind == KindContent):
		q.Kind = KindList // facts and content are of named rows
	}
	return out, nil
}

// wordValues are the rows' values of field that are w or have a word that is w or starts with it.
func wordValues(rows []Row, field, w string) []string {
	var out []string
	if w == "" {
		return nil
	}
	for _, v := range distinct(rows, field) {
		if v == w || slices.ContainsFunc(strings.Fields(v), func(vw string) bool { return strings.HasPrefix(vw, w) }) {
			out = append(out, v)
		}
	}
	return out
}

// opFits reports whether a field of f's type takes op with n values: equality and in for every type, order
// comparisons of one value for numbers and dates.
func opFits(f *Field, op rag.MetaOp, n int) bool {
	switch op {
	case rag.OpEq:
		return n == 1
	case rag.OpIn:
		return f.Type == TypeEnum || f.Type == TypeText
	case rag.OpGt, rag.OpGte, rag.OpLt, rag.OpLte:
		return n == 1 && (f.Type == TypeMoney || f.Type == TypeInteger || f.Type == TypeDate)
	}
	return false
}

// known reports whether v is a value a question can name of the enum f: declared, computed, or (for an
// enum without declared values) any value.
func (s *Schema) known(f Field, v string) bool {
	switch {
	case len(f.Computed) > 0:
		_, ok := f.Computed[v]
		return ok
	case len(f.Values) > 0:
		return slices.Contains(f.Values, v)
	}
	return true
}

// namedRow is the key of the one row that name names: its key, its whole title, or a fragment of exactly
// one row's title; "" otherwise.
func (s *Schema) namedRow(name string, rows []Row) string {
	name = strings.TrimSpace(name)
	if name == "" {
		return ""
	}
	var hit string
	for _, r := range rows {
		k, _ := r.Meta[s.Key].(string)
		t, _ := r.Meta[s.Title].(string)
		if k == name || t == name {
			return k
		}
		if strings.Contains(t, name) {
			if hit != "" {
				return "" // names several rows
			}
			hit = k
		}
	}
	return hit
}

// MergeLLM merges a model's reading into the rules' (q, changed in place) and reports whether the model
// changed anything. When the rules read every word of the question (no Focus left) they stand: the model
// only adds conditions on fields the rules found nothing on, named rows when the rules named none, and a
// kind when the rules found nothing of the schema. When words were left unread (넘지 않는, "no higher
// than"), the rules missed something: the model's conditions replace the rules' on the fields it names,
// and its named rows and kind stand. A model that found nothing of the table changes nothing.
func (q *Query) MergeLLM(llm *Query) bool {
	if llm.Kind == KindNone {
		return false
	}
	if len(q.Focus) > 0 {
		q.Conds = slices.DeleteFunc(q.Conds, func(x rag.MetaCond) bool {
			return slices.ContainsFunc(llm.Conds, func(c rag.MetaCond) bool { return c.Key == x.Key })
		})
		q.Conds = append(q.Conds, llm.Conds...)
		if len(llm.Named) > 0 {
			q.Named = llm.Named
		}
		q.Kind = llm.Kind
		if q.Kind != KindCompare && len(llm.Conds) > 0 {
			q.Order, q.Top = "", false
		}
		return true
	}
	added := false
	for _, c := range llm.Conds {
		if !slices.ContainsFunc(q.Conds, func(x rag.MetaCond) bool { return x.Key == c.Key }) {
			q.Conds = append(q.Conds, c)
			added = true
		}
	}
	if len(q.Named) == 0 && len(llm.Named) > 0 {
		q.Named = llm.Named
		added = true
	}
	if q.Kind == KindNone {
		q.Kind = llm.Kind
	}
	return added
}
