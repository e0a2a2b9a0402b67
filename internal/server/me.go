package server

import (
	"net/http"
	"strings"

	"github.com/ragd/ragd/internal/rag"
)

// meView is the body of GET /api/me: who the request's key is, so that the UI can show it and offer only
// what its scopes allow.
type meView struct {
	// Principal is the ID: "user:NAME", "key:…" (a configured key) or "local" (no keys anywhere).
	Principal string `json:"principal"`
	// User is NAME of a "user:NAME" principal, else empty.
	User string `json:"user,omitempty"`
	// Teams are the user's teams (never null).
	Teams []string `json:"teams"`
	// Scopes are the effective scopes: write implies read, admin implies all.
	Scopes []rag.Scope `json:"scopes"`
	Admin  bool        `json:"admin"`
	// KeysRequired is false in single-user local mode (no key configured or stored).
	KeysRequired bool `json:"keys_required"`
}

// handleMe answers the request's principal. It needs only the read scope (it is a GET), which every key has.
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	v := meView{Principal: p.ID, Teams: append([]string{}, p.Groups...), Admin: p.Admin, KeysRequired: authenticated(r)}
	if name, ok := strings.CutPrefix(p.ID, "user:"); ok {
		v.User = name
	}
	v.Scopes = []rag.Scope{}
	for _, sc := range []rag.Scope{rag.ScopeRead, rag.ScopeWrite, rag.ScopeAdmin} {
		if p.Allows(sc) {
			v.Scopes = append(v.Scopes, sc)
		}
	}
	writeJSON(w, http.StatusOK, v)
}
