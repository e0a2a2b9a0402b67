// Package profile is a collection's profile: the one declarative document (YAML, or the same as JSON) that
// says what a collection is about and how ragd answers over it — its description and language, the system
// prompt, the fixed replies, vocabulary and synonyms, intents, spec patterns, context limits and generation
// settings. It owns the type, strict decoding, defaults and validation; docs/collections.md is the reference.
//
// # Sections owned by other packages
//
// Features with settings of their own (graph retrieval, a typed metadata schema) add them as one section: a
// field of Profile holding a pointer to a type of the package that owns the feature, nil when the document
// has no such section, with the same key in its json and yaml tags:
//
//	Graph *graph.Profile `json:"graph,omitempty" yaml:"graph,omitempty"`
//
// and one line in Profile.sections so that validation reaches it. The section's type implements Section; its
// package must not import this one (it gets its section, not the profile). Unknown keys inside a section are
// rejected like everywhere else, since decoding is strict all the way down.
package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/ragd/ragd/internal/graph"
	"github.com/ragd/ragd/internal/meta"
	"github.com/ragd/ragd/internal/rag"
)

// Profile is a collection's profile. The zero value of every field means "ragd's default" (see WithDefaults).
type Profile struct {
	// Name is the collection's name: required in a file applied with `ragd collections apply`; with
	// PUT /api/collections/{name} it may be left out, and must otherwise equal the name in the path.
	Name        string `json:"name,omitempty" yaml:"name,omitempty"`
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	// Language of the documents and answers: "auto" (the default: each question's own), "ko" or "en".
	Language string `json:"language,omitempty" yaml:"language,omitempty"`
	// Domain, when set, keeps ragd's system prompt and makes hosted models decline questions outside it.
	Domain string `json:"domain,omitempty" yaml:"domain,omitempty"`
	// SystemPrompt replaces ragd's whole system prompt for hosted generators.
	SystemPrompt string  `json:"system_prompt,omitempty" yaml:"system_prompt,omitempty"`
	Replies      Replies `json:"replies,omitzero" yaml:"replies,omitempty"`
	// Vocabulary lists the domain's terms (words a tokenizer must keep whole, e.g. 일위대가).
	Vocabulary []string `json:"vocabulary,omitempty" yaml:"vocabulary,omitempty"`
	// Synonyms are groups of words a query naming any of them also searches for the others.
	Synonyms     [][]string    `json:"synonyms,omitempty" yaml:"synonyms,omitempty"`
	Intents      []Intent      `json:"intents,omitempty" yaml:"intents,omitempty"`
	SpecPatterns []SpecPattern `json:"spec_patterns,omitempty" yaml:"spec_patterns,omitempty"`
	Context      Context       `json:"context,omitzero" yaml:"context,omitempty"`
	Generation   Generation    `json:"generation,omitzero" yaml:"generation,omitempty"`

	// Sections owned by other packages go below, one field each (see the package comment).

	// Graph declares the collection's knowledge graph: its record tables and the words of its graph
	// context and answers (docs/graph.md).
	Graph *graph.Profile `json:"graph,omitempty" yaml:"graph,omitempty"`
	// Schema types the metadata of a collection of records (docs/metadata.md).
	Schema *meta.Schema `json:"schema,omitempty" yaml:"schema,omitempty"`
}

// Replies are a collection's fixed replies; "" keeps ragd's default in the question's language. Every
// generator uses them, the offline extractive one included.
type Replies struct {
	// OffTopic is the refusal of a question outside the collection's domain.
	OffTopic string `json:"off_topic,omitempty" yaml:"off_topic,omitempty"`
	// NotCovered is the reply when the documents do not answer the question (nothing found).
	NotCovered string `json:"not_covered,omitempty" yaml:"not_covered,omitempty"`
	// EmptyQuestion is the message of the 400 question_required error to a blank question.
	EmptyQuestion string `json:"empty_question,omitempty" yaml:"empty_question,omitempty"`
}

// Intent is a named keyword list: a question containing any keyword fires the intent, which switches a
// retrieval step on (e.g. the cost table for 단가, 비용, 얼마).
type Intent struct {
	Name     string   `json:"name" yaml:"name"`
	Keywords []string `json:"keywords" yaml:"keywords"`
}

// SpecPattern is a named regular expression (Go RE2 syntax) that pulls a variant such as D80 or 25-180-12
// out of a question: its first capture group when it has one, else the whole match.
type SpecPattern struct {
	Name    string `json:"name" yaml:"name"`
	Pattern string `json:"pattern" yaml:"pattern"`
}

