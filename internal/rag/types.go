package rag

import (
	"encoding/json"
	"time"
)

// Principal is who is asking. Every store call that reads documents takes one and applies the visibility
// predicate (see Store) inside its query.
type Principal struct {
	// ID identifies the user or API key, e.g. "local", "key:3f2a…", "user:alice".
	ID string
	// Groups are the teams the principal belongs to; a document or collection granted to "team:<name>" (or,
	// the older spelling, "group:<name>") is visible to members.
	Groups []string
	// Admin sees every document and may do everything.
	Admin bool
	// Scopes are what the principal's API key allows (see Allows); admins need none.
	Scopes []Scope
}

// LocalPrincipal is the single user of an installation without API keys or users: the CLI and an open server.
var LocalPrincipal = Principal{ID: "local", Admin: true}

// Readers returns the grant entries that name p: its ID, its teams as "team:<g>" and "group:<g>", and
// Everyone.
func (p Principal) Readers() []string {
	out := make([]string, 0, 2*len(p.Groups)+2)
	out = append(out, p.ID, Everyone)
	for _, g := range p.Groups {
		out = append(out, TeamPrefix+g, "group:"+g)
	}
	return out
}

// Names returns the owner entries that name p: its ID and its teams as "team:<g>".
func (p Principal) Names() []string {
	out := make([]string, 0, len(p.Groups)+1)
	out = append(out, p.ID)
	for _, g := range p.Groups {
		out = append(out, TeamPrefix+g)
	}
	return out
}

// Everyone is the reader entry that makes a document visible to every principal.
const Everyone = "*"

// DefaultCollection is the name of the collection documents go to when none is given.
const DefaultCollection = "default"

// Collection groups documents. Every document belongs to exactly one collection.
type Collection struct {
	ID          string `json:"id"`
	Name        string `json:"name"` // unique
	Description string `json:"description,omitempty"`
	Owner       string `json:"owner"`
	// Visibility says who besides the owner reads the collection's documents (VisibilityPrivate when
	// empty); see docs/security.md.
	Visibility Visibility     `json:"visibility"`
	Settings   map[string]any `json:"settings,omitempty"` // e.g. "metadata_types"; see package profile
	// Profile is the collection's profile (package profile) as stored, JSON; empty when none was applied.
	// Stores keep it opaque: package profile decodes, validates and defaults it.
	Profile   json.RawMessage `json:"profile,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// Status is the lifecycle state of a document.
type Status string

// Document statuses. A document's chunks are only replaced when a version commits, so a document that is
// queued or processing a new version still serves its previous ready version.
const (
	StatusQueued     Status = "queued"
	StatusProcessing Status = "processing"
	StatusReady      Status = "ready"
	StatusFailed     Status = "failed"
)

// Stage is the ingestion stage a processing document is in.
type Stage string

// Ingestion stages in order.
const (
	StageQueued  Stage = "queued"
	StageExtract Stage = "extract"
	StageChunk   Stage = "chunk"
	StageEmbed   Stage = "embed"
	StageIndex   Stage = "index"
	StageDone    Stage = "done"
)

// Document is one logical document: the current (ready) version's facts plus the state of any work on it.
type Document struct {
	ID           string `json:"id"`
	CollectionID string `json:"collection_id"`
	// ExternalID is the caller's key for the document, unique within a collection: a file path for
	// `ragd ingest`, a file name for uploads, a corpus id for `ragd eval`. Re-ingesting the same key with the
	// same content is a no-op; with new content it is a new version.
	ExternalID string `json:"external_id"`
	Title      string `json:"title"`
	Source     string `json:"source"`     // where it came from (path, file name, URL)
	MediaType  string `json:"media_type"` // e.g. application/pdf, text/markdown
	// ContentHash is the sha256 (hex) of the raw bytes of the current ready version ("" before the first).
	ContentHash string `json:"content_hash"`
	// PendingHash is the sha256 of raw bytes waiting to be (or being) processed as the next version; the
	// bytes are in the store's blobs under that hash. "" when nothing is pending.
	PendingHash string `json:"pending_hash,omitempty"`
	// FailedHash is the sha256 of the raw bytes whose processing failed last (they stay in the blobs), so
	// that a retry can process them again; "" when none.
	FailedHash string         `json:"failed_hash,omitempty"`
	Version    int            `json:"version"` // 0 until the first version commits
	Size       int64          `json:"size"`    // bytes of the current version
	Status     Status         `json:"status"`
	Stage      Stage          `json:"stage"`
	Progress   float64        `json:"progress"` // 0..1 within the current work
	ErrorCode  Code           `json:"error_code,omitempty"`
	Error      string         `json:"error,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Tags       []string       `json:"tags,omitempty"`
	Owner      string         `json:"owner"`
	// Readers lists who may read the document besides its owner, admins and those its collection's
	// visibility admits: principal IDs, "team:<g>" (or "group:<g>"), or Everyone.
	Readers []string `json:"readers,omitempty"`
	// Writers lists who may also change it (and read it): principal IDs and "team:<g>".
	Writers    []string  `json:"writers,omitempty"`
	ChunkCount int       `json:"chunk_count"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	// DeletedAt is when the document was deleted (Store.TrashDocument); nil for a live document.
	DeletedAt *time.Time `json:"deleted_at,omitempty"`
}

// DocumentVersion is the record of one committed version of a document. Records are kept after a newer
// version replaces the chunks.
type DocumentVersion struct {
	DocumentID  string         `json:"document_id"`
	Version     int            `json:"version"`
	ContentHash string         `json:"content_hash"`
	Title       string         `json:"title"`
	Source      string         `json:"source"`
	MediaType   string         `json:"media_type"`
	Size        int64          `json:"size"`
	ChunkCount  int            `json:"chunk_count"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	CreatedAt   time.Time      `json:"created_at"`
	// TextHash names the blob of the version's extracted text ("" for versions committed before ragd kept
	// it).
	TextHash string `json:"text_hash,omitempty"`
}

