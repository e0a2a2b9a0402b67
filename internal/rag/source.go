package rag

import (
	"context"
	"encoding/json"
	"time"
)

// SyncSource is a place outside ragd whose items a collection keeps in sync (docs/connectors.md): a folder, a
// web site, a Git repository, a Notion workspace, a Google Drive. Its kind (internal/connector) reads it; the
// sync engine (internal/sources) records what it found here.
type SyncSource struct {
	ID           string `json:"id"`
	CollectionID string `json:"collection_id"`
	Kind         string `json:"kind"`
	// Settings is the kind's settings as the user gave them (a JSON object, credentials left out).
	Settings json.RawMessage `json:"settings"`
	// HasCredentials says a secret is stored; the secret itself is never returned (SyncStore.SourceCredentials).
	HasCredentials bool `json:"has_credentials"`
	// Schedule is the cron expression of the full syncs ("@hourly", "0 3 * * *"); "" syncs on request and
	// on change only.
	Schedule string `json:"schedule"`
	// Owner is the principal that added the source; its documents are owned by it.
	Owner     string    `json:"owner"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	State     SyncState `json:"state"`
}

// SyncState is what the last syncs of a source did.
type SyncState struct {
	// Cursor is the kind's position after the last successful sync (connector.Listing.Cursor).
	Cursor string `json:"-"`
	// LastRunAt is when the last sync ended (nil: never); LastSuccessAt when the last successful one did.
	LastRunAt     *time.Time `json:"last_run_at,omitempty"`
	LastSuccessAt *time.Time `json:"last_success_at,omitempty"`
	// The counts of the last successful sync.
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Deleted   int `json:"deleted"`
	Unchanged int `json:"unchanged"`
	Failed    int `json:"failed"`
	// LastError is why the last sync failed as a whole ("" when it succeeded; items' failures are on the
	// items). Failures counts the whole-sync failures in a row.
	LastError string `json:"last_error,omitempty"`
	Failures  int    `json:"failures"`
	// Paused stops scheduled and watched syncs, for PauseReason; a sync on request still runs and, when it
	// succeeds, resumes the source.
	Paused      bool   `json:"paused"`
	PauseReason string `json:"pause_reason,omitempty"`
	// Running says a sync holds the source's lease now (until LeaseUntil).
	Running bool `json:"running"`
}

// SyncItem is what the engine knows of one item of a source: the document it became.
type SyncItem struct {
	SourceID string `json:"-"`
	// ItemID is the item's ID at the source (the document's external ID).
	ItemID     string `json:"item_id"`
	DocumentID string `json:"document_id,omitempty"`
	// Version is the source's change marker at the last successful fetch; ContentHash the sha256 of the
	// bytes then.
	Version     string `json:"version,omitempty"`
	ContentHash string `json:"content_hash,omitempty"`
	// Error is why the item's last fetch or submit failed ("" when it did not); Attempts counts the failed
	// tries in a row.
	Error     string    `json:"error,omitempty"`
	Attempts  int       `json:"attempts"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SyncStore keeps sources, their sync state and their items (both stores implement it and pass
// internal/store/storetest). Errors: ErrNotFound for an unknown source or collection; CodeDBError.
type SyncStore interface {
	// CreateSource stores s (ID, timestamps assigned) with its credentials (nil: none), sealed with the
	// store's data key when it has one. ErrNotFound when s.CollectionID does not exist.
	CreateSource(ctx context.Context, s *SyncSource, credentials []byte) error
	// GetSource returns a source with its state. ErrNotFound.
	GetSource(ctx context.Context, id string) (*SyncSource, error)
	// ListSources returns the sources of a collection ("" for every collection), oldest first.
	ListSources(ctx context.Context, collectionID string) ([]*SyncSource, error)
	// DeleteSource removes a source and its items' records (not its documents). ErrNotFound.
	DeleteSource(ctx context.Context, id string) error
	// SourceCredentials returns a source's credentials in the clear (nil: none). ErrNotFound.
	SourceCredentials(ctx context.Context, id string) ([]byte, error)
	// ClaimSource takes (or, for the same holder, extends) the source's sync lease until until. It reports
	// false when another holder's lease has not expired: one sync per source at a time, across processes.
	// ErrNotFound.
	ClaimSource(ctx context.Context, id, holder string, until time.Time) (bool, error)
	// ReleaseSource records st as the source's state and gives up holder's lease. ErrConflict when holder
	// no longer holds it (it expired and another took it): nothing is recorded then. ErrNotFound.
	ReleaseSource(ctx context.Context, id, holder string, st SyncState) error
	// SourceItems returns a source's item records, by item ID.
	SourceItems(ctx context.Context, sourceID string) ([]*SyncItem, error)
	// PutSourceItem creates or replaces the record of it.ItemID, setting UpdatedAt.
	PutSourceItem(ctx context.Context, it *SyncItem) error
	// DeleteSourceItem removes an item's record (none is fine).
	DeleteSourceItem(ctx context.Context, sourceID, itemID string) error
	// MoveSourceItem renames item from to to, and in the same transaction gives its document the external
	// ID to and the source given: the document keeps its ID, versions and chunks. ErrNotFound when from has
	// no record; ErrConflict when to has one, or the collection has another document with external ID to.
	MoveSourceItem(ctx context.Context, sourceID, from, to, source string) error
}