// Context bounds the context an answer is built from (graph retrieval reads the first three).
type Context struct {
	Entities           int `json:"entities,omitempty" yaml:"entities,omitempty"`
	RelationsPerEntity int `json:"relations_per_entity,omitempty" yaml:"relations_per_entity,omitempty"`
	TableRows          int `json:"table_rows,omitempty" yaml:"table_rows,omitempty"`
	// Passages is how many source passages a graph context quotes, each at most PassageChars characters.
	Passages     int `json:"passages,omitempty" yaml:"passages,omitempty"`
	PassageChars int `json:"passage_chars,omitempty" yaml:"passage_chars,omitempty"`
	// TotalChars bounds the whole context.
	TotalChars int `json:"total_chars,omitempty" yaml:"total_chars,omitempty"`
}

// Generation holds the answer settings that are otherwise the server's.
type Generation struct {
	// Passages is how many retrieved passages the generator gets (1..rag.MaxAnswerK; 0: the server's).
	Passages int `json:"passages,omitempty" yaml:"passages,omitempty"`
	// HistoryTurns is how many turns of the conversation a question keeps (0..rag.MaxHistoryTurns; unset:
	// rag.MaxHistoryTurns; 0 answers every question alone).
	HistoryTurns *int `json:"history_turns,omitempty" yaml:"history_turns,omitempty"`
	// Temperature of hosted models, 0..2 (unset: the generator's).
	Temperature *float64 `json:"temperature,omitempty" yaml:"temperature,omitempty"`
	// MaxOutputTokens bounds a hosted model's answer (1..MaxOutputTokens; 0: the generator's).
	MaxOutputTokens int `json:"max_output_tokens,omitempty" yaml:"max_output_tokens,omitempty"`
}

// Section is a profile section owned by another package (see the package comment). Validate returns an
// error naming the offending field relative to the section ("fields[2].type: unknown type \"float\"").
type Section interface {
	Validate() error
}

// sections lists the sections of p by key; a nil section is skipped.
func (p *Profile) sections() map[string]Section {
	out := map[string]Section{}
	if p.Graph != nil {
		out["graph"] = p.Graph
	}
	if p.Schema != nil { // a nil pointer in the interface would not be a nil Section
		out["schema"] = p.Schema
	}
	return out
}

// The defaults of the context limits (the 품셈 system's §6.2 budget, which fits a small hosted model).
const (
	DefaultEntities           = 5
	DefaultRelationsPerEntity = 20
	DefaultTableRows          = 5
	DefaultContextPassages    = 3
	DefaultPassageChars       = 500
	DefaultTotalChars         = 4000
)

// The limits of a profile.
const (
	MaxNameRunes        = 100
	MaxDescriptionRunes = 2000
	MaxPromptRunes      = 20000
	MaxReplyRunes       = 2000
	MaxWordRunes        = 100
	MaxVocabulary       = 10000
	MaxIntents          = 100
	MaxKeywords         = 500
	MaxSpecPatterns     = 50
	MaxPatternRunes     = 1000
	MaxContextItems     = 1000
	MaxContextChars     = 200000
	MaxOutputTokens     = 65536
	MaxTemperature      = 2
	// MaxDocumentBytes bounds a profile document.
	MaxDocumentBytes = 1 << 20
)

// Languages are the values of Profile.Language.
var Languages = []string{"auto", "ko", "en"}

// Error is an invalid profile: which file (or "request"), which field and why. It is rag.CodeInvalid.
type Error struct {
	File  string
	Field string
	Why   string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Why)
	return b.String()
}

// invalid wraps e in a rag.CodeInvalid error (HTTP 400 invalid_request) whose message is e's text.
func (e *Error) invalid() error { return rag.WrapError(rag.CodeInvalid, e, "%s", e.Error()) }

// Decode reads a profile document from data — JSON when file ends in .json or the document starts with "{",
// YAML otherwise — strictly (an unknown field is an error), and validates it. file names the document in
// errors. Errors are rag.CodeInvalid wrapping an *Error.
func Decode(file string, data []byte) (*Profile, error) {
	asJSON := strings.EqualFold(filepath.Ext(file), ".json") || bytes.HasPrefix(bytes.TrimSpace(data), []byte("{"))
	p, e := decode(file, data, asJSON)
	if e != nil {
		return nil, e.invalid()
	}
	return p, nil
}

// ReadFile reads and decodes the profile document at path (Decode).
func ReadFile(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(path, data)
}

// DecodeJSON is Decode of a JSON document (the body of PUT /api/collections/{name}); what names it in errors.
func DecodeJSON(what string, data []byte) (*Profile, error) {
	p, e := decode(what, data, true)
	if e != nil {
		return nil, e.invalid()
	}
	return p, nil
}

