package server

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// Deletion after a window (docs/security.md "Deletion"): DELETE /api/documents/{id} hides the document
// from every query at once and marks it deleted; POST /api/documents/{id}/restore brings it back until the
// purge job removes it for good, Settings.PurgeAfter after its deletion. GET /api/documents?deleted=true
// lists what can still be restored.

// handleDeleteDocument marks a document deleted (204); 404 for one the principal cannot see or that is
// already deleted.
func (s *Server) handleDeleteDocument(w http.ResponseWriter, r *http.Request) {
	if err := s.mayWriteDocument(r.Context(), principalOf(r), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, err := s.deps.Documents.TrashDocument(r.Context(), principalOf(r), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleRestoreDocument makes a deleted document live again and schedules its re-indexing: 202 with the
// document (queued). 404 for a document that is not deleted (or is purged, or invisible); 409 conflict when
// a new document took its external ID meanwhile.
func (s *Server) handleRestoreDocument(w http.ResponseWriter, r *http.Request) {
	if err := s.mayWriteDocument(r.Context(), principalOf(r), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := s.deps.Documents.RestoreDocument(r.Context(), principalOf(r), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if d.PendingHash != "" && !s.schedule(w, r, d, d.Source) {
		return
	}
	v := viewDocument(d)
	v.Outcome = string(ingest.Queued)
	writeJSON(w, http.StatusAccepted, v)
}

// schedule enqueues the processing of d's pending version after a restore; when that fails it marks the
// version failed (rather than leave it queued with no job), writes the error and returns false.
func (s *Server) schedule(w http.ResponseWriter, r *http.Request, d *rag.Document, name string) bool {
	var err error
	if again, ok := s.deps.Enqueuer.(interface {
		EnqueueIngestAgain(ctx context.Context, documentID, contentHash string) error
	}); ok {
		// The same version may have been processed a moment ago (restored right after its deletion): a
		// job that still counts as live must not stand in for this one.
		err = again.EnqueueIngestAgain(r.Context(), d.ID, d.PendingHash)
	} else {
		err = s.deps.Enqueuer.EnqueueIngest(r.Context(), d.ID, d.PendingHash)
	}
	if err == nil {
		return true
	}
	reason := rag.WrapError(rag.CodeDBError, err, "%s could not be scheduled for indexing (%s); try again", name, storageProblem(err))
	if aerr := s.deps.Ingest.Abandon(context.WithoutCancel(r.Context()), d.ID, d.PendingHash, reason); aerr != nil {
		s.log.Error("record an unscheduled version as failed", slog.String("document", d.ID), slog.Any("err", aerr))
	}
	s.writeError(w, r, reason)
	return false
}

// viewDeleted is viewDocument with, for a deleted document, when it was deleted and when it will be purged.
func (s *Server) viewDeleted(d *rag.Document) documentView {
	v := viewDocument(d)
	if d.DeletedAt != nil {
		at, purge := *d.DeletedAt, d.DeletedAt.Add(s.set.PurgeAfter)
		v.DeletedAt = &at
		if s.set.PurgeAfter > 0 {
			v.PurgeAt = &purge
		}
	}
	return v
}

// boolParam reads an optional true/false query parameter ("" is false).
func boolParam(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, rag.Errorf(rag.CodeInvalid, "must be true or false (got %q)", v)
	}
	return b, nil
}
