// Package audit keeps the append-only record of who accessed and changed what (docs/security.md "Audit
// log"): every search, chat, document read, download, upload, deletion and restore, grant, key creation or
// revocation and failed sign-in, with the principal, the target IDs (for answers: the documents whose
// passages were used), the time, the client address and the outcome.
//
// Recording never waits for the database: Record puts the event in a bounded buffer and a writer
// goroutine stores the buffer in batches, so a search pays a channel send. When the buffer is full (the
// database is slower than the traffic for longer than the buffer lasts) events are counted and the count
// is recorded as an "audit.dropped" event once there is room again; nothing blocks.
package audit

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// Actions recorded. Other code may record others (lowercase, dotted).
const (
	Search           = "search"
	Chat             = "chat"
	DocumentList     = "document.list"
	DocumentRead     = "document.read"
	DocumentDownload = "document.download"
	DocumentUpload   = "document.upload"
	DocumentUpdate   = "document.update"
	DocumentDelete   = "document.delete"
	DocumentRestore  = "document.restore"
	Grant            = "grant"
	KeyCreated       = "key.created"
	KeyRevoked       = "key.revoked"
	SourceAdded      = "source.added"
	SourceRemoved    = "source.removed"
	SourceSync       = "source.sync"
	WebhookAdded     = "webhook.added"
	WebhookRemoved   = "webhook.removed"
	WebhookPing      = "webhook.ping"
	KeyRotated       = "key.rotated" // data re-sealed under a new encryption key (ragd keys rotate-data)
	LoginFailure     = "login.failure"
	MemberChanged    = "team.member" // a user added to a team or its role changed
	MemberRemoved    = "team.member.removed"
	Dropped          = "audit.dropped"
)

// Outcomes.
const (
	OK     = "ok"
	Denied = "denied" // 401, 403
	Failed = "failed" // any other error
)

// Event is one record of the log.
type Event struct {
	ID        int64     `json:"id"`
	At        time.Time `json:"at"`
	Principal string    `json:"principal"`
	Action    string    `json:"action"`
	// Target is the object acted on (a document, collection, user or key ID; "" for a search).
	Target string `json:"target,omitempty"`
	// Documents are the documents the action read or changed; for search and chat, the documents whose
	// passages were returned or used in the answer.
	Documents []string `json:"documents,omitempty"`
	Client    string   `json:"client,omitempty"` // the client's address
	Outcome   string   `json:"outcome"`
	Status    int      `json:"status,omitempty"` // the HTTP status, for API requests
	Detail    string   `json:"detail,omitempty"` // e.g. the route, or the error code
}

// Query selects events, newest first: each non-zero field narrows it.
type Query struct {
	Principal string
	Action    string
	Target    string
	Document  string // events whose Documents hold this ID (or whose Target is it)
	Outcome   string
	Since     time.Time // At ≥ Since
	Until     time.Time // At < Until
	Limit     int       // 1–1000, default 100
	BeforeID  int64     // paging: events with ID < BeforeID (the last ID of the previous page)
}

// MaxLimit bounds Query.Limit.
const MaxLimit = 1000

// Size is the page size q asks for: Limit within 1–MaxLimit, 100 when unset.
func (q Query) Size() int {
	if q.Limit <= 0 {
		return 100
	}
	return min(q.Limit, MaxLimit)
}

// Store persists events. Both stores implement it and pass internal/store/storetest.
type Store interface {
	// AppendAudit stores events, assigning IDs in order.
	AppendAudit(ctx context.Context, events []Event) error
	// ListAudit returns the events q selects, newest (highest ID) first.
	ListAudit(ctx context.Context, q Query) ([]Event, error)
	// PruneAudit removes the events older than before and returns how many: the retention, the only
	// removal there is.
	PruneAudit(ctx context.Context, before time.Time) (int, error)
}