func decode(file string, data []byte, asJSON bool) (*Profile, *Error) {
	if len(data) > MaxDocumentBytes {
		return nil, &Error{File: file, Why: fmt.Sprintf("the document is %d bytes, at most %d allowed", len(data), MaxDocumentBytes)}
	}
	var p Profile
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &Error{File: file, Why: "the document is empty"}
	}
	if asJSON {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, &Error{File: file, Why: "invalid JSON: " + err.Error()}
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Why: "invalid JSON: data after the document"}
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(trimmed))
		dec.KnownFields(true)
		if err := dec.Decode(&p); err != nil {
			why := strings.TrimPrefix(err.Error(), "yaml: ")
			var te *yaml.TypeError
			if errors.As(err, &te) {
				why = strings.Join(te.Errors, "; ")
			}
			return nil, &Error{File: file, Why: "invalid YAML: " + why}
		}
		var more any
		if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Why: "invalid YAML: one document per file"}
		}
	}
	if e := p.validate(); e != nil {
		e.File = file
		return nil, e
	}
	return &p, nil
}

// Validate checks every field of p. The error is rag.CodeInvalid wrapping an *Error that names the first
// offending field.
func (p *Profile) Validate() error {
	if e := p.validate(); e != nil {
		return e.invalid()
	}
	return nil
}

