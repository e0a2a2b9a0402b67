package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// Store is what the graph service needs of a store.
type Store interface {
	rag.GraphStore
	GetCollection(ctx context.Context, idOrName string) (*rag.Collection, error)
}

// Service imports graphs and record tables into collections and retrieves graph context from them.
type Service struct {
	store    Store
	embedder rag.Embedder
	settings SettingsFunc
	// completer extracts graphs from documents (UseCompleter); nil: no extraction.
	completer rag.JSONCompleter

	mu sync.Mutex
	// vectors caches the entity vectors of a collection in the embedding space, under the graph's
	// generation (a re-import, in any process, makes a new one). Graph rows have no per-principal visibility
	// yet; when they get one (issue 13) the key must include what the principal may see.
	vectors map[string]cachedVectors
}

type cachedVectors struct {
	generation int64
	entities   []rag.GraphEntity
}

// maxCachedGraphs bounds the vector cache (collections with a graph are few).
const maxCachedGraphs = 64

// SettingsFunc returns the graph settings of a collection: its profile's (profile.GraphSettings).
type SettingsFunc func(c *rag.Collection) (Settings, error)

// New returns a Service over store that embeds entities with embedder (the configured embedding space) and
// reads each collection's settings with settings.
func New(store Store, embedder rag.Embedder, settings SettingsFunc) *Service {
	return &Service{store: store, embedder: embedder, settings: settings, vectors: map[string]cachedVectors{}}
}

// Settings returns the graph settings of a collection, defaults filled in.
func (s *Service) Settings(c *rag.Collection) (Settings, error) {
	set, err := s.settings(c)
	if err != nil {
		return Settings{}, err
	}
	return set.WithDefaults(), nil
}

// entityVectors returns the collection's entity vectors in the configured space, from the cache while the
// graph's generation is the same.
func (s *Service) entityVectors(ctx context.Context, p rag.Principal, collectionID string, generation int64) ([]rag.GraphEntity, error) {
	key := collectionID + "\x00" + s.embedder.Space().ID()
	s.mu.Lock()
	c, ok := s.vectors[key]
	s.mu.Unlock()
	if ok && c.generation == generation {
		return c.entities, nil
	}
	vecs, err := s.store.GraphVectors(ctx, p, collectionID, s.embedder.Space())
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.vectors) >= maxCachedGraphs {
		clear(s.vectors)
	}
	s.vectors[key] = cachedVectors{generation: generation, entities: vecs}
	s.mu.Unlock()
	return vecs, nil
}

// Counts are the added, updated, removed and unchanged rows of one kind.
type Counts struct {
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Removed   int `json:"removed"`
	Unchanged int `json:"unchanged"`
}

// ImportResult says what a graph import changed.
type ImportResult struct {
	Collection string `json:"collection"`
	Sections   Counts `json:"sections"`
	Entities   Counts `json:"entities"`
	Relations  Counts `json:"relations"`
	Chunks     Counts `json:"chunks"`
	// Embedded is how many entities were embedded (new or changed text, or a new embedding space).
	Embedded int    `json:"embedded"`
	Space    string `json:"space"`
	// Changed is false when the bundle equals the collection's graph: nothing was written.
	Changed bool `json:"changed"`
}

// Name and description weights of an entity's keyword terms: a question that names an entity matches it
// more than one that shares a word of its description.
const (
	nameWeight        = 3
	descriptionWeight = 1
)

// EntityText is the text an entity is embedded from: its name, aliases, type and description.
func EntityText(e rag.GraphEntity) string {
	parts := []string{e.Name}
	parts = append(parts, aliases(e)...)
	parts = append(parts, e.Type)
	if d, ok := e.Properties["description"].(string); ok {
		parts = append(parts, d)
	}
	return strings.Join(parts, "\n")
}