// Options tune a Log.
type Options struct {
	// Buffer is how many events wait for the writer at most (default 4096).
	Buffer int
	// Batch is how many events one write stores at most (default 256).
	Batch int
	// Delay is how long the writer gathers events after the first of a batch before it writes them
	// (default 250ms): one transaction per batch rather than per request keeps the database's writes out of
	// the way of searches.
	Delay time.Duration
	// Clock stamps events that have no time (default time.Now).
	Clock func() time.Time
	// Logger reports failed writes (default: discard).
	Logger *slog.Logger
}

// Log records events asynchronously into a Store. Start it with Run; a nil *Log records nothing.
type Log struct {
	store   Store
	opt     Options
	ch      chan Event
	dropped atomic.Int64
	done    chan struct{}
}

// New returns a Log writing to store.
func New(store Store, opt Options) *Log {
	if opt.Buffer <= 0 {
		opt.Buffer = 4096
	}
	if opt.Batch <= 0 {
		opt.Batch = 256
	}
	if opt.Clock == nil {
		opt.Clock = time.Now
	}
	if opt.Delay <= 0 {
		opt.Delay = 250 * time.Millisecond
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	return &Log{store: store, opt: opt, ch: make(chan Event, opt.Buffer), done: make(chan struct{})}
}

// Record queues e without waiting; it stamps At when zero. When the buffer is full the event is counted
// as dropped (see the package comment).
func (l *Log) Record(e Event) {
	if l == nil {
		return
	}
	if e.At.IsZero() {
		e.At = l.opt.Clock()
	}
	select {
	case l.ch <- e:
	default:
		l.dropped.Add(1)
	}
}

// Dropped is how many events the full buffer has refused since the Log started.
func (l *Log) Dropped() int64 { return l.dropped.Load() }

// Run writes queued events until ctx ends, then writes what is still queued (with a bounded wait) and
// returns. Close waits for it.
func (l *Log) Run(ctx context.Context) {
	defer close(l.done)
	reported := int64(0)
	batch := make([]Event, 0, l.opt.Batch)
	write := func() {
		if d := l.dropped.Load(); d > reported {
			batch = append(batch, Event{At: l.opt.Clock(), Principal: "system", Action: Dropped, Outcome: Failed,
				Detail: "audit buffer full: events not recorded since the last report", Status: int(d - reported)})
			reported = d
		}
		if len(batch) == 0 {
			return
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := l.store.AppendAudit(wctx, batch); err != nil {
			l.opt.Logger.Error("audit: events not stored", slog.Int("events", len(batch)), slog.Any("err", err))
		}
		batch = batch[:0]
	}
	for {
		select {
		case e := <-l.ch:
			batch = append(batch, e)
			// Gather what else comes within Delay, up to a batch, before writing.
			timer := time.NewTimer(l.opt.Delay)
		gather:
			for len(batch) < l.opt.Batch {
				select {
				case e := <-l.ch:
					batch = append(batch, e)
				case <-timer.C:
					break gather
				case <-ctx.Done():
					break gather
				}
			}
			timer.Stop()
			write()
		case <-ctx.Done():
			for {
				select {
				case e := <-l.ch:
					batch = append(batch, e)
					if len(batch) == l.opt.Batch {
						write()
					}
					continue
				default:
				}
				write()
				return
			}
		}
	}
}

// Wait blocks until Run has returned (after its context ended).
func (l *Log) Wait() {
	if l != nil {
		<-l.done
	}
}

// defaultLog is the process's log for Record (SetDefault).
var defaultLog atomic.Pointer[Log]

// SetDefault makes l the log that Record writes to (nil: none).
func SetDefault(l *Log) { defaultLog.Store(l) }

// Record queues an event in the process's log (SetDefault) without waiting; with none set it does
// nothing. Code outside the HTTP layer — key creation and revocation, failed sign-ins — records through it.
func Record(_ context.Context, e Event) { defaultLog.Load().Record(e) }
