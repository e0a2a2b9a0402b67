// Package sources is the sync engine of connectors (docs/connectors.md): it stores a collection's sources
// (rag.SyncStore), runs their syncs — a kind's Listing (internal/connector) becomes ingests of new and
// changed items, moves and soft deletes — one at a time per source across processes, on schedule (the
// "sources.sync" periodic job), on request and, for kinds that watch (a folder), on change.
package sources

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// Store is what the engine keeps and changes: sources and their items, collections, and documents (to
// delete those gone at their source).
type Store interface {
	rag.SyncStore
	GetCollection(ctx context.Context, idOrName string) (*rag.Collection, error)
	TrashDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error)
}

// Submitter records an item's bytes as a queued document version (*ingest.Pipeline).
type Submitter interface {
	Submit(ctx context.Context, p rag.Principal, req ingest.Request) (*rag.Document, ingest.Outcome, error)
}

// Processor has a submitted version processed: the job runner's EnqueueIngest in a server, the pipeline's
// Process itself in a command that runs one sync.
type Processor func(ctx context.Context, documentID, contentHash string) error

// Options configure a Service.
type Options struct {
	// Kinds builds a source's reader from its kind and settings.
	Kinds connector.Kinds
	// HTTP is given to every kind (connector.Config.HTTP): the SSRF-guarded client.
	HTTP *http.Client
	// MaxBytes bounds one item (the upload limit; default rag.DefaultMaxUploadBytes).
	MaxBytes int64
	// MaxFailures is how many whole-sync failures in a row pause a source (default 5).
	MaxFailures int
	// MaxItemAttempts is how many failed tries of an unchanged item are retried (default 5); a changed
	// item is always tried again.
	MaxItemAttempts int
	// Lease is how long a sync holds its source before another process may take it over (default 10m);
	// a running sync renews it every third of that.
	Lease time.Duration
	// Debounce is how long a watched source must be quiet after a change before it syncs (default 1s).
	Debounce time.Duration
	// Refresh is how often Watch looks for added and removed sources (default 10s).
	Refresh time.Duration
	// DefaultSchedule is the schedule of a source added without one (default "@hourly").
	DefaultSchedule string
	Logger          *slog.Logger
	// Now is the clock of schedules and state (default time.Now).
	Now func() time.Time
}

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = rag.DefaultMaxUploadBytes
	}
	if o.MaxFailures <= 0 {
		o.MaxFailures = 5
	}
	if o.MaxItemAttempts <= 0 {
		o.MaxItemAttempts = 5
	}
	if o.Lease <= 0 {
		o.Lease = 10 * time.Minute
	}
	if o.Debounce <= 0 {
		o.Debounce = time.Second
	}
	if o.Refresh <= 0 {
		o.Refresh = 10 * time.Second
	}
	if o.DefaultSchedule == "" {
		o.DefaultSchedule = "@hourly"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Service adds, removes and syncs sources.
type Service struct {
	store   Store
	submit  Submitter
	process Processor
	opt     Options
	holder  string // this process's name in sync leases
	watch   *watchSet

	// base bounds the syncs started in the background (SyncSoon); Close ends them.
	base context.Context
	stop context.CancelFunc
	back sync.WaitGroup
}

// New returns a Service.
func New(store Store, submit Submitter, process Processor, opt Options) *Service {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	host, _ := os.Hostname()
	base, stop := context.WithCancel(context.Background())
	return &Service{base: base, stop: stop, store: store, submit: submit, process: process, opt: opt.WithDefaults(),
		holder: fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b)),
		watch:  &watchSet{refresh: make(chan struct{}, 1), running: map[string]context.CancelFunc{}}}
}

// Close stops the syncs running in the background and waits for them to record their state.
func (s *Service) Close() error {
	s.stop()
	s.back.Wait()
	return nil
}

// Kinds lists the kinds this Service can sync.
func (s *Service) Kinds() []string { return s.opt.Kinds.Names() }

