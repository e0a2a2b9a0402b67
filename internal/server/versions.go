package server

import (
	"cmp"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// Versions (docs/security.md "Versions"): every committed version of a document keeps its record, its
// original file and (from this release on) its extracted text, under the document's own visibility: a
// principal that cannot see the document cannot see any of its versions (404 alike).

// versionView is a version as GET /api/documents/{id}/versions/{n} shows it: its record, whether it is the
// current one, and its extracted text (null for versions committed before ragd kept it).
type versionView struct {
	*rag.DocumentVersion
	Current bool    `json:"current"`
	Text    *string `json:"text"`
}

func (s *Server) handleListVersions(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	vs, err := s.deps.Documents.ListVersions(r.Context(), principalOf(r), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if vs == nil {
		vs = []*rag.DocumentVersion{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"document_id": id, "versions": vs})
}

// handleDocumentHistory answers GET /api/documents/{id}/history?limit=N: the document's last N (default 100,
// at most rag.MaxHistory) changes of state, oldest first, under the document's visibility (404 alike).
func (s *Server) handleDocumentHistory(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", 100, 1, rag.MaxHistory)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id := r.PathValue("id")
	events, err := s.deps.Documents.DocumentHistory(r.Context(), principalOf(r), id, limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if events == nil {
		events = []*rag.DocumentEvent{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"document_id": id, "events": events})
}

// version returns the document (as the principal sees it) and its version n; 404 for either unknown, 400
// for an n that is not a positive number.
func (s *Server) version(r *http.Request) (*rag.Document, *rag.DocumentVersion, error) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		return nil, nil, rag.Errorf(rag.CodeInvalid, "a version is a number from 1 (got %q)", r.PathValue("n"))
	}
	p, id := principalOf(r), r.PathValue("id")
	d, err := s.deps.Documents.GetDocument(r.Context(), p, id)
	if err != nil {
		return nil, nil, err
	}
	vs, err := s.deps.Documents.ListVersions(r.Context(), p, id)
	if err != nil {
		return nil, nil, err
	}
	i := slices.IndexFunc(vs, func(v *rag.DocumentVersion) bool { return v.Version == n })
	if i < 0 {
		return nil, nil, fmt.Errorf("document %s has no version %d: %w", id, n, rag.ErrNotFound)
	}
	return d, vs[i], nil
}

func (s *Server) handleGetVersion(w http.ResponseWriter, r *http.Request) {
	d, v, err := s.version(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := versionView{DocumentVersion: v, Current: v.Version == d.Version}
	if v.TextHash != "" {
		b, err := s.deps.Documents.DocumentBlob(r.Context(), principalOf(r), d.ID, v.TextHash)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		text := string(b)
		out.Text = &text
	}
	writeJSON(w, http.StatusOK, out)
}

// handleVersionFile sends the original file of a version as an attachment of its media type. The sandbox
// policy keeps a browser from running what an HTML or SVG original contains even if it is opened in place.
func (s *Server) handleVersionFile(w http.ResponseWriter, r *http.Request) {
	d, v, err := s.version(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	b, err := s.deps.Documents.DocumentBlob(r.Context(), principalOf(r), d.ID, v.ContentHash)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	name := cmp.Or(path.Base(v.Source), "document")
	if name == "." || name == "/" {
		name = "document"
	}
	serveOriginal(w, r, b, v.ContentHash, v.MediaType, name)
}

// handleRevert makes version n the document's next version: 202 with the document (its original queued;
// committed under a new version number), or 200 unchanged when n is the current version.
func (s *Server) handleRevert(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "a version is a number from 1 (got %q)", r.PathValue("n")))
		return
	}
	p := principalOf(r)
	d, outcome, err := s.deps.Ingest.Revert(r.Context(), p, r.PathValue("id"), n)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if outcome == ingest.Queued {
		status = http.StatusAccepted
		if !s.schedule(w, r, d, d.Source) {
			return
		}
	}
	v := viewDocument(d)
	v.Outcome = string(outcome)
	writeJSON(w, status, v)
}
