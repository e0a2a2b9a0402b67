package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// Extraction is the `extract` part of a graph profile: ragd asks the configured hosted generator to extract
// entities and relations of these types from each new or changed version of the collection's documents
// (docs/graph.md, "Extraction from documents").
type Extraction struct {
	// EntityTypes and RelationTypes are the types the model may use (1–100 entity types, 0–100 relation
	// types); what it returns of other types is dropped.
	EntityTypes   []string `json:"entity_types" yaml:"entity_types"`
	RelationTypes []string `json:"relation_types,omitempty" yaml:"relation_types,omitempty"`
	// Instructions are added to the model's instructions (what counts as an entity in this domain).
	Instructions string `json:"instructions,omitempty" yaml:"instructions,omitempty"`
	// MaxChars bounds the document text of one call (default 6000, 500–50,000 characters); MaxCalls the
	// calls per document version (default 10, 1–100): text beyond MaxChars × MaxCalls is not read.
	MaxChars int `json:"max_chars,omitempty" yaml:"max_chars,omitempty"`
	MaxCalls int `json:"max_calls,omitempty" yaml:"max_calls,omitempty"`
}

// Defaults and bounds of an Extraction.
const (
	DefaultExtractChars = 6000
	DefaultExtractCalls = 10
	maxExtractTypes     = 100
	maxTypeName         = 64
)

func (x *Extraction) validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("extract.%s: %s", field, fmt.Sprintf(format, args...))
	}
	if len(x.EntityTypes) == 0 || len(x.EntityTypes) > maxExtractTypes {
		return bad("entity_types", "%d types, 1 to %d allowed", len(x.EntityTypes), maxExtractTypes)
	}
	if len(x.RelationTypes) > maxExtractTypes {
		return bad("relation_types", "%d types, at most %d allowed", len(x.RelationTypes), maxExtractTypes)
	}
	for field, types := range map[string][]string{"entity_types": x.EntityTypes, "relation_types": x.RelationTypes} {
		for i, t := range types {
			if strings.TrimSpace(t) != t || t == "" || utf8.RuneCountInString(t) > maxTypeName {
				return bad(fmt.Sprintf("%s[%d]", field, i), "%q is not a type name (1 to %d characters, no surrounding spaces)", t, maxTypeName)
			}
			if slices.Index(types, t) != i {
				return bad(fmt.Sprintf("%s[%d]", field, i), "type %q is listed twice", t)
			}
		}
	}
	if x.MaxChars != 0 && (x.MaxChars < 500 || x.MaxChars > 50_000) {
		return bad("max_chars", "%d is not between 500 and 50000", x.MaxChars)
	}
	if x.MaxCalls != 0 && (x.MaxCalls < 1 || x.MaxCalls > 100) {
		return bad("max_calls", "%d is not between 1 and 100", x.MaxCalls)
	}
	return nil
}

// ExtractResult says what an extraction from one document version found and kept.
type ExtractResult struct {
	Document string `json:"document"`
	// Calls is how many model calls were made; Truncated says the text was longer than they read.
	Calls     int  `json:"calls"`
	Truncated bool `json:"truncated"`
	// Entities and Relations are what was stored (entities merged by name and type across calls).
	Entities  int `json:"entities"`
	Relations int `json:"relations"`
	// Dropped counts what the model returned and validation refused: an unknown entity or relation type,
	// a relation whose endpoint is no entity of the same answer (dangling), or an entity without a name.
	DroppedUnknownType int `json:"dropped_unknown_type"`
	DroppedDangling    int `json:"dropped_dangling"`
	DroppedInvalid     int `json:"dropped_invalid"`
}

// UseCompleter sets the model that extracts graphs from documents (the configured generator when it has
// structured output); without one, ExtractDocument does nothing.
func (s *Service) UseCompleter(c rag.JSONCompleter) { s.completer = c }