// Reserved fields of a source's description: the rest are the kind's settings.
const (
	fieldKind        = "kind"
	fieldSchedule    = "schedule"
	fieldCredentials = "credentials"
)

// MaxSettingsBytes bounds a source's settings.
const MaxSettingsBytes = 16 * 1024

// AddRequest describes a new source: the kind's settings and, in the same JSON object, "kind", an optional
// "schedule" and optional "credentials" (a string, or a JSON object such as a service-account key).
type AddRequest struct {
	// Collection is the collection's ID or name; it must exist.
	Collection string
	// Spec is the source's JSON object.
	Spec json.RawMessage
	// Owner is the principal that adds the source: its documents are owned by it.
	Owner string
}

// Add validates a source (its kind's factory checks the settings, without a network request) and stores
// it. Errors: CodeInvalid for a bad description, settings or schedule; ErrNotFound for the collection.
func (s *Service) Add(ctx context.Context, req AddRequest) (*rag.SyncSource, error) {
	if len(req.Spec) > MaxSettingsBytes {
		return nil, rag.Errorf(rag.CodeInvalid, "a source's description is %d bytes, over the limit of %d", len(req.Spec), MaxSettingsBytes)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(req.Spec, &fields); err != nil || fields == nil {
		return nil, rag.Errorf(rag.CodeInvalid, "a source is a JSON object with its kind and settings")
	}
	var kind string
	if err := json.Unmarshal(fields[fieldKind], &kind); err != nil || kind == "" {
		return nil, rag.Errorf(rag.CodeInvalid, "a source needs a kind (%s)", strings.Join(s.opt.Kinds.Names(), ", "))
	}
	if _, ok := s.opt.Kinds[kind]; !ok {
		return nil, rag.Errorf(rag.CodeInvalid, "unknown source kind %q (known: %s)", kind, strings.Join(s.opt.Kinds.Names(), ", "))
	}
	schedule := s.opt.DefaultSchedule
	if raw, ok := fields[fieldSchedule]; ok {
		if err := json.Unmarshal(raw, &schedule); err != nil {
			return nil, rag.Errorf(rag.CodeInvalid, "schedule is a cron expression (\"@hourly\", \"0 3 * * *\") or \"\"")
		}
		schedule = strings.TrimSpace(schedule)
	}
	if _, err := ParseSchedule(schedule); err != nil {
		return nil, err
	}
	creds, err := credentials(fields[fieldCredentials])
	if err != nil {
		return nil, err
	}
	delete(fields, fieldKind)
	delete(fields, fieldSchedule)
	delete(fields, fieldCredentials)
	settings, err := json.Marshal(fields)
	if err != nil {
		return nil, rag.WrapError(rag.CodeInvalid, err, "settings")
	}
	if _, err := s.opt.Kinds.New(kind, s.config(settings, creds)); err != nil {
		return nil, rag.WrapError(rag.CodeInvalid, err, "%s source: %s", kind, err.Error())
	}
	coll, err := s.store.GetCollection(ctx, req.Collection)
	if err != nil {
		return nil, err
	}
	src := &rag.SyncSource{CollectionID: coll.ID, Kind: kind, Settings: settings, Schedule: schedule, Owner: req.Owner}
	if err := s.store.CreateSource(ctx, src, creds); err != nil {
		return nil, err
	}
	s.opt.Logger.Info("source added", slog.String("source", src.ID), slog.String("kind", kind), slog.String("collection", coll.Name))
	s.refreshWatches()
	return src, nil
}

// credentials reads the "credentials" field: a string's bytes, an object's JSON; absent or null is none.
func credentials(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		if str == "" {
			return nil, nil
		}
		return []byte(str), nil
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, rag.Errorf(rag.CodeInvalid, "credentials are a string (a token) or a JSON object (a service-account key)")
	}
	return raw, nil
}

// ParseSchedule reads a source's schedule: a standard five-field cron expression or a descriptor
// (@hourly, @daily, @weekly, @every 30m); "" is none (nil). CodeInvalid otherwise.
func ParseSchedule(spec string) (cron.Schedule, error) {
	if spec == "" {
		return nil, nil
	}
	sch, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, rag.Errorf(rag.CodeInvalid, "schedule %q: %v", spec, err)
	}
	return sch, nil
}

