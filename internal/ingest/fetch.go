package ingest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/ragd/ragd/internal/rag"
)

// fetchPrefix starts the pending "hash" of a document whose next version is fetched from its source URL
// when it is processed (Request.URL). Each submit gets a new marker, so a new submit (or a retry) is a new
// pending version with a job of its own, and the marker is never a blob's hash.
const fetchPrefix = "fetch:"

func fetchMarker() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return fetchPrefix + hex.EncodeToString(b[:])
}

// IsFetch reports whether a pending hash stands for a fetch of the document's URL rather than for stored
// bytes.
func IsFetch(pendingHash string) bool { return strings.HasPrefix(pendingHash, fetchPrefix) }

// IsURL reports whether a document source is an http or https URL: such documents can be fetched again
// (Retry).
func IsURL(source string) bool {
	u, err := url.Parse(source)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func checkURL(req Request) error {
	switch {
	case len(req.Data) > 0:
		return rag.Errorf(rag.CodeInvalid, "a document is either a URL or data, not both")
	case !IsURL(req.URL):
		return rag.Errorf(rag.CodeInvalid, "url %q: want an absolute http or https URL", req.URL)
	}
	return nil
}

// fetch downloads a URL document's pending version and checks it as an upload is checked.
func (p *Pipeline) fetch(ctx context.Context, doc *rag.Document) (string, []byte, error) {
	if p.opt.Fetch == nil {
		return "", nil, rag.Errorf(rag.CodeInvalid, "%s: this process does not fetch URLs", doc.Source)
	}
	name, data, err := p.opt.Fetch(ctx, doc.Source, p.opt.MaxBytes)
	if err != nil {
		return "", nil, err
	}
	if err := p.validate(Request{Name: name, Data: data}); err != nil {
		return "", nil, err
	}
	return name, data, nil
}

// settle marks a document whose fetched version is done (committed, or the same as its current content)
// ready with nothing pending, unless a newer version superseded the fetch meanwhile.
func (p *Pipeline) settle(ctx context.Context, doc *rag.Document) error {
	empty := ""
	return p.record(ctx, doc, rag.DocumentState{Status: rag.StatusReady, Stage: rag.StageDone, Progress: 1, PendingHash: &empty})
}

// Retry queues a visible document to be processed again. A document whose source is a URL is fetched
// again — after a failure (the site was down, the address was refused before the operator allowed it) or
// to pick up a change. Another document whose last processing failed (the embedder was down, a budget was
// exceeded before the operator raised it) has the bytes of that attempt processed again. The current
// version, if any, stays searchable meanwhile; the caller schedules the pending version as for Submit.
// ErrNotFound; CodeConflict for an uploaded document with no failed attempt to re-run (or whose bytes were
// purged), or one already queued.
func (p *Pipeline) Retry(ctx context.Context, principal rag.Principal, docID string) (*rag.Document, error) {
	doc, err := p.store.GetDocument(ctx, principal, docID)
	if err != nil {
		return nil, err
	}
	var pending string
	switch {
	case IsURL(doc.Source) && p.opt.Fetch != nil:
		pending = fetchMarker()
	case doc.PendingHash != "":
		return nil, rag.Errorf(rag.CodeConflict, "%s is already queued for processing", doc.Source)
	case doc.Error == "" || doc.FailedHash == "":
		return nil, rag.Errorf(rag.CodeConflict, "%s has no failed processing to retry: upload it again for a new version", doc.Source)
	default:
		if _, err := p.store.GetBlob(ctx, doc.FailedHash); errors.Is(err, rag.ErrNotFound) {
			return nil, rag.Errorf(rag.CodeConflict, "the bytes of %s's failed attempt are no longer stored: upload it again", doc.Source)
		} else if err != nil {
			return nil, fmt.Errorf("retry %s: %w", doc.ID, err)
		}
		pending = doc.FailedHash
	}
	empty := ""
	st := rag.DocumentState{Status: rag.StatusQueued, Stage: rag.StageQueued, PendingHash: &pending, FailedHash: &empty}
	if doc.Version > 0 {
		st.Status = rag.StatusReady
	}
	if err := p.store.SetDocumentState(ctx, doc.ID, st); err != nil {
		return nil, fmt.Errorf("retry %s: %w", doc.ID, err)
	}
	return p.store.GetDocument(ctx, principal, doc.ID)
}