// ExtractDocument extracts the entities and relations of a committed document version whose text is text,
// when its collection's profile has a graph `extract` section and a model is set (UseCompleter), and makes
// them what the document contributes to the collection's graph, replacing what an earlier version
// contributed: a section named after the document, the entities and relations that passed validation, and
// the text read as their source passages. It returns nil, nil when there is nothing to do. Errors: the
// model's (CodeLLMFailed) or the store's; an answer that is not JSON is CodeLLMFailed. On an error the
// document's earlier rows are removed all the same: they describe a version that is no longer current.
func (s *Service) ExtractDocument(ctx context.Context, doc *rag.Document, text string) (*ExtractResult, error) {
	if s.completer == nil {
		return nil, nil
	}
	c, err := s.store.GetCollection(ctx, doc.CollectionID)
	if err != nil {
		return nil, err
	}
	set, err := s.settings(c)
	if err != nil {
		return nil, err
	}
	x := set.Extract
	if x == nil {
		return nil, nil
	}
	res, g, err := s.extract(ctx, x, doc, text)
	if err != nil {
		if derr := s.store.ReplaceDocumentGraph(context.WithoutCancel(ctx), c.ID, doc.ID, &rag.StoredGraph{}); derr != nil {
			return res, fmt.Errorf("%w (and removing the earlier version's graph: %v)", err, derr)
		}
		return res, err
	}
	if err := s.embedEntities(ctx, g.Entities); err != nil {
		return res, err
	}
	if err := s.store.ReplaceDocumentGraph(ctx, c.ID, doc.ID, g); err != nil {
		return res, err
	}
	return res, nil
}

// embedEntities embeds entities in the configured space.
func (s *Service) embedEntities(ctx context.Context, ents []rag.GraphEntity) error {
	if len(ents) == 0 {
		return nil
	}
	texts := make([]string, len(ents))
	for i, e := range ents {
		texts[i] = EntityText(e)
	}
	vecs, err := s.embedder.EmbedDocuments(ctx, texts)
	if err != nil {
		return err
	}
	if len(vecs) != len(texts) {
		return rag.Errorf(rag.CodeEmbeddingFailed, "the embedder returned %d vectors for %d entities", len(vecs), len(texts))
	}
	for i := range ents {
		ents[i].Vector, ents[i].Space = vecs[i], s.embedder.Space().ID()
	}
	return nil
}

// extracted is one answer of the model, as the schema of extractSchema asks.
type extracted struct {
	Entities []struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Type        string `json:"type"`
		Description string `json:"description"`
	} `json:"entities"`
	Relations []struct {
		Source      string `json:"source"`
		Target      string `json:"target"`
		Type        string `json:"type"`
		Description string `json:"description"`
	} `json:"relations"`
}

// extract asks the model about each part of text and builds the document's graph from the valid answers.
func (s *Service) extract(ctx context.Context, x *Extraction, doc *rag.Document, text string) (*ExtractResult, *rag.StoredGraph, error) {
	maxChars, maxCalls := orDefault(x.MaxChars, DefaultExtractChars), orDefault(x.MaxCalls, DefaultExtractCalls)
	parts := splitText(text, maxChars)
	res := &ExtractResult{Document: doc.ID}
	if len(parts) > maxCalls {
		parts, res.Truncated = parts[:maxCalls], true
	}
	sec := "doc/" + doc.ID
	title := strings.TrimSpace(doc.Title)
	if title == "" {
		title = doc.ExternalID
	}
	g := &rag.StoredGraph{Sections: []rag.GraphSection{{ID: sec, Name: title, Path: title, Level: "document"}}}
	byKey := map[string]int{} // normalised name + type → index in g.Entities
	seenRel := map[string]bool{}
	system := extractSystem(x)
	schema := extractSchema(x)
	for i, part := range parts {
		user := fmt.Sprintf("Document: %s\nPart %d of %d\n\n%s", title, i+1, len(parts), part)
		raw, err := s.completer.CompleteJSON(ctx, system, user, schema)
		res.Calls++
		if err != nil {
			return res, nil, err
		}
		var ans extracted
		if err := json.Unmarshal(raw, &ans); err != nil {
			return res, nil, rag.Errorf(rag.CodeLLMFailed, "the model's graph of part %d of %s is not JSON of the schema: %v", i+1, title, err)
		}
		local := map[string]string{} // the answer's ids → stored ids; "" for a dropped entity
		for _, e := range ans.Entities {
			name := strings.TrimSpace(e.Name)
			switch {
			case !slices.Contains(x.EntityTypes, e.Type):
				res.DroppedUnknownType++
				continue
			case name == "" || strings.TrimSpace(e.ID) == "":
				res.DroppedInvalid++
				continue
			}
			key := textproc.Normalize(name) + "\x00" + e.Type
			at, ok := byKey[key]
			if !ok {
				at = len(g.Entities)
				byKey[key] = at
				props := map[string]any{}
				if d := strings.TrimSpace(e.Description); d != "" {
					props["description"] = d
				}
				g.Entities = append(g.Entities, rag.GraphEntity{ID: fmt.Sprintf("%s/e%d", sec, at+1), Name: name, Type: e.Type,
					Properties: props, SourceSection: sec})
			} else if d := strings.TrimSpace(e.Description); d != "" && g.Entities[at].Properties["description"] == nil {
				g.Entities[at].Properties["description"] = d
			}
			local[e.ID] = g.Entities[at].ID
		}
		for _, r := range ans.Relations {
			src, tgt := local[r.Source], local[r.Target]
			switch {
			case !slices.Contains(x.RelationTypes, r.Type):
				res.DroppedUnknownType++
				continue
			case src == "" || tgt == "":
				res.DroppedDangling++
				continue
			case src == tgt:
				res.DroppedInvalid++
				continue
			}
			key := r.Type + "\x00" + src + "\x00" + tgt
			if seenRel[key] {
				continue
			}
			seenRel[key] = true
			rel := rag.GraphRelation{Source: src, Target: tgt, Type: r.Type}
			if d := strings.TrimSpace(r.Description); d != "" {
				rel.Properties = map[string]any{"context": d}
			}
			g.Relations = append(g.Relations, rel)
		}
		g.Chunks = append(g.Chunks, rag.GraphChunk{ID: fmt.Sprintf("%s#%d", sec, i+1), SectionID: sec, Content: part})
	}
	if len(g.Entities) == 0 {
		return res, &rag.StoredGraph{}, nil
	}
	for i, e := range g.Entities {
		g.Entities[i].TextHash = hashText(EntityText(e))
		g.Postings = append(g.Postings, postings(e)...)
	}
	res.Entities, res.Relations = len(g.Entities), len(g.Relations)
	return res, g, nil
}

