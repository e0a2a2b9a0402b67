package rag

import (
	"context"
	"time"
)

// Store persists collections, documents, their versions, chunks, vectors and raw uploads, and answers the
// candidate queries of retrieval. Two implementations exist (internal/store/sqlite, internal/store/postgres)
// and both pass internal/store/storetest; a behaviour difference between them is a bug.
//
// Visibility: every method that takes a Principal only sees documents where
// p.Admin OR document.owner = p.ID OR (document.readers ∪ document.writers) ∩ p.Readers() ≠ ∅
// OR the document's collection is visible to p (Collection.Visibility, docs/security.md),
// and applies that predicate (and any Filter) inside its query. Invisible documents are ErrNotFound.
//
// Errors: ErrNotFound and ErrConflict (test with errors.Is); a failure of the database itself is an *Error
// with CodeDBError; invalid arguments are *Error with CodeInvalid.
// StoreSizer is implemented by stores that report their size in bytes (ragd_store_size_bytes in /metrics):
// the embedded database's pages, or the PostgreSQL schema's tables with their indexes. Errors: CodeDBError.
type StoreSizer interface {
	StoreSize(ctx context.Context) (int64, error)
}

type Store interface {
	// CreateCollection stores c, assigning ID (when empty) and timestamps. ErrConflict if the name exists.
	CreateCollection(ctx context.Context, c *Collection) error
	// GetCollection returns the collection with that ID or, failing that, that name. ErrNotFound.
	GetCollection(ctx context.Context, idOrName string) (*Collection, error)
	// EnsureCollection returns the collection named name, creating it (owned by owner) if it does not exist.
	// Safe under concurrent callers.
	EnsureCollection(ctx context.Context, name, owner string) (*Collection, error)
	// UpdateCollection replaces the description, settings and profile of the collection with c.ID and sets
	// c.UpdatedAt. ErrNotFound.
	UpdateCollection(ctx context.Context, c *Collection) error
	// ListCollections returns all collections ordered by name.
	ListCollections(ctx context.Context) ([]*Collection, error)

	// CreateDocument stores a new document (normally status queued with PendingHash set), assigning ID when
	// empty and timestamps. ErrConflict if the collection already has a document with that ExternalID;
	// ErrNotFound if the collection does not exist.
	CreateDocument(ctx context.Context, d *Document) error
	// GetDocument returns a visible document. ErrNotFound.
	GetDocument(ctx context.Context, p Principal, id string) (*Document, error)
	// FindDocument returns the visible document of a collection with that external ID. ErrNotFound.
	FindDocument(ctx context.Context, p Principal, collectionID, externalID string) (*Document, error)
	// ListDocuments returns a page of visible documents matching q, newest (created) first.
	ListDocuments(ctx context.Context, p Principal, q DocumentQuery) (*DocumentPage, error)
	// DocumentsByStatus returns documents in any of statuses regardless of visibility (for start-up
	// re-queueing and workers), oldest first, at most limit (100 when limit ≤ 0).
	DocumentsByStatus(ctx context.Context, statuses []Status, limit int) ([]*Document, error)
	// PendingDocuments returns documents that have a version waiting to be processed (PendingHash set),
	// whatever their status (a ready document keeps its status while its next version waits), regardless
	// of visibility, oldest first, at most limit (100 when limit ≤ 0). Start-up reconciliation re-queues them.
	PendingDocuments(ctx context.Context, limit int) ([]*Document, error)
	// UpdateDocument changes the descriptive fields of a visible document (nil fields are left alone)
	// without making a version. ErrNotFound.
	UpdateDocument(ctx context.Context, p Principal, id string, u DocumentUpdate) (*Document, error)
	// SetDocumentState records processing state (status, stage, progress, error, pending hash). ErrNotFound;
	// ErrConflict when st.IfPending is set and the document's pending hash is something else.
	SetDocumentState(ctx context.Context, id string, st DocumentState) error
	// CommitVersion atomically makes c the document's current version: in one transaction it records a
	// DocumentVersion, replaces all chunks, vectors and keyword entries of the document with c.Chunks, and
	// marks the document ready (version+1, stage done, progress 1, error cleared, pending hash cleared when
	// it equals c.ContentHash). Readers never see a mix of old and new chunks. Every chunk must carry a vector
	// of c.Space's dimension (CodeInvalid otherwise, and nothing changes). Returns the new version number.
	CommitVersion(ctx context.Context, c *VersionCommit) (int, error)
	// DeleteDocument removes a visible document at once and for good, with its chunks, vectors, versions and
	// unreferenced blobs (users' deletions go through TrashDocument). ErrNotFound.
	DeleteDocument(ctx context.Context, p Principal, id string) error
	// TrashDocument deletes a visible document the way users delete: at once it is hidden from every query
	// (its chunks, vectors, keyword and document-index entries are removed, it leaves listings and lookups,
	// and its external ID is free for a new document) and marked deleted (DeletedAt); its record, version
	// records and blobs stay until PurgeDocuments removes them, and RestoreDocument can bring it back
	// meanwhile. Returns the document as deleted. ErrNotFound.
	TrashDocument(ctx context.Context, p Principal, id string) (*Document, error)
	// RestoreDocument brings back a visible deleted document: it is live again with its external ID, and
	// queued for re-indexing (PendingHash is the version it was waiting for, else its current content), so
	// the caller schedules its processing. Committing the current content again keeps the version number.
	// ErrNotFound (also for a live document); ErrConflict when a new document took its external ID meanwhile.
	RestoreDocument(ctx context.Context, p Principal, id string) (*Document, error)
	// PurgeDocuments removes for good up to limit (100 when ≤ 0) documents deleted before before, oldest
	// first, with their version records, the blobs no remaining document or version refers to, their
	// feedback and the source references of Q&A answers to them. It returns their IDs.
	PurgeDocuments(ctx context.Context, before time.Time, limit int) ([]string, error)
	// ListChunks returns the current chunks of a visible document in order (without vectors). ErrNotFound.
	ListChunks(ctx context.Context, p Principal, documentID string) ([]*Chunk, error)
	// ListVersions returns the version records of a visible document, newest first. ErrNotFound.
	ListVersions(ctx context.Context, p Principal, documentID string) ([]*DocumentVersion, error)
	// DocumentHistory returns the last limit (1..MaxHistory) changes of state of a visible document, oldest
	// first. ErrNotFound.
	DocumentHistory(ctx context.Context, p Principal, documentID string, limit int) ([]*DocumentEvent, error)

	// PutBlob stores raw bytes under their sha256 hex hash (idempotent).
	PutBlob(ctx context.Context, hash string, data []byte) error
	// GetBlob returns the bytes stored under hash. ErrNotFound.
	GetBlob(ctx context.Context, hash string) ([]byte, error)
	// DocumentBlob returns a stored original or extracted text of a document as p reads it: the blob hash
	// when it is the document's current original or an original or text of one of its versions and p sees
	// the (live) document, decided inside the query (and under PostgreSQL's row-level security).
	// ErrNotFound otherwise, as for a blob that does not exist.
	DocumentBlob(ctx context.Context, p Principal, documentID, hash string) ([]byte, error)

	// VectorCandidates returns up to q.K chunks of visible documents matching q.Filter whose vectors in
	// q.Space are nearest to q.Vector by cosine similarity (Score), best first, Rank 1-based.
	VectorCandidates(ctx context.Context, p Principal, q VectorQuery) ([]Candidate, error)
	// KeywordCandidates returns up to q.K chunks of visible documents matching q.Filter that contain any of
	// q.Terms, ranked by BM25 over the analyzer's terms (Score > 0, higher is better), Rank 1-based.
	KeywordCandidates(ctx context.Context, p Principal, q KeywordQuery) ([]Candidate, error)
	// DocumentCandidates returns up to q.K visible documents matching q.Filter whose naming fields — title,
	// file name, metadata values and opening lines (textproc.DocumentText) — contain any of q.Terms, ranked by
	// BM25 over those fields across documents (Score > 0, higher is better), Rank 1-based.
	DocumentCandidates(ctx context.Context, p Principal, q KeywordQuery) ([]DocumentCandidate, error)
	// KeywordScores returns the BM25 score of the chunks with those IDs for terms, each term's share of a
	// chunk's score multiplied by its weight (weights[i] for terms[i]; all 1 when weights is nil), with the
	// corpus figures and formula of KeywordCandidates (chunk ID → score; chunks holding none of the terms
	// absent). It re-scores a known candidate pool for a reweighted or expanded query without a search. The
	// IDs come from candidate queries that applied the visibility predicate; on PostgreSQL the read runs as p
	// under row-level security. CodeInvalid when weights is not nil and not as long as terms.
	KeywordScores(ctx context.Context, p Principal, terms []string, weights []float64, ids []int64) (map[int64]float64, error)
	// VectorScores returns the cosine similarity to vector of the chunks with those IDs that have a vector in
	// space (chunk ID → score; others absent). It re-scores a known candidate pool without a full search.
	// The IDs come from candidate queries that applied the visibility predicate; on PostgreSQL the read runs
	// as p under row-level security (docs/security.md).
	VectorScores(ctx context.Context, p Principal, space Space, vector []float32, ids []int64) (map[int64]float64, error)
	// Hits returns the chunks with those IDs and their documents' facts, in the order of ids, with scores
	// zero. IDs that no longer exist, or whose documents p does not see, are skipped.
	Hits(ctx context.Context, p Principal, ids []int64) ([]Hit, error)

	// ChunksWithoutVector returns up to limit current chunks (with IDs > afterID, ascending) that have no
	// vector in space: the work list of a background re-embed.
	ChunksWithoutVector(ctx context.Context, space Space, afterID int64, limit int) ([]*Chunk, error)
	// PutVectors stores vectors in space for existing chunks (chunk ID → vector); vectors of chunks that
	// were deleted meanwhile are ignored. CodeInvalid on a dimension mismatch.
	PutVectors(ctx context.Context, space Space, vectors map[int64][]float32) error
	// DropSpace removes every vector of space and its cached embeddings, to reclaim the room an old
	// embedder's vectors take after a switch; the space leaves SpaceStats. It returns how many vectors it
	// removed (0 for a space the store does not have). Callers keep the configured space (see reembed).
	DropSpace(ctx context.Context, space Space) (int, error)
	// SpaceStats counts, per space, how many current chunks have a vector in it, and the total chunk count.
	SpaceStats(ctx context.Context) (*SpaceStats, error)

	// CachedEmbeddings returns the cached vectors of space for the given text hashes (missing ones absent).
	CachedEmbeddings(ctx context.Context, space Space, textHashes []string) (map[string][]float32, error)
	// CacheEmbeddings stores vectors of space by text hash (idempotent).
	CacheEmbeddings(ctx context.Context, space Space, vectors map[string][]float32) error

	// Ping checks that the store is reachable and its migrations are applied.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// DocumentUpdate holds the descriptive fields of a document that can change without a new version.
type DocumentUpdate struct {
	Title    *string
	Metadata map[string]any // replaces the metadata when non-nil
	Tags     []string       // replaces the tags when non-nil
	Readers  []string       // replaces the readers when non-nil
	Writers  []string       // replaces the writers when non-nil
}

// VersionCommit is a processed document version ready to replace the current one.
type VersionCommit struct {
	DocumentID  string
	ContentHash string
	Title       string
	Source      string
	MediaType   string
	Size        int64
	Space       Space
	Chunks      []Chunk // Index, Text, spans and Vector set; IDs are assigned by the store
	// Text is the version's extracted text (its blocks joined by blank lines), kept as a blob beside the
	// original and named by the version record's TextHash; "" keeps none.
	Text string
	// Warning is recorded as the document's error while it is ready: what of this version could not be
	// read (pages OCR failed on); "" for none.
	Warning string
}

// SpaceStats describes the embedding spaces present in a store.
type SpaceStats struct {
	Chunks int            `json:"chunks"`
	Spaces map[string]int `json:"spaces"` // space ID → chunks with a vector in it
}

// Clock returns the current time; stores and services take one so tests can fix time.
type Clock func() time.Time

// SealedStore is a store that encrypts documents' contents at rest (blobs and chunk texts, with the keys of
// internal/sealing given when it opens). Both stores implement it and pass internal/store/storetest.
type SealedStore interface {
	// DataKeyIDs returns the IDs of the keys that sealed stored data ("" for data stored in the clear).
	DataKeyIDs(ctx context.Context) ([]string, error)
	// RekeyData re-seals up to limit blobs and up to limit chunk texts that are not under the current key
	// (into the clear when the store has none) and returns how many it changed; 0 means done.
	RekeyData(ctx context.Context, limit int) (int, error)
}