// aliases are the strings of an entity's "aliases" property.
func aliases(e rag.GraphEntity) []string {
	var out []string
	switch v := e.Properties["aliases"].(type) {
	case []any:
		for _, a := range v {
			if s, ok := a.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
	case string:
		if strings.TrimSpace(v) != "" {
			out = append(out, v)
		}
	}
	return out
}

// postings are the keyword terms of an entity with their weights.
func postings(e rag.GraphEntity) []rag.GraphPosting {
	w := map[string]float64{}
	for _, t := range textproc.IndexTerms(strings.Join(append([]string{e.Name}, aliases(e)...), "\n")) {
		w[t] += nameWeight
	}
	if d, ok := e.Properties["description"].(string); ok {
		for _, t := range textproc.IndexTerms(d) {
			w[t] += descriptionWeight
		}
	}
	out := make([]rag.GraphPosting, 0, len(w))
	for t, v := range w {
		out = append(out, rag.GraphPosting{EntityID: e.ID, Term: t, Weight: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Term < out[j].Term })
	return out
}

func hashText(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Import makes b the graph of the collection named collection (which must exist): entities, relations,
// sections and passages that b lacks disappear, changed ones take b's values. Entities are embedded in the
// configured space, only those whose text changed or that have no vector in it. An import that changes
// nothing writes nothing.
func (s *Service) Import(ctx context.Context, collection string, b *Bundle) (*ImportResult, error) {
	c, err := s.store.GetCollection(ctx, collection)
	if err != nil {
		return nil, err
	}
	whole, err := s.load(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	old, _ := splitGraph(whole)
	space := s.embedder.Space()
	res := &ImportResult{Collection: c.Name, Space: space.ID()}
	prev := map[string]rag.GraphEntity{}
	for _, e := range old.Entities {
		prev[e.ID] = e
	}
	next := &rag.StoredGraph{Sections: b.Sections, Relations: b.Relations, Chunks: b.Chunks}
	var toEmbed []int
	var texts []string
	for _, e := range b.Entities {
		text := EntityText(e)
		e.TextHash = hashText(text)
		if p, ok := prev[e.ID]; ok && p.TextHash == e.TextHash && p.Space == space.ID() && p.Vector != nil {
			e.Space, e.Vector = p.Space, p.Vector
		} else {
			toEmbed = append(toEmbed, len(next.Entities))
			texts = append(texts, text)
		}
		next.Entities = append(next.Entities, e)
		next.Postings = append(next.Postings, postings(e)...)
	}
	res.Sections = diff(old.Sections, next.Sections, func(s rag.GraphSection) string { return s.ID })
	res.Entities = diff(old.Entities, next.Entities, func(e rag.GraphEntity) string { return e.ID })
	res.Relations = diff(old.Relations, next.Relations, func(r rag.GraphRelation) string { return r.Type + "\x00" + r.Source + "\x00" + r.Target })
	res.Chunks = diff(old.Chunks, next.Chunks, func(c rag.GraphChunk) string { return c.ID })
	res.Changed = len(toEmbed) > 0 || !sameOrder(old, next) ||
		changed(res.Sections) || changed(res.Entities) || changed(res.Relations) || changed(res.Chunks)
	if !res.Changed {
		return res, nil
	}
	if len(texts) > 0 {
		vecs, err := s.embedder.EmbedDocuments(ctx, texts)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(texts) {
			return nil, rag.Errorf(rag.CodeEmbeddingFailed, "the embedder returned %d vectors for %d entities", len(vecs), len(texts))
		}
		for i, at := range toEmbed {
			next.Entities[at].Vector, next.Entities[at].Space = vecs[i], space.ID()
		}
		res.Embedded = len(texts)
	}
	if err := s.store.ReplaceGraph(ctx, c.ID, next); err != nil {
		return nil, err
	}
	return res, nil
}

func changed(c Counts) bool { return c.Added+c.Updated+c.Removed > 0 }

// diff counts rows of next that are new, changed or the same as in old (by key), and rows of old gone.
func diff[T any](old, next []T, key func(T) string) Counts {
	var c Counts
	before := map[string]T{}
	for _, o := range old {
		before[key(o)] = o
	}
	for _, n := range next {
		o, ok := before[key(n)]
		switch {
		case !ok:
			c.Added++
		case sameJSON(o, n):
			c.Unchanged++
		default:
			c.Updated++
		}
		delete(before, key(n))
	}
	c.Removed = len(before)
	return c
}

// sameJSON compares two rows as JSON (maps read back from a store and parsed from a bundle differ in Go
// types, not in value).
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var u, v any
	if json.Unmarshal(x, &u) != nil || json.Unmarshal(y, &v) != nil {
		return false
	}
	return reflect.DeepEqual(u, v)
}

// sameOrder reports whether the rows come in the same order (answers list facts in bundle order).
func sameOrder(a, b *rag.StoredGraph) bool {
	if len(a.Entities) != len(b.Entities) || len(a.Relations) != len(b.Relations) || len(a.Sections) != len(b.Sections) || len(a.Chunks) != len(b.Chunks) {
		return false
	}
	for i := range a.Entities {
		if a.Entities[i].ID != b.Entities[i].ID {
			return false
		}
	}
	for i := range a.Relations {
		if a.Relations[i].Source != b.Relations[i].Source || a.Relations[i].Target != b.Relations[i].Target || a.Relations[i].Type != b.Relations[i].Type {
			return false
		}
	}
	for i := range a.Sections {
		if a.Sections[i].ID != b.Sections[i].ID {
			return false
		}
	}
	for i := range a.Chunks {
		if a.Chunks[i].ID != b.Chunks[i].ID {
			return false
		}
	}
	return true
}

// load reads the collection's whole graph, entities with their vectors in the configured space.
func (s *Service) load(ctx context.Context, collectionID string) (*rag.StoredGraph, error) {
	p := rag.LocalPrincipal
	g := &rag.StoredGraph{}
	var err error
	if g.Sections, err = s.store.GraphSections(ctx, p, collectionID, nil); err != nil {
		return nil, err
	}
	if g.Entities, err = s.store.GraphEntities(ctx, p, collectionID, nil); err != nil {
		return nil, err
	}
	if g.Relations, err = s.store.GraphEdges(ctx, p, collectionID, nil); err != nil {
		return nil, err
	}
	if g.Chunks, err = s.store.GraphChunks(ctx, p, collectionID, nil); err != nil {
		return nil, err
	}
	if g.Postings, _, err = s.store.GraphPostings(ctx, p, collectionID, nil); err != nil {
		return nil, err
	}
	vecs, err := s.store.GraphVectors(ctx, p, collectionID, s.embedder.Space())
	if err != nil {
		return nil, err
	}
	byID := make(map[string][]float32, len(vecs))
	for _, v := range vecs {
		byID[v.ID] = v.Vector
	}
	for i := range g.Entities {
		g.Entities[i].Vector = byID[g.Entities[i].ID]
	}
	return g, nil
}

// splitGraph splits a stored graph into its bundle's rows and the rows each document contributed, by
// document, entities with their postings.
func splitGraph(g *rag.StoredGraph) (bundle *rag.StoredGraph, docs map[string]*rag.StoredGraph) {
	bundle, docs = &rag.StoredGraph{}, map[string]*rag.StoredGraph{}
	of := func(doc string) *rag.StoredGraph {
		if doc == "" {
			return bundle
		}
		if docs[doc] == nil {
			docs[doc] = &rag.StoredGraph{}
		}
		return docs[doc]
	}
	entityDoc := map[string]string{}
	for _, x := range g.Sections {
		of(x.DocumentID).Sections = append(of(x.DocumentID).Sections, x)
	}
	for _, x := range g.Entities {
		entityDoc[x.ID] = x.DocumentID
		of(x.DocumentID).Entities = append(of(x.DocumentID).Entities, x)
	}
	for _, x := range g.Relations {
		of(x.DocumentID).Relations = append(of(x.DocumentID).Relations, x)
	}
	for _, x := range g.Chunks {
		of(x.DocumentID).Chunks = append(of(x.DocumentID).Chunks, x)
	}
	for _, x := range g.Postings {
		of(entityDoc[x.EntityID]).Postings = append(of(entityDoc[x.EntityID]).Postings, x)
	}
	return bundle, docs
}

// Stats returns what the collection's graph holds, as p sees it.
func (s *Service) Stats(ctx context.Context, p rag.Principal, collection string) (*rag.GraphStats, error) {
	c, err := s.store.GetCollection(ctx, collection)
	if err != nil {
		return nil, err
	}
	return s.store.GraphStats(ctx, p, c.ID)
}

// errorf is a CodeInvalid error.
func errorf(format string, args ...any) error { return rag.Errorf(rag.CodeInvalid, format, args...) }

// Collections lists the collections (rag.Store implements it).
type Collections interface {
	ListCollections(ctx context.Context) ([]*rag.Collection, error)
}

// Reembed embeds, in the configured space, the entities of every collection's graph that have no vector
// in it (after a change of embedder), the way the background re-embed does for chunks. It returns how many
// entities it embedded.
func (s *Service) Reembed(ctx context.Context, cs Collections) (int, error) {
	list, err := cs.ListCollections(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, c := range list {
		st, err := s.store.GraphStats(ctx, rag.LocalPrincipal, c.ID)
		if err != nil {
			return total, err
		}
		if st.Entities == 0 {
			continue
		}
		vecs, err := s.entityVectors(ctx, rag.LocalPrincipal, c.ID, st.Generation)
		if err != nil {
			return total, err
		}
		if len(vecs) == st.Entities {
			continue
		}
		whole, err := s.load(ctx, c.ID)
		if err != nil {
			return total, err
		}
		g, docs := splitGraph(whole)
		res, err := s.Import(ctx, c.ID, &Bundle{Sections: g.Sections, Entities: g.Entities, Relations: g.Relations, Chunks: g.Chunks})
		if err != nil {
			return total, fmt.Errorf("re-embed the graph of collection %s: %w", c.Name, err)
		}
		total += res.Embedded
		// The graphs extracted from documents: embedded again whole, document by document.
		for _, doc := range slices.Sorted(maps.Keys(docs)) {
			dg := docs[doc]
			if !slices.ContainsFunc(dg.Entities, func(e rag.GraphEntity) bool { return e.Vector == nil }) {
				continue
			}
			if err := s.embedEntities(ctx, dg.Entities); err != nil {
				return total, fmt.Errorf("re-embed the graph of document %s: %w", doc, err)
			}
			if err := s.store.ReplaceDocumentGraph(ctx, c.ID, doc, dg); err != nil {
				return total, err
			}
			total += len(dg.Entities)
		}
	}
	return total, nil
}
