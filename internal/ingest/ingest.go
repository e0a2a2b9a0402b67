// Package ingest is the ingestion pipeline: raw bytes are stored, then extracted, chunked, embedded and
// committed to the store as a new document version in one transaction. Submit records the work (so it
// survives a restart); Process does it. A failure at any stage marks the document failed with the reason and
// leaves the previous version, if any, untouched and searchable.
package ingest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ragd/ragd/internal/chunk"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// Options configure a Pipeline.
type Options struct {
	// MaxBytes is the largest file accepted (default rag.DefaultMaxUploadBytes).
	MaxBytes int64
	// Chunk sizes (chunk package defaults when zero).
	Chunk chunk.Options
	// EmbedBatch is how many chunks are embedded per call (default 64); progress is reported per batch.
	EmbedBatch int
	// Metadata bounds a document's metadata (rag.MetadataLimits defaults when zero).
	Metadata rag.MetadataLimits
	// MaxChunks bounds the chunks of one document (default 50,000); a document that splits into more fails
	// with too_large. RAGD_MAX_CHUNKS.
	MaxChunks int
	// WatchInterval is how often a running attempt checks that its document still exists and still waits
	// for this version (default 2s): a document deleted, or superseded by a newer upload, stops its job
	// within about this long, whichever process runs it.
	WatchInterval time.Duration
	// AfterCommit, when set, runs after a new version is committed, in the same attempt, with the document
	// as committed and the version's text: the extraction of a knowledge graph from it (docs/graph.md). It
	// runs only for a version that was processed — never for an unchanged upload nor a re-embedding. Its
	// error is logged: the version stays committed and searchable.
	AfterCommit func(ctx context.Context, doc *rag.Document, text string) error
	// Settled, when set, is told when a processed version is settled for good, with the document as then
	// recorded: committed (failure nil; the document is ready and the version searchable) or failed with
	// no retry to come (failure is why). It is not told of an unchanged upload, a rejection at submit (the
	// request that submitted it gets the error), a re-embedding, a retry to come nor a superseded version.
	// The collections' webhooks (document.ready, document.failed) hang here.
	Settled func(ctx context.Context, doc *rag.Document, failure error)
	// Fetch downloads the document of a URL request (Request.URL) during processing, at most MaxBytes:
	// it returns a file name whose extension selects the extractor, and the bytes. Its errors are
	// *rag.Error (CodeInternal or CodeRateLimited when trying again may help). nil refuses URL requests.
	Fetch  func(ctx context.Context, url string, maxBytes int64) (name string, data []byte, err error)
	Logger *slog.Logger
}

