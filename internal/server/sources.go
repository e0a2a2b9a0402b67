package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/ragd/ragd/internal/connector/git"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sources"
)

// Sources adds, lists, removes and syncs collections' sources (*sources.Service implements it;
// docs/connectors.md).
type Sources interface {
	Add(ctx context.Context, req sources.AddRequest) (*rag.SyncSource, error)
	List(ctx context.Context, collection string) ([]*rag.SyncSource, error)
	Get(ctx context.Context, collection, id string) (*rag.SyncSource, error)
	Remove(ctx context.Context, collection, id string) error
	Items(ctx context.Context, id string) ([]*rag.SyncItem, error)
	SyncSoon(id string) <-chan error
	Kinds() []string
}

// localKinds read the machine ragd runs on: only admins add them, since any file ragd can read would
// become a document. A git source of a local repository does too (git.ReadsLocal).
var localKinds = map[string]bool{"folder": true}

// SyncWait is how long POST …/sources/{id}/sync waits for the sync to end before it answers 202 with the
// source still running.
var SyncWait = 30 * time.Second

// maxFailedItems bounds the failed items GET …/sources/{id} shows.
const maxFailedItems = 100

// sourceView is a source as the API shows it; GET of one source adds its items' counts and failures.
type sourceView struct {
	*rag.SyncSource
	Collection  string          `json:"collection"`
	Items       *int            `json:"items,omitempty"`
	FailedItems []*rag.SyncItem `json:"failed_items,omitempty"`
}

func (s *Server) sourcesOrError(w http.ResponseWriter, r *http.Request) bool {
	if s.deps.Sources == nil {
		s.writeError(w, r, rag.Errorf(rag.CodeNotFound, "this server syncs no sources"))
		return false
	}
	return true
}

// handleAddSource is POST /api/collections/{name}/sources: the body is the source's kind and settings
// (and optionally "schedule" and "credentials"). 201 with the source; its first sync starts at once.
func (s *Server) handleAddSource(w http.ResponseWriter, r *http.Request) {
	if !s.sourcesOrError(w, r) {
		return
	}
	p, name := principalOf(r), r.PathValue("name")
	var spec json.RawMessage
	if err := decodeJSON(w, r, sources.MaxSettingsBytes, &spec); err != nil {
		s.writeError(w, r, err)
		return
	}
	var head struct {
		Kind string `json:"kind"`
	}
	_ = json.Unmarshal(spec, &head)
	if (localKinds[head.Kind] || head.Kind == git.Kind && git.ReadsLocal(spec)) && !p.Admin {
		s.writeError(w, r, rag.Errorf(rag.CodeForbidden, "only admins add %s sources: they read files of the server's machine", head.Kind))
		return
	}
	if err := s.mayWriteCollection(r.Context(), p, name); err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, err := s.deps.Collections.EnsureCollection(r.Context(), name, p.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	src, err := s.deps.Sources.Add(r.Context(), sources.AddRequest{Collection: name, Spec: spec, Owner: p.ID})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	noteTarget(r, src.ID)
	s.deps.Sources.SyncSoon(src.ID)
	writeJSON(w, http.StatusCreated, sourceView{SyncSource: src, Collection: name})
}

// handleListSources is GET /api/collections/{name}/sources, with the kinds this server syncs.
func (s *Server) handleListSources(w http.ResponseWriter, r *http.Request) {
	if !s.sourcesOrError(w, r) {
		return
	}
	p, name := principalOf(r), r.PathValue("name")
	if err := s.mayReadWhole(r.Context(), p, name); err != nil {
		s.writeError(w, r, err)
		return
	}
	list, err := s.deps.Sources.List(r.Context(), name)
	if errors.Is(err, rag.ErrNotFound) && p.Admin {
		list, err = []*rag.SyncSource{}, nil // an admin's first source creates the collection
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	views := make([]sourceView, len(list))
	for i, src := range list {
		views[i] = sourceView{SyncSource: src, Collection: name}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sources": views, "kinds": s.deps.Sources.Kinds()})
}

// handleGetSource is GET /api/collections/{name}/sources/{id}: the source, its sync state, how many items
// it has and those whose last try failed.
func (s *Server) handleGetSource(w http.ResponseWriter, r *http.Request) {
	if !s.sourcesOrError(w, r) {
		return
	}
	name := r.PathValue("name")
	if err := s.mayReadWhole(r.Context(), principalOf(r), name); err != nil {
		s.writeError(w, r, err)
		return
	}
	v, err := s.sourceDetail(r.Context(), name, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) sourceDetail(ctx context.Context, name, id string) (*sourceView, error) {
	src, err := s.deps.Sources.Get(ctx, name, id)
	if err != nil {
		return nil, err
	}
	items, err := s.deps.Sources.Items(ctx, id)
	if err != nil {
		return nil, err
	}
	n := len(items)
	v := &sourceView{SyncSource: src, Collection: name, Items: &n, FailedItems: []*rag.SyncItem{}}
	for _, it := range items {
		if it.Error != "" && len(v.FailedItems) < maxFailedItems {
			v.FailedItems = append(v.FailedItems, it)
		}
	}
	return v, nil
}

// handleDeleteSource is DELETE /api/collections/{name}/sources/{id}: the source goes, its documents stay.
func (s *Server) handleDeleteSource(w http.ResponseWriter, r *http.Request) {
	if !s.sourcesOrError(w, r) {
		return
	}
	name := r.PathValue("name")
	if err := s.mayWriteCollection(r.Context(), principalOf(r), name); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.deps.Sources.Remove(r.Context(), name, r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleSyncSource is POST /api/collections/{name}/sources/{id}/sync: a sync now (after the one running,
// if any). 200 with the source once it ended (its state says whether it failed), 202 when it runs on after
// SyncWait.
func (s *Server) handleSyncSource(w http.ResponseWriter, r *http.Request) {
	if !s.sourcesOrError(w, r) {
		return
	}
	name, id := r.PathValue("name"), r.PathValue("id")
	if err := s.mayWriteCollection(r.Context(), principalOf(r), name); err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, err := s.deps.Sources.Get(r.Context(), name, id); err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	select {
	case err := <-s.deps.Sources.SyncSoon(id):
		if errors.Is(err, rag.ErrNotFound) {
			s.writeError(w, r, err)
			return
		}
	case <-time.After(SyncWait):
		status = http.StatusAccepted
	case <-r.Context().Done():
		return
	}
	v, err := s.sourceDetail(r.Context(), name, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, status, v)
}
