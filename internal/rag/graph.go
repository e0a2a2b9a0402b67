package rag

import (
	"context"
	"time"
)

// A collection's knowledge graph (docs/graph.md): a section hierarchy, entities with typed properties,
// directed relations between entities, the source passages of the sections, and record tables (rows of typed
// columns keyed by an entity name, e.g. a unit-price table). A graph bundle is imported as a whole: it is the
// collection's graph, replacing the previous one.

// GraphSection is one node of a collection's section hierarchy (e.g. 부문 > 장 > 절).
type GraphSection struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	ParentID string `json:"parent_id,omitempty"`
	// Path is the names from the root, joined by " > ".
	Path  string `json:"path"`
	Level string `json:"level,omitempty"`
	// DocumentID is the document the row was extracted from ("" for a bundle's rows); not part of a bundle.
	DocumentID string `json:"-"`
}

// GraphEntity is a node of the graph. SourceSection is the section whose text states it.
type GraphEntity struct {
	ID            string         `json:"id"`
	Name          string         `json:"name"`
	Type          string         `json:"type"`
	Properties    map[string]any `json:"properties,omitempty"`
	SourceSection string         `json:"source_section,omitempty"`
	// TextHash is the sha256 of the text the entity was embedded from, Space the space of Vector; a
	// re-import re-embeds only entities whose text or space changed. Not part of a bundle.
	TextHash string    `json:"-"`
	Space    string    `json:"-"`
	Vector   []float32 `json:"-"`
	// DocumentID is the document the entity was extracted from ("" for a bundle's entities).
	DocumentID string `json:"-"`
}

// GraphRelation is a directed, typed edge between two entities, with properties such as a quantity and
// unit or an order.
type GraphRelation struct {
	Source     string         `json:"source"`
	Target     string         `json:"target"`
	Type       string         `json:"type"`
	Properties map[string]any `json:"properties,omitempty"`
	// DocumentID is the document the relation was extracted from ("" for a bundle's relations).
	DocumentID string `json:"-"`
}

// GraphChunk is a source passage of a section.
type GraphChunk struct {
	ID        string `json:"id"`
	SectionID string `json:"section_id"`
	Content   string `json:"content"`
	// DocumentID is the document the passage was taken from ("" for a bundle's passages).
	DocumentID string `json:"-"`
}

// GraphPosting says that Term is a keyword term of an entity, with a weight (how often, and in which field:
// the name counts more than the description).
type GraphPosting struct {
	EntityID string  `json:"entity_id"`
	Term     string  `json:"term"`
	Weight   float64 `json:"weight"`
}

// StoredGraph is a collection's whole graph as a store keeps it, in bundle order.
type StoredGraph struct {
	Sections  []GraphSection
	Entities  []GraphEntity
	Relations []GraphRelation
	Chunks    []GraphChunk
	Postings  []GraphPosting
}

// GraphStats counts what a collection's graph holds. Tables maps a record table's name to its row count.
type GraphStats struct {
	// Generation counts the replacements of the graph (0: never imported); what is derived from a graph
	// can be cached under it.
	Generation int64          `json:"generation"`
	Sections   int            `json:"sections"`
	Entities   int            `json:"entities"`
	Relations  int            `json:"relations"`
	Chunks     int            `json:"chunks"`
	Tables     map[string]int `json:"tables"`
	// Extracted counts the entities extracted from the collection's documents (among Entities).
	Extracted int `json:"extracted_entities"`
}

// OnlyExtracted reports whether everything the graph holds was extracted from documents: no bundle, no
// record table.
func (s *GraphStats) OnlyExtracted() bool {
	return s.Extracted > 0 && s.Extracted == s.Entities && len(s.Tables) == 0
}

// Empty reports whether the collection has neither a graph nor a record table.
func (s *GraphStats) Empty() bool { return s.Entities == 0 && len(s.Tables) == 0 }

// Record is one row of a record table: Key links it to an entity name (NormKey is its normalised form, what
// lookups compare), Variant is its variant (e.g. a spec), Values its typed columns by name.
type Record struct {
	Key     string         `json:"key"`
	NormKey string         `json:"-"`
	Variant string         `json:"variant"`
	Values  map[string]any `json:"values"`
}

