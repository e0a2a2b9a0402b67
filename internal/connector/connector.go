// Package connector defines sources: places outside ragd (a folder, a web site, a Git repository, a Notion
// workspace, a Google Drive) whose items a collection keeps in sync. A kind implements Source; the sync engine
// (which stores sources, schedules them and records their state) turns a Listing into ingests, updates and
// soft deletes, so a kind never touches the store.
package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
)

// Item is one document at a source.
type Item struct {
	// ID identifies the item within its source for as long as it exists there: a path relative to the folder,
	// a URL, a Notion page ID, a Drive file ID, a path in the repository. It becomes the document's external ID,
	// so the same item is always the same document.
	ID string
	// Name is the file name; its extension selects the extractor (a Notion page exported as Markdown is
	// "Title.md", a Google Doc exported as HTML "Title.html").
	Name string
	// Title is the document's title; "" means the title found in the content, or Name.
	Title string
	// Source is where a user finds the item (an absolute path, a URL); it is stored as the document's source.
	Source string
	// Version is the source's change marker (modification time and size, ETag, blob hash, last-edited time).
	// An item whose Version equals the one recorded at the last successful sync is unchanged and not fetched.
	// "" means the source cannot tell: the item is fetched and its content hash decides.
	Version string
	// Metadata is stored with the document (e.g. the commit, the Notion parent); nil for none.
	Metadata map[string]any
}

// Listing is what a source reports in one sync.
type Listing struct {
	// Full says Items is everything at the source now: an item synced earlier and missing from Items is gone.
	// When Full is false, Items are the items new or changed since the cursor and Deleted names those gone.
	Full    bool
	Items   []Item
	Deleted []string
	// Moved maps an old item ID to its new ID where the source knows an item moved (a file renamed in the
	// folder, a rename in a commit): the document keeps its identity and history under the new ID.
	Moved map[string]string
	// Cursor is recorded after a successful sync and passed to the next List (a commit hash, a Drive page
	// token, a time). "" on the first sync.
	Cursor string
}

// Source is one configured source of one kind.
type Source interface {
	// List reports the source's items since cursor ("" for a first, full listing). An error fails the whole
	// sync and leaves the recorded state as it was; wrap ErrUnauthorized when credentials are refused or
	// expired, so the engine pauses the source with that reason instead of retrying.
	List(ctx context.Context, cursor string) (Listing, error)
	// Fetch returns an item's bytes, at most Config.MaxBytes (more is an error for that item alone). An error
	// fails that item alone; the engine records it and retries the item at the next sync.
	Fetch(ctx context.Context, it Item) ([]byte, error)
}

// Watcher is implemented by a source that can tell when it changed (a folder under fsnotify). Watch blocks
// until ctx ends, calling changed (which must not block) whenever a sync would find something new; the engine
// debounces the calls. A source without it is synced on its schedule and on request only.
type Watcher interface {
	Watch(ctx context.Context, changed func()) error
}

// ErrUnauthorized is wrapped by a source's error when its credentials are refused or have expired.
var ErrUnauthorized = errors.New("source credentials refused")

// Config is what a kind's constructor gets.
type Config struct {
	// Settings is the source's settings as given by the user (kind-specific JSON object).
	Settings json.RawMessage
	// Credentials is the source's secret (a token, a service-account JSON), decrypted; nil when none.
	Credentials []byte
	// HTTP is the client every network request of the source must use: it applies ragd's SSRF rules (no
	// loopback, link-local or private addresses unless the operator allowed them) and time limits.
	HTTP *http.Client
	// MaxBytes bounds one item (the server's upload limit).
	MaxBytes int64
}

// Factory validates a source's settings and returns the source. A settings error is returned as is, to be
// shown to the user with the invalid code; Factory makes no network request.
type Factory func(Config) (Source, error)

// Kinds maps a kind name ("folder", "web", "git", "notion", "gdrive") to its factory.
type Kinds map[string]Factory

// New builds a source of the named kind.
func (k Kinds) New(kind string, c Config) (Source, error) {
	f, ok := k[kind]
	if !ok {
		return nil, fmt.Errorf("unknown source kind %q (known: %v)", kind, k.Names())
	}
	return f(c)
}

// Names lists the kinds, sorted.
func (k Kinds) Names() []string {
	names := make([]string, 0, len(k))
	for n := range k {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