// Statuses of a DocumentEvent besides the document statuses: the document went to the trash, or came back.
const (
	EventDeleted  Status = "deleted"
	EventRestored Status = "restored"
)

// DocumentEvent is one change of a document's state as the store recorded it (Store.DocumentHistory): a new
// status or stage (progress alone is none), a committed version, a move to or from the trash.
type DocumentEvent struct {
	At        time.Time `json:"at"`
	Status    Status    `json:"status"` // a document status, EventDeleted or EventRestored
	Stage     Stage     `json:"stage"`
	Version   int       `json:"version"` // the version the change is about: the pending one while one is pending
	ErrorCode Code      `json:"error_code,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// MaxHistory is the most events Store.DocumentHistory returns at once.
const MaxHistory = 1000

// DocumentState is the mutable processing state of a document (see Store.SetDocumentState).
type DocumentState struct {
	Status      Status
	Stage       Stage
	Progress    float64
	ErrorCode   Code
	Error       string
	PendingHash *string // when non-nil, replaces Document.PendingHash
	FailedHash  *string // when non-nil, replaces Document.FailedHash
	// IfPending, when not empty, makes the write conditional: it happens only while the document's pending
	// hash equals IfPending, and is otherwise refused with ErrConflict (the version being processed was
	// superseded by a newer upload or already committed by another attempt).
	IfPending string
}

// ChunkKind says what a chunk holds.
type ChunkKind string

// Chunk kinds.
const (
	KindText  ChunkKind = "text"
	KindTable ChunkKind = "table"
	KindCode  ChunkKind = "code"
)

// PageBreak is where a chunk's text turns to another page (Chunk.PageBreaks).
type PageBreak struct {
	Offset int `json:"offset"` // rune offset in the chunk's text
	Page   int `json:"page"`
}

// Chunk is a retrievable passage of a document version.
type Chunk struct {
	ID         int64     `json:"id"` // assigned by the store
	DocumentID string    `json:"document_id"`
	Version    int       `json:"version"`
	Index      int       `json:"index"` // 0-based position in the document
	Kind       ChunkKind `json:"kind"`
	Text       string    `json:"text"`
	PageStart  int       `json:"page_start"` // 1-based; 0 when the format has no pages
	PageEnd    int       `json:"page_end"`
	// Section is the heading path, outermost first, joined by " > ".
	Section string `json:"section,omitempty"`
	// StartOffset and EndOffset are character (rune) offsets of the chunk's span in the document's extracted
	// text (the concatenation of its blocks separated by blank lines). A table chunk that repeats its header
	// covers the rows' span.
	StartOffset int `json:"start_offset"`
	EndOffset   int `json:"end_offset"`
	// OCR marks a chunk whose text (some of it) was read from page images by OCR; OCRConfidence is the
	// lowest confidence of the OCR engine in those pages, 0 to 1.
	OCR           bool    `json:"ocr,omitempty"`
	OCRConfidence float64 `json:"ocr_confidence,omitempty"`
	// PageBreaks say, for a chunk that crosses pages, where in Text each page's part starts: the first at
	// offset 0, then one at every sentence on another page than the one before it. Empty for a chunk on
	// one page (or on none).
	PageBreaks []PageBreak `json:"page_breaks,omitempty"`
	// Vector is the chunk's embedding in the space of the commit; not filled when reading chunks back.
	Vector []float32 `json:"-"`
}
