// Package meta is the typed metadata schema of a collection whose documents are records (rows of a table,
// each with an optional document): field types, display names and question words, validation of rows on
// ingest, reading a structured filter out of a question (extract.go), and answering from the rows
// (render.go). Every word it recognises in a question comes from the schema, never from this code, so the
// same rules serve any table: housing announcements, job postings, product catalogues.
package meta

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// Type is a field's type.
type Type string

// Field types. Money is an integer amount in won, written in questions as 1,200만원, 1억 2,000만원 or
// 12,000,000원; a date is YYYY-MM-DD.
const (
	TypeText    Type = "text"
	TypeEnum    Type = "enum"
	TypeInteger Type = "integer"
	TypeMoney   Type = "money"
	TypeDate    Type = "date"
)

// Field is one column of the schema.
type Field struct {
	// Name is the metadata key (the table's column).
	Name string `json:"name" yaml:"name"`
	Type Type   `json:"type" yaml:"type"`
	// Display is the name shown in answers (a table header); Name when empty.
	Display string `json:"display,omitempty" yaml:"display,omitempty"`
	// Aliases are the words by which a question names the field (보증금, deposit). A money, integer or date
	// condition goes to the field whose alias is nearest to it in the question.
	Aliases []string `json:"aliases,omitempty" yaml:"aliases,omitempty"`
	// Values are the allowed values of an enum (validated on ingest). Empty: any value, and the values a
	// question can name are the ones the rows have.
	Values []string `json:"values,omitempty" yaml:"values,omitempty"`
	// ValueAliases are other ways a question names a value: 접수중 → [접수 중, 신청할 수 있는].
	ValueAliases map[string][]string `json:"value_aliases,omitempty" yaml:"value_aliases,omitempty"`
	// Words: a question names a value by one of its words, or the start of one (서울 for 서울특별시 마포구),
	// rather than by the whole value. For text fields such as a region.
	Words bool `json:"words,omitempty" yaml:"words,omitempty"`
	// Pattern (a regular expression matched against a whole question word) recognises a value no row has
	// yet, so that a question about it gets the no-match reply rather than every row (계양구).
	Pattern string `json:"pattern,omitempty" yaml:"pattern,omitempty"`
	// Unit is the word after a count in questions (세대 in 200세대 이상), for integer fields.
	Unit string `json:"unit,omitempty" yaml:"unit,omitempty"`
	// Computed makes an enum field computed from other fields: value → conditions, with "$as_of" (and
	// "$as_of+7d", "+3m") standing for the question's as-of date. A stored column of that name is ignored
	// when filtering and showing.
	Computed map[string][]Cond `json:"computed,omitempty" yaml:"computed,omitempty"`
	// Extract is a regular expression over the row's document text whose first group is the field's value
	// (a contact line), for fields the table does not carry.
	Extract string `json:"extract,omitempty" yaml:"extract,omitempty"`

	pattern *regexp.Regexp
	extract *regexp.Regexp
}

// Cond is one condition of a computed value or a phrase: Field Op Value, Value a literal or "$as_of…".
type Cond struct {
	Field string     `json:"field" yaml:"field"`
	Op    rag.MetaOp `json:"op" yaml:"op"`
	Value string     `json:"value" yaml:"value"`
}

// Phrase is a fixed expression of questions that stands for conditions (마감 임박 → closes within 7 days).
type Phrase struct {
	Words []string `json:"words" yaml:"words"`
	Conds []Cond   `json:"conds" yaml:"conds"`
}

// Schema is the typed metadata of a collection's records.
type Schema struct {
	// Key is the field identifying a row: the document's file name stem, and its external ID.
	Key string `json:"key" yaml:"key"`
	// Title is the field naming a row in answers and in questions (a fragment such as 공덕동 names it).
	Title string `json:"title" yaml:"title"`
	// Contact is the field an answer gives when a row's document does not state what was asked.
	Contact string `json:"contact,omitempty" yaml:"contact,omitempty"`
	// OrderBy orders listed rows: a field name, "-name" for descending. The key when empty.
	OrderBy string `json:"order_by,omitempty" yaml:"order_by,omitempty"`
	// List are the fields a listing shows after the title (besides the ones the question names).
	List []string `json:"list,omitempty" yaml:"list,omitempty"`
	// NoMatchReply is the answer when no row matches the question's filter.
	NoMatchReply string `json:"no_match_reply,omitempty" yaml:"no_match_reply,omitempty"`
	// NotStatedReply is the answer when a named row's document does not contain what was asked:
	// {title} and {contact} are replaced by the row's values.
	NotStatedReply string `json:"not_stated_reply,omitempty" yaml:"not_stated_reply,omitempty"`
	// RecordWords are the words for a record itself (공고, announcement): a question's word, not its focus.
	RecordWords []string `json:"record_words,omitempty" yaml:"record_words,omitempty"`
	Fields      []Field  `json:"fields" yaml:"fields"`
	Phrases     []Phrase `json:"phrases,omitempty" yaml:"phrases,omitempty"`

	byName map[string]*Field
}