func (s *Service) config(settings json.RawMessage, creds []byte) connector.Config {
	return connector.Config{Settings: settings, Credentials: creds, HTTP: s.opt.HTTP, MaxBytes: s.opt.MaxBytes}
}

// Get returns a source of a collection (ID or name). ErrNotFound, also for a source of another collection.
func (s *Service) Get(ctx context.Context, collection, id string) (*rag.SyncSource, error) {
	coll, err := s.store.GetCollection(ctx, collection)
	if err != nil {
		return nil, err
	}
	src, err := s.store.GetSource(ctx, id)
	if err != nil {
		return nil, err
	}
	if src.CollectionID != coll.ID {
		return nil, fmt.Errorf("source %q of collection %q: %w", id, collection, rag.ErrNotFound)
	}
	return src, nil
}

// List returns a collection's sources ("" for every collection's).
func (s *Service) List(ctx context.Context, collection string) ([]*rag.SyncSource, error) {
	if collection == "" {
		return s.store.ListSources(ctx, "")
	}
	coll, err := s.store.GetCollection(ctx, collection)
	if err != nil {
		return nil, err
	}
	return s.store.ListSources(ctx, coll.ID)
}

// Items returns the item records of a source.
func (s *Service) Items(ctx context.Context, id string) ([]*rag.SyncItem, error) {
	return s.store.SourceItems(ctx, id)
}

// Remove deletes a source of a collection. Its documents stay (delete them as any document).
func (s *Service) Remove(ctx context.Context, collection, id string) error {
	if _, err := s.Get(ctx, collection, id); err != nil {
		return err
	}
	if err := s.store.DeleteSource(ctx, id); err != nil {
		return err
	}
	s.opt.Logger.Info("source removed", slog.String("source", id))
	s.refreshWatches()
	return nil
}

// Trigger says why a sync runs.
type Trigger string

// Triggers.
const (
	TriggerRequest  Trigger = "request"  // ragd sources sync, POST …/sync: runs even when paused, and resumes
	TriggerSchedule Trigger = "schedule" // the source's cron schedule
	TriggerWatch    Trigger = "watch"    // a change the kind's watcher saw
)

// ErrBusy is returned by Sync when another sync of the source holds its lease.
var ErrBusy = errors.New("a sync of this source is running")

// Sync runs one sync of a source now and returns the source with its new state. A failure of the whole
// sync is recorded on the source (and returned); items' failures are recorded on the items. A paused
// source syncs only on request. Errors: ErrBusy; ErrNotFound.
func (s *Service) Sync(ctx context.Context, id string, trigger Trigger) (*rag.SyncSource, error) {
	now := s.opt.Now()
	ok, err := s.store.ClaimSource(ctx, id, s.holder, now.Add(s.opt.Lease))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrBusy
	}
	src, err := s.store.GetSource(ctx, id)
	if err != nil {
		return nil, errors.Join(err, s.release(ctx, id, nil))
	}
	if src.State.Paused && trigger != TriggerRequest {
		return src, s.release(ctx, id, &src.State)
	}
	// The lease is renewed while the sync runs; if it cannot be, the sync stops rather than overlap another.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(s.opt.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if ok, err := s.store.ClaimSource(ctx, id, s.holder, s.opt.Now().Add(s.opt.Lease)); err == nil && !ok {
					cancel(errors.New("the source's sync lease was taken over"))
					return
				}
			}
		}
	}()
	st, runErr := s.run(ctx, src, trigger)
	cancel(nil)
	<-renewed
	if err := s.release(ctx, id, &st); err != nil {
		return nil, errors.Join(runErr, err)
	}
	out, err := s.store.GetSource(context.WithoutCancel(ctx), id)
	if err != nil {
		return nil, errors.Join(runErr, err)
	}
	return out, runErr
}