// extractSystem is the model's instruction for an extraction.
func extractSystem(x *Extraction) string {
	var b strings.Builder
	b.WriteString("You build a knowledge graph from a part of a document. List the entities the text names, of these types only: ")
	b.WriteString(strings.Join(x.EntityTypes, ", "))
	b.WriteString(". Give each a short id unique in your answer (e1, e2, …), its name as the text writes it, its type, and a one-sentence description taken from the text.")
	if len(x.RelationTypes) > 0 {
		b.WriteString(" Then list the relations the text states between those entities, of these types only: ")
		b.WriteString(strings.Join(x.RelationTypes, ", "))
		b.WriteString(". A relation goes from its source to its target, both ids of your entities, with a short description from the text.")
	}
	b.WriteString(" Use only what the text says; an empty list is a fine answer. Write names and descriptions in the text's language.")
	if in := strings.TrimSpace(x.Instructions); in != "" {
		b.WriteString("\n\n")
		b.WriteString(in)
	}
	return b.String()
}

// extractSchema is the JSON schema of an extraction answer: entities and (with relation types) relations,
// their types as enums.
func extractSchema(x *Extraction) rag.JSONSchema {
	obj := func(props map[string]any) map[string]any {
		req := make([]any, 0, len(props))
		for _, k := range slices.Sorted(maps.Keys(props)) {
			req = append(req, k)
		}
		return map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}
	}
	str := map[string]any{"type": "string"}
	enum := func(vals []string) map[string]any {
		e := make([]any, len(vals))
		for i, v := range vals {
			e[i] = v
		}
		return map[string]any{"type": "string", "enum": e}
	}
	top := map[string]any{"entities": map[string]any{"type": "array", "items": obj(map[string]any{
		"id": str, "name": str, "type": enum(x.EntityTypes), "description": str})}}
	if len(x.RelationTypes) > 0 {
		top["relations"] = map[string]any{"type": "array", "items": obj(map[string]any{
			"source": str, "target": str, "type": enum(x.RelationTypes), "description": str})}
	}
	return rag.JSONSchema{Name: "knowledge_graph", Schema: obj(top)}
}

// splitText cuts text into parts of at most max characters, at paragraph ends where it can, else at line
// ends, else at spaces, else anywhere.
func splitText(text string, max int) []string {
	var parts []string
	text = strings.TrimSpace(text)
	for text != "" {
		if utf8.RuneCountInString(text) <= max {
			parts = append(parts, text)
			break
		}
		cut := len(string([]rune(text)[:max]))
		head := text[:cut]
		at := -1
		for _, sep := range []string{"\n\n", "\n", " "} {
			if i := strings.LastIndex(head, sep); i > cut/2 {
				at = i
				break
			}
		}
		if at < 0 {
			at = cut
		}
		parts = append(parts, strings.TrimSpace(text[:at]))
		text = strings.TrimSpace(text[at:])
	}
	return parts
}