// Default replies, used when the schema does not set its own.
const (
	DefaultNoMatchReply   = "조건에 맞는 항목이 없습니다. (No record matches the question.)"
	DefaultNotStatedReply = "{title} 문서에는 해당 정보가 나와 있지 않습니다. {contact}"
)

// Validate checks s (the profile section "schema"); its error names the field. It is Compile.
func (s *Schema) Validate() error {
	if err := s.Compile(); err != nil {
		return errors.New(rag.ErrorMessage(err))
	}
	return nil
}

// Compile validates s and prepares it for use. Errors are CodeInvalid and name the field.
func (s *Schema) Compile() error {
	s.byName = map[string]*Field{}
	for i := range s.Fields {
		f := &s.Fields[i]
		if f.Name == "" {
			return rag.Errorf(rag.CodeInvalid, "fields[%d]: a name is required", i+1)
		}
		if _, dup := s.byName[f.Name]; dup {
			return rag.Errorf(rag.CodeInvalid, "field %q appears twice", f.Name)
		}
		switch f.Type {
		case TypeText, TypeEnum, TypeInteger, TypeMoney, TypeDate:
		case "":
			f.Type = TypeText
		default:
			return rag.Errorf(rag.CodeInvalid, "field %q: unknown type %q (want text, enum, integer, money or date)", f.Name, f.Type)
		}
		if len(f.Computed) > 0 && f.Type != TypeEnum {
			return rag.Errorf(rag.CodeInvalid, "field %q: only an enum can be computed", f.Name)
		}
		var err error
		if f.Pattern != "" {
			if f.pattern, err = regexp.Compile("^(?:" + f.Pattern + ")$"); err != nil {
				return rag.Errorf(rag.CodeInvalid, "field %q: pattern: %v", f.Name, err)
			}
		}
		if f.Extract != "" {
			if f.extract, err = regexp.Compile(f.Extract); err != nil {
				return rag.Errorf(rag.CodeInvalid, "field %q: extract: %v", f.Name, err)
			}
			if f.extract.NumSubexp() < 1 {
				return rag.Errorf(rag.CodeInvalid, "field %q: extract needs a group", f.Name)
			}
		}
		s.byName[f.Name] = f
	}
	for _, name := range []string{s.Key, s.Title} {
		if name == "" {
			return rag.Errorf(rag.CodeInvalid, "key and title are required")
		}
	}
	check := func(what, name string) error {
		if _, ok := s.byName[strings.TrimPrefix(name, "-")]; !ok {
			return rag.Errorf(rag.CodeInvalid, "%s: %q is not a field", what, name)
		}
		return nil
	}
	for _, c := range [][2]string{{"key", s.Key}, {"title", s.Title}, {"contact", s.Contact}, {"order_by", s.OrderBy}} {
		if c[1] != "" {
			if err := check(c[0], c[1]); err != nil {
				return err
			}
		}
	}
	for _, l := range s.List {
		if err := check("list field", l); err != nil {
			return err
		}
	}
	conds := func(where string, cs []Cond) error {
		for _, c := range cs {
			f := s.byName[c.Field]
			if f == nil {
				return rag.Errorf(rag.CodeInvalid, "%s: %q is not a field", where, c.Field)
			}
			if _, err := opSQL(c.Op); err != nil {
				return rag.Errorf(rag.CodeInvalid, "%s: %v", where, err)
			}
			if !strings.HasPrefix(c.Value, "$as_of") {
				if _, err := f.Parse(c.Value); err != nil {
					return rag.Errorf(rag.CodeInvalid, "%s: %v", where, err)
				}
			} else if _, err := resolveAsOf(c.Value, time.Now()); err != nil {
				return rag.Errorf(rag.CodeInvalid, "%s: %v", where, err)
			}
		}
		return nil
	}
	for _, f := range s.Fields {
		for v, cs := range f.Computed {
			if err := conds(fmt.Sprintf("field %q value %q", f.Name, v), cs); err != nil {
				return err
			}
		}
	}
	for i, p := range s.Phrases {
		if len(p.Words) == 0 {
			return rag.Errorf(rag.CodeInvalid, "phrases[%d]: no words", i+1)
		}
		if err := conds(fmt.Sprintf("phrase %q", p.Words[0]), p.Conds); err != nil {
			return err
		}
	}
	return nil
}

