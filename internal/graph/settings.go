package graph

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/ragd/ragd/internal/rag"
)

// Settings are what a collection declares about its graph (the `graph` section of its profile): the
// intents that switch record lookups on, the spec patterns, the context limits, the record tables, and the
// words its answers and context use. Every field has a default, so an empty section works.
type Settings struct {
	// Intents switch a retrieval step on when the question contains one of their keywords.
	Intents []Intent `json:"intents,omitempty" yaml:"intents,omitempty"`
	// SpecPatterns are regular expressions tried in order; the first match is the question's spec (variant),
	// e.g. `D\d+` or `\d+-\d+-\d+`.
	SpecPatterns []string `json:"spec_patterns,omitempty" yaml:"spec_patterns,omitempty"`
	// Limits bound the context (the seed's §6.2).
	Limits Limits `json:"limits" yaml:"limits"`
	// Tables declares the record tables that `ragd import table` accepts.
	Tables []Table `json:"tables,omitempty" yaml:"tables,omitempty"`
	// MinSimilarity is the vector similarity at which an entity counts as found without a keyword match
	// of its name (default 0.5). Lexical embedders rarely reach it, neural ones do for close meanings.
	MinSimilarity float64 `json:"min_similarity,omitempty" yaml:"min_similarity,omitempty"`
	// Vocabulary are domain words: a question that contains one is about the domain, so when nothing is
	// found it gets the not-found reply rather than the off-topic refusal (see docs/graph.md).
	Vocabulary []string `json:"vocabulary,omitempty" yaml:"vocabulary,omitempty"`
	// Replies are the fixed replies; empty ones use ragd's generic wording.
	Replies Replies `json:"replies" yaml:"replies"`
	// Labels name relation types, properties and the context's headings in the collection's language.
	Labels Labels `json:"labels" yaml:"labels"`
}

// Intent is a named list of keywords: it fires when the question contains one of them.
type Intent struct {
	Name     string   `json:"name" yaml:"name"`
	Keywords []string `json:"keywords" yaml:"keywords"`
}

// Limits bound a graph context. Zero fields take the seed's values: 5 entities, 20 relations per entity,
// 5 table rows, 3 passages of at most 500 characters, 4000 characters in all.
type Limits struct {
	Entities           int `json:"entities,omitempty" yaml:"entities,omitempty"`
	RelationsPerEntity int `json:"relations_per_entity,omitempty" yaml:"relations_per_entity,omitempty"`
	Rows               int `json:"rows,omitempty" yaml:"rows,omitempty"`
	Passages           int `json:"passages,omitempty" yaml:"passages,omitempty"`
	PassageChars       int `json:"passage_chars,omitempty" yaml:"passage_chars,omitempty"`
	Chars              int `json:"chars,omitempty" yaml:"chars,omitempty"`
}

// Table declares a record table: its typed columns, the column that names an entity (Key) and the column
// that tells variants apart (Variant, optional). BaseProperty is the entity property whose value is the base
// variant, listed first when the question names no variant (e.g. "spec"). Intent names the intent that makes
// retrieval look rows up (e.g. "cost"); without one, rows are looked up for every question.
type Table struct {
	Name         string   `json:"name" yaml:"name"`
	Intent       string   `json:"intent,omitempty" yaml:"intent,omitempty"`
	Title        string   `json:"title,omitempty" yaml:"title,omitempty"`
	Key          string   `json:"key" yaml:"key"`
	Variant      string   `json:"variant,omitempty" yaml:"variant,omitempty"`
	BaseProperty string   `json:"base_property,omitempty" yaml:"base_property,omitempty"`
	Columns      []Column `json:"columns" yaml:"columns"`
}

// Column is a typed column of a record table; Label is its heading in answers.
type Column struct {
	Name  string `json:"name" yaml:"name"`
	Type  string `json:"type" yaml:"type"` // text, integer or number
	Label string `json:"label,omitempty" yaml:"label,omitempty"`
}

// Column types.
const (
	TypeText    = "text"
	TypeInteger = "integer"
	TypeNumber  = "number"
)

// Replies are a collection's fixed replies.
type Replies struct {
	OffTopic string `json:"off_topic,omitempty" yaml:"off_topic,omitempty"`
	NotFound string `json:"not_found,omitempty" yaml:"not_found,omitempty"`
}

// Labels are the words of the context and the offline answer.
type Labels struct {
	// Relations names relation types (outgoing), Inverse the same relation seen from its target.
	Relations map[string]string `json:"relations,omitempty" yaml:"relations,omitempty"`
	Inverse   map[string]string `json:"inverse,omitempty" yaml:"inverse,omitempty"`
	// Properties names entity properties shown in answers; properties without a label are not shown.
	Properties map[string]string `json:"properties,omitempty" yaml:"properties,omitempty"`
	Results    string            `json:"results,omitempty" yaml:"results,omitempty"`
	Source     string            `json:"source,omitempty" yaml:"source,omitempty"`
	Similarity string            `json:"similarity,omitempty" yaml:"similarity,omitempty"`
	Passages   string            `json:"passages,omitempty" yaml:"passages,omitempty"`
}

