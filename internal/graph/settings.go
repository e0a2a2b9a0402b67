package graph

import (
	"fmt"
	"strings"
)

// Profile is the `graph` section of a collection profile (internal/profile): the record tables, the
// words of the context and answers, and the similarity at which an entity counts as found. The rest of what
// graph retrieval follows is the profile's own: intents, spec patterns, context limits, replies, vocabulary.
type Profile struct {
	// Tables declares the record tables that `ragd import table` accepts.
	Tables []Table `json:"tables,omitempty" yaml:"tables,omitempty"`
	// Labels name relation types, properties and the context's headings in the collection's language.
	Labels Labels `json:"labels,omitzero" yaml:"labels,omitempty"`
	// MinSimilarity is the vector similarity at which an entity counts as found without a keyword match
	// of its name (default 0.5). Lexical embedders rarely reach it, neural ones do for close meanings.
	MinSimilarity float64 `json:"min_similarity,omitempty" yaml:"min_similarity,omitempty"`
	// Extract, when set, asks the configured hosted generator to extract entities and relations from each
	// new or changed version of the collection's documents (docs/graph.md).
	Extract *Extraction `json:"extract,omitempty" yaml:"extract,omitempty"`
}

// Settings are what graph retrieval and answers follow for one collection: its profile's graph section and
// the profile's intents, spec patterns, context limits, replies and vocabulary (internal/profile builds
// them; zero fields take defaults).
type Settings struct {
	Profile
	// Intents returns the names of the intents a question fires; Spec the variant it names ("" for none).
	// nil: none.
	Intents func(question string) []string `json:"-"`
	Spec    func(question string) string   `json:"-"`
	// Limits bound the context (the seed's §6.2).
	Limits Limits `json:"limits"`
	// Replies are the fixed replies to questions nothing is found for.
	Replies Replies `json:"replies"`
	// Vocabulary are domain words: a question that contains one is about the domain, so when nothing is
	// found it gets the not-found reply rather than the off-topic refusal (see Reply).
	Vocabulary []string `json:"vocabulary,omitempty"`
}

// Limits bound a graph context (a profile's context section). Zero fields take the seed's values: 5
// entities, 20 relations per entity, 5 table rows, 3 passages of at most 500 characters, 4000 characters in
// all.
type Limits struct {
	Entities           int `json:"entities"`
	RelationsPerEntity int `json:"relations_per_entity"`
	Rows               int `json:"rows"`
	Passages           int `json:"passages"`
	PassageChars       int `json:"passage_chars"`
	Chars              int `json:"chars"`
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

// Replies are a collection's fixed replies to questions nothing is found for.
type Replies struct {
	OffTopic string `json:"off_topic,omitempty"`
	NotFound string `json:"not_found,omitempty"`
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

// MaxTables bounds the tables of a graph section and MaxColumns the columns of a table.
const (
	MaxTables  = 50
	MaxColumns = 100
)

// Validate reports the first problem of the section, naming the field relative to it (profile.Section).
func (p *Profile) Validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
	}
	if p.MinSimilarity < 0 || p.MinSimilarity > 1 {
		return bad("min_similarity", "%v is not between 0 and 1", p.MinSimilarity)
	}
	if p.Extract != nil {
		if err := p.Extract.validate(); err != nil {
			return err
		}
	}
	if len(p.Tables) > MaxTables {
		return bad("tables", "%d tables, at most %d allowed", len(p.Tables), MaxTables)
	}
	tables := map[string]bool{}
	for i, t := range p.Tables {
		field := fmt.Sprintf("tables[%d]", i)
		if strings.TrimSpace(t.Name) == "" || strings.ContainsAny(t.Name, "/?#% ") {
			return bad(field+".name", "%q is not a table name (a word without spaces, /, ?, # or %%)", t.Name)
		}
		if tables[t.Name] {
			return bad(field+".name", "table %q is declared twice", t.Name)
		}
		tables[t.Name] = true
		if len(t.Columns) == 0 || len(t.Columns) > MaxColumns {
			return bad(field+".columns", "%d columns, 1 to %d allowed", len(t.Columns), MaxColumns)
		}
		cols := map[string]bool{}
		for j, c := range t.Columns {
			cf := fmt.Sprintf("%s.columns[%d]", field, j)
			if strings.TrimSpace(c.Name) == "" {
				return bad(cf+".name", "a column needs a name")
			}
			if cols[c.Name] {
				return bad(cf+".name", "column %q is declared twice", c.Name)
			}
			cols[c.Name] = true
			switch c.Type {
			case TypeText, TypeInteger, TypeNumber:
			default:
				return bad(cf+".type", "%q is not text, integer or number", c.Type)
			}
		}
		if !cols[t.Key] {
			return bad(field+".key", "%q is not one of the table's columns", t.Key)
		}
		if t.Variant != "" && !cols[t.Variant] {
			return bad(field+".variant", "%q is not one of the table's columns", t.Variant)
		}
	}
	return nil
}

// Table returns the declared table named name.
func (s Profile) Table(name string) (Table, bool) {
	for _, t := range s.Tables {
		if t.Name == name {
			return t, true
		}
	}
	return Table{}, false
}