// release records st (nil: the state as it is) and gives up the lease; the write outlives ctx.
func (s *Service) release(ctx context.Context, id string, st *rag.SyncState) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if st == nil {
		src, err := s.store.GetSource(wctx, id)
		if err != nil {
			return err
		}
		st = &src.State
	}
	return s.store.ReleaseSource(wctx, id, s.holder, *st)
}

// run does a sync and returns the state to record.
func (s *Service) run(ctx context.Context, src *rag.SyncSource, trigger Trigger) (rag.SyncState, error) {
	log := s.opt.Logger.With(slog.String("source", src.ID), slog.String("kind", src.Kind), slog.String("trigger", string(trigger)))
	st := src.State
	now := s.opt.Now().UTC().Truncate(time.Microsecond)
	st.LastRunAt = &now
	res, err := s.syncOnce(ctx, src, log)
	if err != nil && ctx.Err() != nil {
		// Interrupted (shutdown, or the lease was lost), not failed: the state stays as it was.
		log.Info("source sync interrupted", slog.Any("cause", context.Cause(ctx)))
		return src.State, err
	}
	if err != nil {
		st.Failures++
		st.LastError = message(err)
		switch {
		case errors.Is(err, connector.ErrUnauthorized):
			st.Paused, st.PauseReason = true, "credentials refused: "+message(err)
		case st.Failures >= s.opt.MaxFailures:
			st.Paused, st.PauseReason = true, fmt.Sprintf("%d syncs in a row failed; the last: %s", st.Failures, st.LastError)
		}
		log.Warn("source sync failed", slog.Int("failures", st.Failures), slog.Bool("paused", st.Paused), slog.Any("err", err))
		return st, err
	}
	st.Cursor = res.cursor
	st.Added, st.Updated, st.Deleted, st.Unchanged, st.Failed = res.added, res.updated, res.deleted, res.unchanged, res.failed
	st.LastError, st.Failures, st.Paused, st.PauseReason = "", 0, false, ""
	st.LastSuccessAt = &now
	log.Info("source synced", slog.Int("added", res.added), slog.Int("updated", res.updated), slog.Int("deleted", res.deleted),
		slog.Int("unchanged", res.unchanged), slog.Int("failed", res.failed), slog.Int("moved", res.moved))
	return st, nil
}

// result counts what a sync did.
type result struct {
	cursor                                            string
	added, updated, deleted, unchanged, failed, moved int
}

// syncOnce lists the source and applies the listing. An error is a failure of the whole sync.
func (s *Service) syncOnce(ctx context.Context, src *rag.SyncSource, log *slog.Logger) (result, error) {
	var res result
	coll, err := s.store.GetCollection(ctx, src.CollectionID)
	if err != nil {
		return res, err
	}
	creds, err := s.store.SourceCredentials(ctx, src.ID)
	if err != nil {
		return res, err
	}
	reader, err := s.opt.Kinds.New(src.Kind, s.config(src.Settings, creds))
	if err != nil {
		return res, rag.WrapError(rag.CodeInvalid, err, "%s source: %s", src.Kind, err.Error())
	}
	listing, err := reader.List(ctx, src.State.Cursor)
	if err != nil {
		return res, err
	}
	records, err := s.store.SourceItems(ctx, src.ID)
	if err != nil {
		return res, err
	}
	known := make(map[string]*rag.SyncItem, len(records))
	for _, r := range records {
		known[r.ItemID] = r
	}
	present := make(map[string]connector.Item, len(listing.Items))
	for _, it := range listing.Items {
		present[it.ID] = it
	}
	a := &applier{s: s, src: src, coll: coll, reader: reader, known: known, log: log, res: &res,
		principal: rag.Principal{ID: "source:" + src.ID, Admin: true}}

	// Moves the kind reported keep their documents.
	for from, to := range listing.Moved {
		if err := a.move(ctx, from, to, present[to].Source); err != nil {
			return res, err
		}
	}
	// Items gone: those deleted since the cursor, or, for a full listing, every known item not listed.
	var gone []string
	if listing.Full {
		for id := range known {
			if _, ok := present[id]; !ok {
				gone = append(gone, id)
			}
		}
	} else {
		for _, id := range listing.Deleted {
			if _, ok := known[id]; ok {
				gone = append(gone, id)
			}
		}
	}
	// A new item with the content of a gone one is that item moved (a kind that cannot tell moves, or a
	// file copied then deleted): matched by content hash, the document keeps its identity.
	byHash := map[string]string{}
	for _, id := range gone {
		if r := known[id]; r.ContentHash != "" && r.DocumentID != "" {
			byHash[r.ContentHash] = id
		}
	}
	for _, it := range listing.Items {
		if err := ctx.Err(); err != nil {
			return res, context.Cause(ctx)
		}
		if err := a.item(ctx, it, byHash); err != nil {
			return res, err
		}
	}
	for _, id := range gone {
		if _, moved := a.movedAway[id]; moved {
			continue
		}
		if err := a.remove(ctx, id); err != nil {
			return res, err
		}
	}
	res.cursor = listing.Cursor
	if !listing.Full && a.retry {
		// An incremental kind lists an item only when it changes after the cursor: moving the cursor past
		// an item that failed would leave it unsynced until its next change. The old cursor lists it (and
		// what synced now, unchanged by version) again at the next sync, until it syncs or is given up.
		res.cursor = src.State.Cursor
	}
	return res, nil
}