func (p *Profile) validate() *Error {
	bad := func(field, format string, args ...any) *Error {
		return &Error{Field: field, Why: fmt.Sprintf(format, args...)}
	}
	text := func(field, s string, limit int) *Error {
		if n := utf8.RuneCountInString(s); n > limit {
			return bad(field, "%d characters, at most %d allowed", n, limit)
		}
		return nil
	}
	word := func(field, s string) *Error {
		if strings.TrimSpace(s) == "" {
			return bad(field, "an empty word")
		}
		return text(field, s, MaxWordRunes)
	}
	if strings.TrimSpace(p.Name) != p.Name {
		return bad("name", "leading or trailing spaces")
	}
	for _, f := range []struct {
		field, s string
		limit    int
	}{
		{"name", p.Name, MaxNameRunes}, {"description", p.Description, MaxDescriptionRunes},
		{"domain", p.Domain, MaxDescriptionRunes}, {"system_prompt", p.SystemPrompt, MaxPromptRunes},
		{"replies.off_topic", p.Replies.OffTopic, MaxReplyRunes}, {"replies.not_covered", p.Replies.NotCovered, MaxReplyRunes},
		{"replies.empty_question", p.Replies.EmptyQuestion, MaxReplyRunes},
	} {
		if err := text(f.field, f.s, f.limit); err != nil {
			return err
		}
	}
	if p.Language != "" && !slices.Contains(Languages, p.Language) {
		return bad("language", "unknown language %q (want one of %s)", p.Language, strings.Join(Languages, ", "))
	}
	if len(p.Vocabulary) > MaxVocabulary {
		return bad("vocabulary", "%d words, at most %d allowed", len(p.Vocabulary), MaxVocabulary)
	}
	for i, w := range p.Vocabulary {
		if err := word(fmt.Sprintf("vocabulary[%d]", i), w); err != nil {
			return err
		}
	}
	if len(p.Synonyms) > rag.MaxSynonymGroups {
		return bad("synonyms", "%d groups, at most %d allowed", len(p.Synonyms), rag.MaxSynonymGroups)
	}
	for i, g := range p.Synonyms {
		switch {
		case len(g) < 2:
			return bad(fmt.Sprintf("synonyms[%d]", i), "a group needs at least two words")
		case len(g) > rag.MaxSynonymsPerGroup:
			return bad(fmt.Sprintf("synonyms[%d]", i), "%d words, at most %d allowed", len(g), rag.MaxSynonymsPerGroup)
		}
		for j, w := range g {
			if err := word(fmt.Sprintf("synonyms[%d][%d]", i, j), w); err != nil {
				return err
			}
		}
	}
	if len(p.Intents) > MaxIntents {
		return bad("intents", "%d intents, at most %d allowed", len(p.Intents), MaxIntents)
	}
	seen := map[string]bool{}
	for i, in := range p.Intents {
		field := fmt.Sprintf("intents[%d]", i)
		if err := checkName(field, in.Name, seen); err != nil {
			return err
		}
		switch {
		case len(in.Keywords) == 0:
			return bad(field+".keywords", "an intent needs at least one keyword")
		case len(in.Keywords) > MaxKeywords:
			return bad(field+".keywords", "%d keywords, at most %d allowed", len(in.Keywords), MaxKeywords)
		}
		for j, k := range in.Keywords {
			if err := word(fmt.Sprintf("%s.keywords[%d]", field, j), k); err != nil {
				return err
			}
		}
	}
	if len(p.SpecPatterns) > MaxSpecPatterns {
		return bad("spec_patterns", "%d patterns, at most %d allowed", len(p.SpecPatterns), MaxSpecPatterns)
	}
	seen = map[string]bool{}
	for i, sp := range p.SpecPatterns {
		field := fmt.Sprintf("spec_patterns[%d]", i)
		if err := checkName(field, sp.Name, seen); err != nil {
			return err
		}
		if sp.Pattern == "" {
			return bad(field+".pattern", "a pattern is required")
		}
		if err := text(field+".pattern", sp.Pattern, MaxPatternRunes); err != nil {
			return err
		}
		re, err := regexp.Compile(sp.Pattern)
		if err != nil {
			return bad(field+".pattern", "bad regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		if re.MatchString("") {
			return bad(field+".pattern", "the pattern matches the empty string, so it would find a spec in every question")
		}
	}
	for _, f := range []struct {
		field string
		v     int
		limit int
	}{
		{"context.entities", p.Context.Entities, MaxContextItems},
		{"context.relations_per_entity", p.Context.RelationsPerEntity, MaxContextItems},
		{"context.table_rows", p.Context.TableRows, MaxContextItems},
		{"context.passages", p.Context.Passages, MaxContextItems},
		{"context.passage_chars", p.Context.PassageChars, MaxContextChars},
		{"context.total_chars", p.Context.TotalChars, MaxContextChars},
		{"generation.passages", p.Generation.Passages, rag.MaxAnswerK},
		{"generation.max_output_tokens", p.Generation.MaxOutputTokens, MaxOutputTokens},
	} {
		if err := count(f.field, f.v, f.limit); err != nil {
			return err
		}
	}
	if h := p.Generation.HistoryTurns; h != nil {
		if err := count("generation.history_turns", *h, rag.MaxHistoryTurns); err != nil {
			return err
		}
	}
	if t := p.Generation.Temperature; t != nil && (*t < 0 || *t > MaxTemperature) {
		return bad("generation.temperature", "%g is outside 0..%d", *t, MaxTemperature)
	}
	for key, s := range p.sections() {
		if s == nil {
			continue
		}
		if err := s.Validate(); err != nil {
			return bad(key, "%s", err.Error())
		}
	}
	if p.Graph != nil {
		for i, t := range p.Graph.Tables {
			if t.Intent != "" && !slices.ContainsFunc(p.Intents, func(in Intent) bool { return in.Name == t.Intent }) {
				return bad(fmt.Sprintf("graph.tables[%d].intent", i), "%q is not one of the profile's intents", t.Intent)
			}
		}
	}
	return nil
}

// count checks a limit: 0 (the default) up to limit.
func count(field string, v, limit int) *Error {
	switch {
	case v < 0:
		return &Error{Field: field, Why: fmt.Sprintf("%d is negative", v)}
	case v > limit:
		return &Error{Field: field, Why: fmt.Sprintf("%d is over the limit of %d", v, limit)}
	}
	return nil
}

// names are the names of intents and spec patterns: a word of lowercase letters, digits, _ and -.
var names = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)

func checkName(field, name string, seen map[string]bool) *Error {
	switch {
	case name == "":
		return &Error{Field: field + ".name", Why: "a name is required"}
	case !names.MatchString(name):
		return &Error{Field: field + ".name", Why: fmt.Sprintf("%q is not a name (lowercase letters, digits, _ and -, starting with a letter, at most 63)", name)}
	case seen[name]:
		return &Error{Field: field + ".name", Why: fmt.Sprintf("%q is used twice", name)}
	}
	seen[name] = true
	return nil
}

// WithDefaults returns a copy of p with its defaults filled in: language auto and the context limits.
// Generation settings left at zero stay zero, which means the server's or generator's own setting.
func (p Profile) WithDefaults() Profile {
	if p.Language == "" {
		p.Language = "auto"
	}
	c := &p.Context
	for _, f := range []struct {
		v   *int
		def int
	}{
		{&c.Entities, DefaultEntities}, {&c.RelationsPerEntity, DefaultRelationsPerEntity},
		{&c.TableRows, DefaultTableRows}, {&c.Passages, DefaultContextPassages},
		{&c.PassageChars, DefaultPassageChars}, {&c.TotalChars, DefaultTotalChars},
	} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return p
}