// Field returns the field named name, nil when there is none.
func (s *Schema) Field(name string) *Field { return s.byName[name] }

// Label is the field's display name.
func (f *Field) Label() string {
	if f.Display != "" {
		return f.Display
	}
	return f.Name
}

func opSQL(op rag.MetaOp) (string, error) {
	switch op {
	case rag.OpEq, rag.OpNe, rag.OpGt, rag.OpGte, rag.OpLt, rag.OpLte, rag.OpIn:
		return string(op), nil
	}
	return "", fmt.Errorf("unknown operator %q", op)
}

// Parse reads a value of the field as written in a table cell: integers and money as whole numbers (commas
// allowed), dates as YYYY-MM-DD, an enum as one of its values (when it lists them). It returns the value as
// stored in metadata JSON — float64 for numbers, the ISO string for dates, so that stores compare numbers
// numerically and dates in calendar order.
func (f *Field) Parse(v string) (any, error) {
	v = strings.TrimSpace(v)
	switch f.Type {
	case TypeInteger, TypeMoney:
		n, err := strconv.ParseInt(strings.ReplaceAll(v, ",", ""), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a whole number", f.Name, v)
		}
		if f.Type == TypeMoney && n < 0 {
			return nil, fmt.Errorf("%s: %q is a negative amount", f.Name, v)
		}
		return float64(n), nil
	case TypeDate:
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a date YYYY-MM-DD", f.Name, v)
		}
		return t.Format(time.DateOnly), nil
	case TypeEnum:
		if len(f.Values) > 0 && len(f.Computed) == 0 && !contains(f.Values, v) {
			return nil, fmt.Errorf("%s: %q is not one of %s", f.Name, v, strings.Join(f.Values, ", "))
		}
	}
	return v, nil
}

// Cell reads one table cell of column col: a schema field's typed value, or for a column the schema does
// not name, the string. It is the typing function of ingest.ReadMetaTable.
func (s *Schema) Cell(col, v string) (any, error) {
	if f := s.byName[col]; f != nil {
		return f.Parse(v)
	}
	return v, nil
}

// ValidateRow checks a record's metadata against the schema: the key and title are present and every value
// of a schema field has the field's type. The error names the field.
func (s *Schema) ValidateRow(m map[string]any) error {
	for _, name := range []string{s.Key, s.Title} {
		if v, ok := m[name].(string); !ok || strings.TrimSpace(v) == "" {
			return fmt.Errorf("%s is missing", name)
		}
	}
	for k, v := range m {
		f := s.byName[k]
		if f == nil {
			continue
		}
		switch f.Type {
		case TypeInteger, TypeMoney:
			x, ok := v.(float64)
			if !ok || x != float64(int64(x)) {
				return fmt.Errorf("%s: %v is not a whole number", k, v)
			}
		default:
			str, ok := v.(string)
			if !ok {
				return fmt.Errorf("%s: %v is not text", k, v)
			}
			if _, err := f.Parse(str); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolveAsOf reads "$as_of", "$as_of+7d", "$as_of-1m" (days, weeks, months, years) against asOf.
func resolveAsOf(v string, asOf time.Time) (string, error) {
	rest := strings.TrimPrefix(v, "$as_of")
	if rest == "" {
		return asOf.Format(time.DateOnly), nil
	}
	sign := 1
	switch rest[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return "", fmt.Errorf("%q: want $as_of, $as_of+Nd, +Nw, +Nm or +Ny", v)
	}
	if len(rest) < 3 {
		return "", fmt.Errorf("%q: want $as_of+N followed by d, w, m or y", v)
	}
	n, err := strconv.Atoi(rest[1 : len(rest)-1])
	if err != nil {
		return "", fmt.Errorf("%q: want $as_of+N followed by d, w, m or y", v)
	}
	n *= sign
	switch rest[len(rest)-1] {
	case 'd':
		return asOf.AddDate(0, 0, n).Format(time.DateOnly), nil
	case 'w':
		return asOf.AddDate(0, 0, 7*n).Format(time.DateOnly), nil
	case 'm':
		return asOf.AddDate(0, n, 0).Format(time.DateOnly), nil
	case 'y':
		return asOf.AddDate(n, 0, 0).Format(time.DateOnly), nil
	}
	return "", fmt.Errorf("%q: want $as_of+N followed by d, w, m or y", v)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