// applier applies one listing.
type applier struct {
	s         *Service
	src       *rag.SyncSource
	coll      *rag.Collection
	reader    connector.Source
	known     map[string]*rag.SyncItem
	principal rag.Principal
	log       *slog.Logger
	res       *result
	movedAway map[string]bool
	// retry is set when an item failed with tries left (MaxItemAttempts).
	retry bool
}

// move renames a known item from to to (source is the item's new location). A move onto an item that is
// known already, or of an item never synced, is left to the listing: to is then synced as any item.
func (a *applier) move(ctx context.Context, from, to, source string) error {
	r, ok := a.known[from]
	if !ok || from == to {
		return nil
	}
	if _, taken := a.known[to]; taken {
		return nil
	}
	err := a.s.store.MoveSourceItem(ctx, a.src.ID, from, to, source)
	if errors.Is(err, rag.ErrConflict) {
		a.log.Warn("source item not moved: its new ID is taken", slog.String("from", from), slog.String("to", to))
		return nil
	}
	if err != nil {
		return err
	}
	delete(a.known, from)
	r.ItemID = to
	a.known[to] = r
	if a.movedAway == nil {
		a.movedAway = map[string]bool{}
	}
	a.movedAway[from] = true
	a.res.moved++
	a.log.Info("source item moved", slog.String("from", from), slog.String("to", to), slog.String("document", r.DocumentID))
	return nil
}

