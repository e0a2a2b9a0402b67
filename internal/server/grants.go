package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/ragd/ragd/internal/rag"
)

// Writes are checked here, with the store's write predicate (rag.AccessStore), before the write: a
// principal that cannot see the target gets not_found, one that sees but may not write it forbidden.
// Admins (configured keys, admin-scope keys, the local user) pass.

// mayWriteDocument checks that p may change the document.
func (s *Server) mayWriteDocument(ctx context.Context, p rag.Principal, id string) error {
	if p.Admin {
		return nil
	}
	if s.deps.Access == nil {
		return rag.Errorf(rag.CodeForbidden, "only admins write on this server")
	}
	acc, err := s.deps.Access.DocumentAccess(ctx, p, id)
	if err != nil {
		return err
	}
	if !acc.Write {
		return rag.Errorf(rag.CodeForbidden, "%s may read document %s but not change it", p.ID, id)
	}
	return nil
}

// mayWriteCollection checks that p may add documents to the collection (ID or name; "" is the default
// collection). A collection that does not exist is not_found for all but admins, who create it by
// uploading to it.
func (s *Server) mayWriteCollection(ctx context.Context, p rag.Principal, idOrName string) error {
	if p.Admin {
		return nil
	}
	if idOrName == "" {
		idOrName = rag.DefaultCollection
	}
	if s.deps.Access == nil {
		return rag.Errorf(rag.CodeForbidden, "only admins write on this server")
	}
	_, acc, err := s.deps.Access.CollectionAccess(ctx, p, idOrName)
	if err != nil {
		return err
	}
	if !acc.Write {
		return rag.Errorf(rag.CodeForbidden, "%s may not add documents to collection %s (its owner, or an admin of its owning team, may)", p.ID, idOrName)
	}
	return nil
}

// mayReadWhole checks that p sees the whole collection (by its owner and visibility, not only through
// grants on some documents): its graph, tables and counts. not_found otherwise, as for a collection p
// cannot see at all.
func (s *Server) mayReadWhole(ctx context.Context, p rag.Principal, idOrName string) error {
	if p.Admin {
		return nil
	}
	if s.deps.Access == nil {
		return rag.Errorf(rag.CodeForbidden, "only admins read collections on this server")
	}
	_, acc, err := s.deps.Access.CollectionAccess(ctx, p, idOrName)
	if err == nil && !acc.Whole {
		err = fmt.Errorf("collection %q: %w", idOrName, rag.ErrNotFound) // as for one that does not exist
	}
	return err
}

// grantsView is the body and answer of /api/documents/{id}/grants: who besides the owner, admins and the
// collection's visibility may read or write the document ("user:NAME" or "team:NAME" each).
type grantsView struct {
	Read  []string `json:"read"`
	Write []string `json:"write"`
	// Writable says whether the request's principal may change them (the UI shows its share button then).
	Writable bool `json:"writable"`
}

func viewGrants(d *rag.Document) grantsView {
	g := grantsView{Read: d.Readers, Write: d.Writers}
	if g.Read == nil {
		g.Read = []string{}
	}
	if g.Write == nil {
		g.Write = []string{}
	}
	return g
}

func (s *Server) handleGetGrants(w http.ResponseWriter, r *http.Request) {
	d, err := s.deps.Documents.GetDocument(r.Context(), principalOf(r), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeGrants(w, r, d)
}

// writeGrants answers a document's grants with whether the request's principal may (still) change them:
// after a PUT that removed its own write grant it may not.
func (s *Server) writeGrants(w http.ResponseWriter, r *http.Request, d *rag.Document) {
	v := viewGrants(d)
	p := principalOf(r)
	v.Writable = p.Allows(rag.ScopeWrite) && s.mayWriteDocument(r.Context(), p, d.ID) == nil
	writeJSON(w, http.StatusOK, v)
}

// maxGrants bounds the entries of one grant list.
const maxGrants = 100

// handlePutGrants replaces a document's grants; it needs write on the document.
func (s *Server) handlePutGrants(w http.ResponseWriter, r *http.Request) {
	var req grantsView
	if err := decodeJSON(w, r, MaxJSONBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, list := range [][]string{req.Read, req.Write} {
		if len(list) > maxGrants {
			s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "at most %d grants of each kind (got %d)", maxGrants, len(list)))
			return
		}
		for _, g := range list {
			if err := rag.CheckOwner("grant", g); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
	}
	p, id := principalOf(r), r.PathValue("id")
	if err := s.mayWriteDocument(r.Context(), p, id); err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := s.deps.Documents.UpdateDocument(r.Context(), p, id, rag.DocumentUpdate{Readers: nonNilList(req.Read), Writers: nonNilList(req.Write)})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeGrants(w, r, d)
}

func nonNilList(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