// WithDefaults returns s with zero fields set to their defaults.
func (s Settings) WithDefaults() Settings {
	l := &s.Limits
	l.Entities = orDefault(l.Entities, 5)
	l.RelationsPerEntity = orDefault(l.RelationsPerEntity, 20)
	l.Rows = orDefault(l.Rows, 5)
	l.Passages = orDefault(l.Passages, 3)
	l.PassageChars = orDefault(l.PassageChars, 500)
	l.Chars = orDefault(l.Chars, 4000)
	if s.MinSimilarity == 0 {
		s.MinSimilarity = 0.5
	}
	if s.Replies.OffTopic == "" {
		s.Replies.OffTopic = "This collection only answers questions about its own subject."
	}
	if s.Replies.NotFound == "" {
		s.Replies.NotFound = "The collection's data does not contain this information."
	}
	lb := &s.Labels
	lb.Results = orText(lb.Results, "Search results")
	lb.Source = orText(lb.Source, "Source")
	lb.Similarity = orText(lb.Similarity, "similarity")
	lb.Passages = orText(lb.Passages, "Source passages")
	return s
}

func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

func orText(v, d string) string {
	if strings.TrimSpace(v) == "" {
		return d
	}
	return v
}

// MaxLimit bounds every limit: a context larger than this is not what a limit is for.
const MaxLimit = 1000

// Validate reports the first problem of s as CodeInvalid, naming the field.
func (s Settings) Validate() error {
	bad := func(field, format string, args ...any) error {
		return rag.Errorf(rag.CodeInvalid, "graph.%s: %s", field, fmt.Sprintf(format, args...))
	}
	for i, p := range s.SpecPatterns {
		if _, err := regexp.Compile(p); err != nil {
			return bad(fmt.Sprintf("spec_patterns[%d]", i), "not a regular expression: %v", err)
		}
	}
	l := s.Limits
	for name, v := range map[string]int{"entities": l.Entities, "relations_per_entity": l.RelationsPerEntity, "rows": l.Rows,
		"passages": l.Passages, "passage_chars": l.PassageChars, "chars": l.Chars} {
		if v < 0 || v > MaxLimit*100 || (name != "chars" && name != "passage_chars" && v > MaxLimit) {
			return bad("limits."+name, "%d is out of range", v)
		}
	}
	if s.MinSimilarity < 0 || s.MinSimilarity > 1 {
		return bad("min_similarity", "%v is not between 0 and 1", s.MinSimilarity)
	}
	tables := map[string]bool{}
	for i, t := range s.Tables {
		field := fmt.Sprintf("tables[%d]", i)
		if strings.TrimSpace(t.Name) == "" {
			return bad(field+".name", "a table needs a name")
		}
		if tables[t.Name] {
			return bad(field+".name", "table %q is declared twice", t.Name)
		}
		tables[t.Name] = true
		cols := map[string]bool{}
		for j, c := range t.Columns {
			if c.Name == "" {
				return bad(fmt.Sprintf("%s.columns[%d].name", field, j), "a column needs a name")
			}
			if cols[c.Name] {
				return bad(fmt.Sprintf("%s.columns[%d].name", field, j), "column %q is declared twice", c.Name)
			}
			cols[c.Name] = true
			switch c.Type {
			case TypeText, TypeInteger, TypeNumber:
			default:
				return bad(fmt.Sprintf("%s.columns[%d].type", field, j), "%q is not text, integer or number", c.Type)
			}
		}
		if !cols[t.Key] {
			return bad(field+".key", "%q is not one of the table's columns", t.Key)
		}
		if t.Variant != "" && !cols[t.Variant] {
			return bad(field+".variant", "%q is not one of the table's columns", t.Variant)
		}
	}
	intents := map[string]bool{}
	for i, in := range s.Intents {
		if in.Name == "" || len(in.Keywords) == 0 {
			return bad(fmt.Sprintf("intents[%d]", i), "an intent needs a name and keywords")
		}
		intents[in.Name] = true
	}
	for i, t := range s.Tables {
		if t.Intent != "" && !intents[t.Intent] {
			return bad(fmt.Sprintf("tables[%d].intent", i), "intent %q is not declared", t.Intent)
		}
	}
	return nil
}

// Table returns the declared table named name.
func (s Settings) Table(name string) (Table, bool) {
	for _, t := range s.Tables {
		if t.Name == name {
			return t, true
		}
	}
	return Table{}, false
}

// SettingsKey is the key of a collection's settings that holds its graph settings.
const SettingsKey = "graph"

// SettingsOf returns the graph settings of collection c (defaults when it declares none).
func SettingsOf(c *rag.Collection) (Settings, error) {
	var s Settings
	if raw, ok := c.Settings[SettingsKey]; ok && raw != nil {
		b, err := json.Marshal(raw)
		if err != nil {
			return s, fmt.Errorf("collection %s graph settings: %w", c.Name, err)
		}
		if err := json.Unmarshal(b, &s); err != nil {
			return s, rag.WrapError(rag.CodeInvalid, err, "collection %s: graph settings: %v", c.Name, err)
		}
		if err := s.Validate(); err != nil {
			return s, err
		}
	}
	return s.WithDefaults(), nil
}