// item syncs one listed item: unchanged by its version, else fetched and submitted (a new document, a new
// version, or unchanged by content hash). Its failure is recorded on its record, not returned; an error
// returned is the store's and fails the sync.
func (a *applier) item(ctx context.Context, it connector.Item, byHash map[string]string) error {
	r := a.known[it.ID]
	if r != nil && r.DocumentID != "" && r.Error == "" && it.Version != "" && r.Version == it.Version {
		a.res.unchanged++
		return nil
	}
	if r != nil && r.Error != "" && r.Attempts >= a.s.opt.MaxItemAttempts && it.Version != "" && r.Version == it.Version {
		a.res.failed++ // given up until the item changes
		return nil
	}
	data, err := a.reader.Fetch(ctx, it)
	if err == nil && int64(len(data)) > a.s.opt.MaxBytes {
		err = rag.Errorf(rag.CodePayloadTooLarge, "%s is %d bytes, over the limit of %d", it.ID, len(data), a.s.opt.MaxBytes)
	}
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return a.failed(ctx, it, r, err)
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	if r == nil {
		if from, ok := byHash[hash]; ok && !a.movedAway[from] {
			if err := a.move(ctx, from, it.ID, it.Source); err != nil {
				return err
			}
			r = a.known[it.ID]
		}
	}
	doc, outcome, err := a.s.submit.Submit(ctx, a.principal, ingest.Request{
		Collection: a.coll.Name, ExternalID: it.ID, Name: it.Name, Title: it.Title, Source: it.Source, Data: data,
		Metadata: it.Metadata, Owner: a.src.Owner,
	})
	if err != nil {
		if rag.ErrorCode(err) == rag.CodeDBError {
			return err
		}
		return a.failed(ctx, it, r, err)
	}
	switch {
	case outcome == ingest.Unchanged:
		a.res.unchanged++
	case r == nil || r.DocumentID == "":
		a.res.added++
	default:
		a.res.updated++
	}
	if outcome == ingest.Queued {
		if err := a.s.process(ctx, doc.ID, doc.PendingHash); err != nil {
			return err
		}
	}
	rec := &rag.SyncItem{SourceID: a.src.ID, ItemID: it.ID, DocumentID: doc.ID, Version: it.Version, ContentHash: hash}
	if err := a.s.store.PutSourceItem(ctx, rec); err != nil {
		return err
	}
	a.known[it.ID] = rec
	return nil
}

// failed records an item's failure (to be retried at the next sync).
func (a *applier) failed(ctx context.Context, it connector.Item, r *rag.SyncItem, cause error) error {
	a.res.failed++
	rec := &rag.SyncItem{SourceID: a.src.ID, ItemID: it.ID, Version: it.Version, Error: message(cause), Attempts: 1}
	if r != nil {
		rec.DocumentID, rec.ContentHash, rec.Attempts = r.DocumentID, r.ContentHash, r.Attempts+1
	}
	a.log.Warn("source item failed", slog.String("item", it.ID), slog.Int("attempts", rec.Attempts), slog.Any("err", cause))
	a.retry = a.retry || rec.Attempts < a.s.opt.MaxItemAttempts
	if err := a.s.store.PutSourceItem(ctx, rec); err != nil {
		return err
	}
	a.known[it.ID] = rec
	return nil
}

// remove soft-deletes the document of an item gone at the source (restorable until the purge, as a user's
// deletion) and forgets the item.
func (a *applier) remove(ctx context.Context, id string) error {
	r := a.known[id]
	if r.DocumentID != "" {
		_, err := a.s.store.TrashDocument(ctx, a.principal, r.DocumentID)
		switch {
		case errors.Is(err, rag.ErrNotFound): // deleted by a user meanwhile
		case err != nil:
			return err
		default:
			a.res.deleted++
		}
	}
	if err := a.s.store.DeleteSourceItem(ctx, a.src.ID, id); err != nil {
		return err
	}
	delete(a.known, id)
	return nil
}

// Due syncs every source whose schedule has come since its last run (or its creation): the work of the
// "sources.sync" periodic job. Paused sources and sources another process syncs are skipped. It returns
// how many it synced; one source's failure does not stop the others (it is recorded on that source).
func (s *Service) Due(ctx context.Context) (int, error) {
	all, err := s.store.ListSources(ctx, "")
	if err != nil {
		return 0, err
	}
	n := 0
	now := s.opt.Now()
	for _, src := range all {
		sch, err := ParseSchedule(src.Schedule)
		if err != nil || sch == nil || src.State.Paused || src.State.Running {
			continue
		}
		last := src.CreatedAt
		if src.State.LastRunAt != nil {
			last = *src.State.LastRunAt
		}
		if sch.Next(last).After(now) {
			continue
		}
		if _, err := s.Sync(ctx, src.ID, TriggerSchedule); errors.Is(err, ErrBusy) {
			continue
		} else if ctx.Err() != nil {
			return n, ctx.Err()
		}
		n++
	}
	return n, nil
}

// message is what a source's state says of err: an application error's safe message, else the error
// itself (a file or a page of the user's own source that could not be read).
func message(err error) string {
	var re *rag.Error
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}