// DocumentGraphOrd is where the order of the graph rows extracted from documents starts: after every
// bundle row (a bundle file holds at most 200,000), inside a 32-bit integer.
const DocumentGraphOrd = 1 << 30

// GraphStore keeps collections' graphs and record tables (both stores implement it; internal/store/storetest
// checks them). Every read takes the principal and the collection and restricts its rows inside the query, the
// way chunk retrieval applies visibility and filters: the graph of a collection is read only through it.
//
// Errors: CodeInvalid for invalid arguments (a vector of the wrong dimension), CodeDBError for the database.
type GraphStore interface {
	// ReplaceGraph makes g the collection's imported graph (its bundle) in one transaction: bundle rows that
	// g lacks disappear, the others take g's values; rows extracted from documents stay. Readers never see a
	// mix. ErrNotFound when the collection does not exist.
	ReplaceGraph(ctx context.Context, collectionID string, g *StoredGraph) error
	// ReplaceDocumentGraph makes g what document documentID contributes to the collection's graph, in one
	// transaction: the rows it contributed before disappear (an empty g only removes them). Its rows come
	// after the bundle's in order (DocumentGraphOrd). A document that is not live in the collection (deleted
	// while its graph was extracted) contributes nothing, and deleting a document (TrashDocument) removes its
	// rows. Both bump the generation. ErrNotFound when the collection does not exist.
	ReplaceDocumentGraph(ctx context.Context, collectionID, documentID string, g *StoredGraph) error
	// GraphStats counts the collection's graph and record tables, as p sees them (nothing of a collection p
	// does not see whole: zero counts).
	GraphStats(ctx context.Context, p Principal, collectionID string) (*GraphStats, error)
	// GraphVectors returns the entities of the collection that have a vector in space (ID, Name, Type,
	// Vector set), in bundle order.
	GraphVectors(ctx context.Context, p Principal, collectionID string, space Space) ([]GraphEntity, error)
	// GraphPostings returns the postings of terms in the collection (all of them for nil terms), and how many
	// entities it has.
	GraphPostings(ctx context.Context, p Principal, collectionID string, terms []string) ([]GraphPosting, int, error)
	// GraphEntities returns the entities with those IDs (all of them for nil ids), with their text hashes and
	// spaces but without vectors, in bundle order.
	GraphEntities(ctx context.Context, p Principal, collectionID string, ids []string) ([]GraphEntity, error)
	// GraphEdges returns the relations with either endpoint in ids (all of them for nil ids), in bundle order.
	GraphEdges(ctx context.Context, p Principal, collectionID string, ids []string) ([]GraphRelation, error)
	// GraphSections returns the sections with those IDs (all of them for nil ids), in bundle order.
	GraphSections(ctx context.Context, p Principal, collectionID string, ids []string) ([]GraphSection, error)
	// GraphChunks returns the passages of those sections (all of them for nil sectionIDs), in bundle order.
	GraphChunks(ctx context.Context, p Principal, collectionID string, sectionIDs []string) ([]GraphChunk, error)
	// ReplaceRecords makes rows the record table's rows (in order) in one transaction; no rows drops the
	// table. ErrNotFound when the collection does not exist.
	ReplaceRecords(ctx context.Context, collectionID, table string, rows []Record) error
	// Records returns the rows of a record table whose NormKey is one of keys (all of them for nil keys), in
	// table order.
	Records(ctx context.Context, p Principal, collectionID, table string, keys []string) ([]Record, error)
}

// CollectionState is what changes when a collection's content changes, as one principal sees it: how many
// live documents it has, when the last of them was last updated (created, given a new version, changed or
// restored), and its graph's generation. The answer cache compares it with the state its answer was made
// in.
type CollectionState struct {
	Documents       int
	LastUpdate      time.Time // zero when the collection has no document
	GraphGeneration int64
}

// CollectionStateStore reads a collection's state in one query (both stores implement it). The collection
// is named by ID or name; an unknown one has the zero state.
type CollectionStateStore interface {
	CollectionState(ctx context.Context, p Principal, collection string) (CollectionState, error)
}