// DefaultMaxChunks is the default of Options.MaxChunks.
const DefaultMaxChunks = 50_000

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.MaxBytes == 0 {
		o.MaxBytes = rag.DefaultMaxUploadBytes
	}
	if o.EmbedBatch == 0 {
		o.EmbedBatch = 64
	}
	if o.MaxChunks <= 0 {
		o.MaxChunks = DefaultMaxChunks
	}
	if o.WatchInterval <= 0 {
		o.WatchInterval = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Pipeline turns files into searchable document versions.
type Pipeline struct {
	store     rag.Store
	extractor rag.Extractor
	embedder  rag.Embedder
	opt       Options
}

// New returns a Pipeline.
func New(store rag.Store, extractor rag.Extractor, embedder rag.Embedder, opt Options) *Pipeline {
	return &Pipeline{store: store, extractor: extractor, embedder: embedder, opt: opt.WithDefaults()}
}

// Request is one file (or text) to ingest.
type Request struct {
	// Collection is a collection name or ID; "" means rag.DefaultCollection (created on demand).
	Collection string
	// ExternalID identifies the document within its collection; "" means Source, or Name.
	ExternalID string
	// Name is the file name; its extension selects the extractor.
	Name   string
	Title  string // "" means the title found in the file, or Name
	Source string // "" means Name
	Data   []byte
	// URL, instead of Data, names a document fetched when it is processed (Options.Fetch), not now: it is
	// the document's source and (by default) its external ID, and every attempt fetches it afresh.
	URL string
	// Metadata, Tags and Readers describe the document; Owner is the principal ID that owns it.
	Metadata map[string]any
	Tags     []string
	Owner    string
	Readers  []string
}

// Outcome says what Submit did.
type Outcome string

// Submit outcomes.
const (
	// Queued: a new document or a new version is waiting for Process.
	Queued Outcome = "queued"
	// Unchanged: the same content is already the current version; nothing to do.
	Unchanged Outcome = "unchanged"
	// Rejected: the input was refused before processing (too large, unsupported, empty); the document is
	// recorded with the reason and the error is returned.
	Rejected Outcome = "rejected"
	// Failed: the request could not be carried out — the store failed (CodeDBError), the document's key
	// belongs to a document the principal cannot see (CodeConflict), or processing failed (Ingest). The error
	// says which; a store failure leaves nothing half-recorded that a later submit cannot supersede.
	Failed Outcome = "failed"
)

// submitAttempts bounds Submit: a create that conflicts with a document created meanwhile by another submit
// of the same key is retried once as an update of that document.
const submitAttempts = 2

// Submit stores the request's bytes and records a queued document (or a queued new version of an existing
// one). It does not process. Errors: the *rag.Error of a rejected input (outcome Rejected, with the document
// recorded as failed when it had no ready version; metadata over Options.Metadata is rejected with
// CodeInvalid before anything is recorded); CodeDBError, or CodeConflict when the key is taken by a
// document the principal cannot see (outcome Failed).
func (p *Pipeline) Submit(ctx context.Context, principal rag.Principal, req Request) (*rag.Document, Outcome, error) {
	req, err := normalize(principal, req)
	if err != nil {
		return nil, Rejected, err
	}
	if err := p.opt.Metadata.Check(req.Metadata); err != nil {
		return nil, Rejected, err
	}
	collName := cmp.Or(req.Collection, rag.DefaultCollection)
	coll, err := p.store.EnsureCollection(ctx, collName, principal.ID)
	if err != nil {
		return nil, Failed, storeError(req, "collection "+collName, err)
	}
	reject := p.validate(req)
	sum := sha256.Sum256(req.Data)
	hash := hex.EncodeToString(sum[:])
	if req.URL != "" {
		// Nothing to store yet: the pending version is "fetch the URL", checked when it is fetched.
		hash = fetchMarker()
	}
	for range submitAttempts {
		doc, err := p.store.FindDocument(ctx, principal, coll.ID, req.ExternalID)
		switch {
		case errors.Is(err, rag.ErrNotFound):
			doc = nil
		case err != nil:
			return nil, Failed, storeError(req, "find document", err)
		case reject == nil && doc.ContentHash == hash && doc.Version > 0:
			return p.unchanged(ctx, principal, req, doc)
		}
		if reject == nil && req.URL == "" {
			if err := p.store.PutBlob(ctx, hash, req.Data); err != nil {
				return nil, Failed, storeError(req, "store upload", err)
			}
		}
		if doc != nil {
			return p.update(ctx, principal, req, doc, hash, reject)
		}
		doc, err = p.create(ctx, coll, req, hash, reject)
		if errors.Is(err, rag.ErrConflict) {
			continue // created meanwhile by another submit of the same key: update that one
		}
		if err != nil {
			return nil, Failed, storeError(req, "create document", err)
		}
		if reject != nil {
			return doc, Rejected, reject
		}
		return doc, Queued, nil
	}
	// The key is taken, yet the principal cannot find it: it belongs to a document the principal cannot see.
	return nil, Failed, rag.Errorf(rag.CodeConflict,
		"%s: collection %q already has a document with this id, which you cannot see", req.Name, coll.Name)
}

// normalize fills a request's defaults: Name and Source stand in for each other, ExternalID defaults to
// Source, Owner to the principal. A request that names nothing is invalid.
func normalize(principal rag.Principal, req Request) (Request, error) {
	if req.URL != "" {
		if err := checkURL(req); err != nil {
			return req, err
		}
		req.Source = req.URL
	}
	req.Name = cmp.Or(req.Name, req.Source)
	req.Source = cmp.Or(req.Source, req.Name)
	req.ExternalID = cmp.Or(req.ExternalID, req.Source)
	if req.ExternalID == "" {
		return req, rag.Errorf(rag.CodeInvalid, "a document needs a name, source or external id")
	}
	req.Owner = cmp.Or(req.Owner, principal.ID)
	return req, nil
}

// create records a new document: queued with its pending version, or failed with reject's reason. It returns
// the store's error as is (ErrConflict when the key was taken meanwhile).
func (p *Pipeline) create(ctx context.Context, coll *rag.Collection, req Request, hash string, reject error) (*rag.Document, error) {
	doc := &rag.Document{
		CollectionID: coll.ID,
		ExternalID:   req.ExternalID,
		Title:        cmp.Or(req.Title, baseTitle(req.Name)),
		Source:       req.Source,
		MediaType:    extract.MediaType(req.Name, req.Data),
		Size:         int64(len(req.Data)),
		Status:       rag.StatusQueued,
		Stage:        rag.StageQueued,
		PendingHash:  hash,
		Metadata:     req.Metadata,
		Tags:         req.Tags,
		Owner:        req.Owner,
		Readers:      req.Readers,
	}
	if reject != nil {
		doc.Status, doc.Stage, doc.PendingHash = rag.StatusFailed, rag.StageQueued, ""
		doc.ErrorCode, doc.Error = rag.ErrorCode(reject), rag.ErrorMessage(reject)
	}
	if err := p.store.CreateDocument(ctx, doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// unchanged handles a re-submit of a document's current content: a failed or pending newer attempt is
// superseded by it, and the document is ready again.
func (p *Pipeline) unchanged(ctx context.Context, principal rag.Principal, req Request, doc *rag.Document) (*rag.Document, Outcome, error) {
	if doc.Status == rag.StatusReady && doc.PendingHash == "" && doc.Error == "" {
		return doc, Unchanged, nil
	}
	empty := ""
	if err := p.store.SetDocumentState(ctx, doc.ID, rag.DocumentState{Status: rag.StatusReady, Stage: rag.StageDone, Progress: 1, PendingHash: &empty}); err != nil {
		return nil, Failed, storeError(req, "set state", err)
	}
	doc, err := p.store.GetDocument(ctx, principal, doc.ID)
	if err != nil {
		return nil, Failed, storeError(req, "reload document", err)
	}
	return doc, Unchanged, nil
}

// update describes a new attempt at an existing document (its title, metadata, tags and readers, then the
// pending version, or reject's reason) while the current version stays searchable.
func (p *Pipeline) update(ctx context.Context, principal rag.Principal, req Request, doc *rag.Document, hash string, reject error) (*rag.Document, Outcome, error) {
	u := rag.DocumentUpdate{Metadata: req.Metadata, Tags: req.Tags, Readers: req.Readers}
	if req.Title != "" {
		u.Title = &req.Title
	}
	if u.Metadata != nil || u.Tags != nil || u.Readers != nil || u.Title != nil {
		if _, err := p.store.UpdateDocument(ctx, principal, doc.ID, u); err != nil {
			return nil, Failed, storeError(req, "update document", err)
		}
	}
	if reject != nil {
		if err := p.record(ctx, doc, failedState(doc, rag.StageQueued, reject)); err != nil {
			return nil, Failed, storeError(req, "record rejection", err)
		}
	} else {
		st := rag.DocumentState{Status: rag.StatusQueued, Stage: rag.StageQueued, PendingHash: &hash}
		if doc.Version > 0 {
			// The current version stays ready and searchable while the new one is processed.
			st.Status = rag.StatusReady
		}
		if err := p.store.SetDocumentState(ctx, doc.ID, st); err != nil {
			return nil, Failed, storeError(req, "set state", err)
		}
	}
	doc, err := p.store.GetDocument(ctx, principal, doc.ID)
	if err != nil {
		return nil, Failed, storeError(req, "reload document", err)
	}
	if reject != nil {
		return doc, Rejected, reject
	}
	return doc, Queued, nil
}

// Revert queues version n of a visible document as its next version: the original bytes of n become the
// pending version (committed under a new version number, as any upload), while the current version stays
// searchable until then. It is Unchanged when n is the current content. ErrNotFound for an unknown document
// or version; CodeNotFound also when the original of n is no longer stored.
func (p *Pipeline) Revert(ctx context.Context, principal rag.Principal, docID string, n int) (*rag.Document, Outcome, error) {
	doc, err := p.store.GetDocument(ctx, principal, docID)
	if err != nil {
		return nil, Failed, err
	}
	req := Request{Name: doc.Source}
	vs, err := p.store.ListVersions(ctx, principal, docID)
	if err != nil {
		return nil, Failed, storeError(req, "list versions", err)
	}
	i := slices.IndexFunc(vs, func(v *rag.DocumentVersion) bool { return v.Version == n })
	if i < 0 {
		return nil, Failed, fmt.Errorf("version %d of document %s: %w", n, docID, rag.ErrNotFound)
	}
	hash := vs[i].ContentHash
	if hash == doc.ContentHash {
		return p.unchanged(ctx, principal, req, doc)
	}
	if _, err := p.store.GetBlob(ctx, hash); err != nil {
		return nil, Failed, storeError(req, fmt.Sprintf("original of version %d", n), err)
	}
	st := rag.DocumentState{Status: rag.StatusQueued, Stage: rag.StageQueued, PendingHash: &hash}
	if doc.Version > 0 {
		st.Status = rag.StatusReady
	}
	if err := p.store.SetDocumentState(ctx, doc.ID, st); err != nil {
		return nil, Failed, storeError(req, "set state", err)
	}
	if doc, err = p.store.GetDocument(ctx, principal, doc.ID); err != nil {
		return nil, Failed, storeError(req, "reload document", err)
	}
	return doc, Queued, nil
}

// storeError reports a store failure during the submit of req: it keeps the store's code (CodeDBError,
// CodeNotFound, CodeConflict) and says which step failed.
func storeError(req Request, step string, err error) error {
	return fmt.Errorf("ingest %s: %s: %w", req.Name, step, err)
}

// validate checks what can be checked before storing anything: size, emptiness, type. A URL request is
// checked when its document is fetched.
func (p *Pipeline) validate(req Request) error {
	switch {
	case req.URL != "" && p.opt.Fetch == nil:
		return rag.Errorf(rag.CodeInvalid, "%s: this process does not fetch URLs", req.URL)
	case req.URL != "":
		return nil
	case int64(len(req.Data)) > p.opt.MaxBytes:
		return rag.Errorf(rag.CodePayloadTooLarge, "%s: file is %d bytes, over the limit of %d bytes", req.Name, len(req.Data), p.opt.MaxBytes)
	case len(req.Data) == 0:
		return rag.Errorf(rag.CodeInvalid, "%s: file is empty", req.Name)
	case extract.MediaType(req.Name, req.Data) == "":
		return rag.Errorf(rag.CodeUnsupportedMediaType, "%s: unsupported file type %q", req.Name, filepath.Ext(req.Name))
	}
	return nil
}

// Process turns a document's pending bytes into its next version. It is idempotent: a document with nothing
// pending is left alone. Failures are recorded on the document and returned.
func (p *Pipeline) Process(ctx context.Context, docID string) error {
	return p.ProcessAttempt(ctx, docID, Attempt{})
}

// Attempt describes one try of a durable job at a document's pending version (see ProcessAttempt).
type Attempt struct {
	// ContentHash is the pending hash the job was enqueued for. When the document's pending hash is no
	// longer that (the version was processed, or a newer upload superseded it and has its own job), the
	// attempt does nothing. "" processes whatever is pending.
	ContentHash string
	// Retry says the caller will try again after a Transient failure: the document then keeps its pending
	// work and goes back to queued with the reason, rather than being marked failed for good.
	Retry bool
}

// ProcessAttempt is Process for a caller that retries (the background jobs): see Attempt. A failure is
// returned either way; Transient tells whether trying again can help.
func (p *Pipeline) ProcessAttempt(ctx context.Context, docID string, a Attempt) error {
	err := p.processAttempt(ctx, docID, a)
	if errors.Is(err, errSuperseded) {
		return nil
	}
	return err
}

// errSuperseded stops an attempt whose version is no longer the document's pending one.
var errSuperseded = errors.New("document version superseded")

// watch returns a context that is cancelled (with cause errSuperseded) once the document is deleted or its
// pending version is no longer hash, checked every WatchInterval; the cancellation reaches the extractor and
// the embedder, so a deleted document's job stops mid-file. stop ends the watch (once; later calls do nothing).
func (p *Pipeline) watch(ctx context.Context, docID, hash string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(p.opt.WatchInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			d, err := p.store.GetDocument(ctx, rag.Principal{Admin: true, ID: "system"}, docID)
			if errors.Is(err, rag.ErrNotFound) || (err == nil && d.PendingHash != hash) {
				cancel(errSuperseded)
				return
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			close(done)
			cancel(nil)
		})
	}
}

func (p *Pipeline) processAttempt(ctx context.Context, docID string, a Attempt) error {
	doc, err := p.store.GetDocument(ctx, rag.Principal{Admin: true, ID: "system"}, docID)
	if err != nil {
		return fmt.Errorf("process %s: %w", docID, err)
	}
	if doc.PendingHash == "" || (a.ContentHash != "" && doc.PendingHash != a.ContentHash) {
		return nil
	}
	log := p.opt.Logger.With(slog.String("document", doc.ID), slog.String("source", doc.Source))
	start := time.Now()
	// After the commit the watch below ends the attempt's context (the version is no longer pending), so
	// AfterCommit runs under the job's own.
	jobCtx := ctx
	ctx, stop := p.watch(ctx, doc.ID, doc.PendingHash)
	defer stop()
	fail := func(stage rag.Stage, err error) error {
		if errors.Is(context.Cause(ctx), errSuperseded) {
			log.Info("document deleted or superseded while processing; attempt stopped", slog.String("stage", string(stage)))
			return errSuperseded
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && rag.ErrorCode(err) == rag.CodeInternal {
			err = rag.WrapError(rag.CodeInternal, err, "processing took too long and was stopped")
		}
		if a.Retry && (Transient(err) || ctx.Err() != nil) || errors.Is(ctx.Err(), context.Canceled) {
			// A cancelled attempt was interrupted (shutdown, Ctrl-C), not failed: the work stays pending.
			return p.release(ctx, doc, stage, err)
		}
		return p.fail(ctx, doc, stage, err)
	}

	// Every state write is conditional on this version still being the pending one: an attempt at a
	// superseded version (a newer upload, or the same version committed by another attempt) must not mark
	// the document processing again after that one finished. It stops quietly instead.
	progress := func(stage rag.Stage, frac float64) error {
		st := rag.DocumentState{Status: rag.StatusProcessing, Stage: stage, Progress: frac, IfPending: doc.PendingHash}
		err := p.store.SetDocumentState(ctx, doc.ID, st)
		if errors.Is(err, rag.ErrConflict) || errors.Is(context.Cause(ctx), errSuperseded) {
			log.Info("document version superseded while processing", slog.String("stage", string(stage)))
			return errSuperseded
		}
		if err != nil && a.Retry {
			// Put the document back in the queue rather than leave it looking processed until the retry.
			return fail(stage, err)
		}
		return err
	}
	if err := progress(rag.StageExtract, 0.05); err != nil {
		return err
	}
	name, hash := nameFor(doc), doc.PendingHash
	var data []byte
	if IsFetch(doc.PendingHash) {
		name, data, err = p.fetch(ctx, doc)
		if err != nil {
			return fail(rag.StageExtract, err)
		}
		sum := sha256.Sum256(data)
		if hash = hex.EncodeToString(sum[:]); hash == doc.ContentHash && doc.Version > 0 {
			log.Info("fetched document unchanged")
			return p.settle(ctx, doc)
		}
		if err := p.store.PutBlob(ctx, hash, data); err != nil {
			return fail(rag.StageExtract, fmt.Errorf("store %s: %w", doc.Source, err))
		}
	} else if data, err = p.store.GetBlob(ctx, doc.PendingHash); err != nil {
		return fail(rag.StageExtract, fmt.Errorf("upload of %s is missing: %w", doc.Source, err))
	}
	ex, err := p.extractor.Extract(ctx, name, data)
	if err != nil {
		return fail(rag.StageExtract, err)
	}

	if err := progress(rag.StageChunk, 0.2); err != nil {
		return err
	}
	chunks := chunk.Split(ex, p.opt.Chunk)
	if len(chunks) == 0 {
		return fail(rag.StageChunk, rag.Errorf(rag.CodeInvalid, "%s: no text found", doc.Source))
	}
	if len(chunks) > p.opt.MaxChunks {
		return fail(rag.StageChunk, rag.Errorf(rag.CodeTooLarge, "%s: %d chunks, over the limit of %d (limit RAGD_MAX_CHUNKS)", doc.Source, len(chunks), p.opt.MaxChunks))
	}

	if err := progress(rag.StageEmbed, 0.25); err != nil {
		return err
	}
	// A document named only by its file gets the title found inside the file.
	title := doc.Title
	if ex.Title != "" && title == baseTitle(doc.Source) {
		title = ex.Title
	}
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = EmbeddingText(title, c)
	}
	for lo := 0; lo < len(texts); lo += p.opt.EmbedBatch {
		hi := min(lo+p.opt.EmbedBatch, len(texts))
		vecs, err := p.embedder.EmbedDocuments(ctx, texts[lo:hi])
		if err != nil {
			return fail(rag.StageEmbed, asCode(err, rag.CodeEmbeddingFailed, "embedding failed"))
		}
		if len(vecs) != hi-lo {
			return fail(rag.StageEmbed, rag.Errorf(rag.CodeEmbeddingFailed, "embedder returned %d vectors for %d texts", len(vecs), hi-lo))
		}
		for i, v := range vecs {
			chunks[lo+i].Vector = v
		}
		if err := progress(rag.StageEmbed, 0.25+0.65*float64(hi)/float64(len(texts))); err != nil {
			return err
		}
	}

	// progress is conditional on this version still being pending: a newer upload that arrived meanwhile
	// has its own job, and committing this one now could land after it.
	if err := progress(rag.StageIndex, 0.92); err != nil {
		return err
	}
	if cur, err := p.store.GetDocument(ctx, rag.Principal{Admin: true, ID: "system"}, doc.ID); err != nil {
		return fail(rag.StageIndex, err)
	} else if cur.Title != doc.Title {
		title = cur.Title // renamed while processing: the user's title wins
	}
	text := Text(ex)
	version, err := p.store.CommitVersion(ctx, &rag.VersionCommit{
		DocumentID:  doc.ID,
		ContentHash: hash,
		Title:       title,
		Source:      doc.Source,
		MediaType:   ex.MediaType,
		Size:        int64(len(data)),
		Space:       p.embedder.Space(),
		Chunks:      chunks,
		Text:        text,
		Warning:     FailedPages(ex),
	})
	if err != nil {
		return fail(rag.StageIndex, err)
	}
	if hash != doc.PendingHash {
		// CommitVersion clears only a pending hash equal to the content's: a fetch marker is cleared here.
		if err := p.settle(ctx, doc); err != nil {
			return err
		}
	}
	log.Info("document indexed", slog.Int("version", version), slog.Int("chunks", len(chunks)),
		slog.Int("pages", ex.Pages), slog.Int("failed_pages", len(ex.FailedPages)), slog.Duration("took", time.Since(start)))
	p.settled(jobCtx, doc.ID, nil)
	if p.opt.AfterCommit != nil {
		stop()
		committed := *doc
		committed.Title, committed.Version, committed.ContentHash, committed.PendingHash = title, version, hash, ""
		if err := p.opt.AfterCommit(jobCtx, &committed, text); err != nil {
			log.Warn("after the commit of a version", slog.Int("version", version), slog.Any("err", err))
		}
	}
	return nil
}

// Ingest submits and processes one request synchronously (the CLI's path). It returns the document as stored
// afterwards and the outcome (Unchanged when the content was already current).
func (p *Pipeline) Ingest(ctx context.Context, principal rag.Principal, req Request) (*rag.Document, Outcome, error) {
	doc, outcome, err := p.Submit(ctx, principal, req)
	if err != nil || outcome != Queued {
		return doc, outcome, err
	}
	before := doc.ContentHash
	if err := p.Process(ctx, doc.ID); err != nil {
		d, gerr := p.store.GetDocument(ctx, principal, doc.ID)
		if gerr != nil {
			return nil, Failed, errors.Join(err, storeError(req, "reload document", gerr))
		}
		return d, Failed, err
	}
	doc, err = p.store.GetDocument(ctx, principal, doc.ID)
	if err != nil {
		return nil, Failed, storeError(req, "reload document", err)
	}
	if req.URL != "" && before != "" && doc.ContentHash == before {
		return doc, Unchanged, nil // fetched again, the same content
	}
	return doc, Queued, nil
}

// FailedPages says which pages of an extraction were left out and why ("" when none was), for the document's
// error while its version is ready.
func FailedPages(ex *rag.Extracted) string {
	if len(ex.FailedPages) == 0 {
		return ""
	}
	parts := make([]string, len(ex.FailedPages))
	for i, f := range ex.FailedPages {
		parts[i] = fmt.Sprintf("page %d: %s", f.Page, f.Error)
	}
	return fmt.Sprintf("%d page(s) could not be read and are left out: %s", len(parts), strings.Join(parts, "; "))
}

// Text is the text of an extraction as a version keeps it: its blocks in reading order, separated by blank
// lines.
func Text(ex *rag.Extracted) string {
	var b strings.Builder
	for i, bl := range ex.Blocks {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(bl.Text)
	}
	return b.String()
}

// EmbeddingText is the text embedded for a chunk: the same context (title, section) that the keyword index
// sees ahead of the passage.
func EmbeddingText(title string, c rag.Chunk) string {
	return textproc.ContextText(title, c.Section, c.Text)
}

// fail records err on the document: failed when it has no ready version, otherwise the current version
// stays ready and the error describes the failed update. It returns err (as a *rag.Error).
func (p *Pipeline) fail(ctx context.Context, doc *rag.Document, stage rag.Stage, err error) error {
	if code := rag.ErrorCode(err); code == rag.CodeInternal || code == rag.CodeDBError {
		p.opt.Logger.Error("ingestion failed", slog.String("document", doc.ID), slog.String("stage", string(stage)), slog.Any("err", err))
	}
	ok, rerr := p.recorded(ctx, doc, keepFailed(doc, failedState(doc, stage, err)))
	if ok {
		p.settled(ctx, doc.ID, err)
	}
	return appError(err, rerr)
}

// settled tells Options.Settled of a version's final outcome, with the document as recorded. It outlives
// ctx, like record: the failure of a timed-out attempt is news too.
func (p *Pipeline) settled(ctx context.Context, docID string, failure error) {
	if p.opt.Settled == nil {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	doc, err := p.store.GetDocument(sctx, rag.Principal{Admin: true, ID: "system"}, docID)
	if err != nil {
		p.opt.Logger.Warn("outcome of a version not reported", slog.String("document", docID), slog.Any("err", err))
		return
	}
	p.opt.Settled(sctx, doc, failure)
}

// keepFailed makes st keep the bytes of the failed attempt for a retry (Retry); a fetch has none.
func keepFailed(doc *rag.Document, st rag.DocumentState) rag.DocumentState {
	if !IsFetch(doc.PendingHash) {
		st.FailedHash = &doc.PendingHash
	}
	return st
}

func failedState(doc *rag.Document, stage rag.Stage, err error) rag.DocumentState {
	msg := rag.ErrorMessage(err)
	st := rag.DocumentState{Status: rag.StatusFailed, Stage: stage, ErrorCode: rag.ErrorCode(err), Error: msg}
	if doc.Version > 0 {
		st.Status = rag.StatusReady
		st.Error = fmt.Sprintf("version %d failed: %s", doc.Version+1, msg)
	}
	empty := ""
	st.PendingHash = &empty
	return st
}

// release puts a document whose attempt failed transiently, or was interrupted, back in the queue: it
// keeps its pending work (and its current version, if any) and says why it is waiting.
func (p *Pipeline) release(ctx context.Context, doc *rag.Document, stage rag.Stage, err error) error {
	st := rag.DocumentState{Status: rag.StatusQueued, Stage: rag.StageQueued}
	if errors.Is(ctx.Err(), context.Canceled) {
		p.opt.Logger.Info("ingestion interrupted", slog.String("document", doc.ID), slog.String("stage", string(stage)))
	} else {
		p.opt.Logger.Warn("ingestion will be retried", slog.String("document", doc.ID), slog.String("stage", string(stage)), slog.Any("err", err))
		st.ErrorCode, st.Error = rag.ErrorCode(err), "will retry: "+rag.ErrorMessage(err)
	}
	if doc.Version > 0 {
		st.Status = rag.StatusReady
	}
	return appError(err, p.record(ctx, doc, st))
}

// record writes a document's state. The write outlives ctx: a cancelled or timed-out attempt must still
// leave the document saying what happened.
// It is conditional on doc's pending version still being pending: the failure of a superseded attempt is
// not recorded over the newer version's state (nor does it clear the newer pending hash).
func (p *Pipeline) record(ctx context.Context, doc *rag.Document, st rag.DocumentState) error {
	_, err := p.recorded(ctx, doc, st)
	return err
}

// recorded is record that also reports whether st was written (false when the version was superseded).
func (p *Pipeline) recorded(ctx context.Context, doc *rag.Document, st rag.DocumentState) (bool, error) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	st.IfPending = doc.PendingHash
	err := p.store.SetDocumentState(wctx, doc.ID, st)
	if errors.Is(err, rag.ErrConflict) {
		p.opt.Logger.Info("outcome of a superseded version not recorded", slog.String("document", doc.ID), slog.String("status", string(st.Status)))
		return false, nil
	}
	return err == nil, err
}

// appError returns err as a *rag.Error, joined with the error of recording it if that failed too.
func appError(err, recordErr error) error {
	if recordErr != nil {
		return errors.Join(err, recordErr)
	}
	var re *rag.Error
	if errors.As(err, &re) {
		return err
	}
	return rag.WrapError(rag.ErrorCode(err), err, "%s", rag.ErrorMessage(err))
}

// Abandon gives up the pending version contentHash of a document for reason, recorded like a final
// failure of Process; it does nothing when that version is no longer pending. The background jobs use it
// for work that can never finish, such as a file whose processing killed its worker every time.
func (p *Pipeline) Abandon(ctx context.Context, docID, contentHash string, reason error) error {
	doc, err := p.store.GetDocument(ctx, rag.Principal{Admin: true, ID: "system"}, docID)
	if err != nil {
		return fmt.Errorf("abandon %s: %w", docID, err)
	}
	if doc.PendingHash == "" || doc.PendingHash != contentHash {
		return nil
	}
	stage := doc.Stage
	if stage == "" || stage == rag.StageDone {
		stage = rag.StageQueued
	}
	p.opt.Logger.Error("ingestion abandoned", slog.String("document", doc.ID), slog.Any("err", reason))
	ok, err := p.recorded(ctx, doc, keepFailed(doc, failedState(doc, stage, reason)))
	if err != nil {
		return fmt.Errorf("abandon %s: %w", docID, err)
	}
	if ok {
		p.settled(ctx, doc.ID, reason)
	}
	return nil
}

// Transient reports whether a failed attempt may succeed if tried again: the embedder, a model or the
// database was unavailable, or the failure was not classified (including a cancelled or timed-out attempt).
// Invalid, too large or unsupported input is never transient.
func Transient(err error) bool {
	switch rag.ErrorCode(err) {
	case rag.CodeEmbeddingFailed, rag.CodeLLMFailed, rag.CodeDBError, rag.CodeRateLimited, rag.CodeInternal:
		return true
	}
	return false
}

func asCode(err error, code rag.Code, msg string) error {
	if c := rag.ErrorCode(err); c == code {
		return err
	}
	return rag.WrapError(code, err, "%s: %s", msg, err.Error())
}

func baseTitle(name string) string {
	base := filepath.Base(name)
	if ext := filepath.Ext(base); ext != "" && len(ext) < len(base) {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// nameFor gives the extractor the document's file name: its extension selects the format, and a name without
// one is identified from the content.
// A URL names no file ("https://example.com/", ".../page.php"): its document goes by the type found
// when it was submitted, from the name the caller gave (a source's item name such as "index.html").
func nameFor(doc *rag.Document) string {
	if filepath.Ext(doc.Source) == "" && filepath.Ext(doc.ExternalID) != "" {
		return doc.ExternalID
	}
	if IsURL(doc.Source) && doc.MediaType != "" && extract.MediaType(doc.Source, nil) != doc.MediaType {
		if ext := extract.Extension(doc.MediaType); ext != "" {
			return "document" + ext
		}
	}
	return doc.Source
}
