package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/access"
	"github.com/ragd/ragd/internal/rag"
)

// The /api/admin/ routes manage users, teams and API keys (docs/security.md); the authentication
// middleware lets only principals with the admin scope reach them.

// adminRoutes lists the /api/admin/ routes.
func (s *Server) adminRoutes() {
	s.mux.HandleFunc("GET /api/admin/users", s.admin(s.handleListUsers))
	s.mux.HandleFunc("POST /api/admin/users", s.admin(s.handleCreateUser))
	s.mux.HandleFunc("PUT /api/admin/users/{name}", s.admin(s.handlePutUser))
	s.mux.HandleFunc("GET /api/admin/teams", s.admin(s.handleListTeams))
	s.mux.HandleFunc("POST /api/admin/teams", s.admin(s.handleCreateTeam))
	s.mux.HandleFunc("GET /api/admin/teams/{name}/members", s.admin(s.handleTeamMembers))
	s.mux.HandleFunc("PUT /api/admin/teams/{name}/members/{user}", s.admin(s.handlePutMember))
	s.mux.HandleFunc("DELETE /api/admin/teams/{name}/members/{user}", s.admin(s.handleRemoveMember))
	s.mux.HandleFunc("GET /api/admin/keys", s.admin(s.handleListKeys))
	s.mux.HandleFunc("POST /api/admin/keys", s.admin(s.handleCreateKey))
	s.mux.HandleFunc("DELETE /api/admin/keys/{prefix}", s.admin(s.handleRevokeKey))
}

// admin runs h with the principal store, or answers not_found when the server has none.
func (s *Server) admin(h func(http.ResponseWriter, *http.Request, rag.PrincipalStore)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.deps.Principals == nil {
			s.writeError(w, r, rag.Errorf(rag.CodeNotFound, "this server keeps no users"))
			return
		}
		h(w, r, s.deps.Principals)
	}
}

func (s *Server) handleListUsers(w http.ResponseWriter, r *http.Request, ps rag.PrincipalStore) {
	users, err := ps.ListUsers(r.Context())
	s.answer(w, r, http.StatusOK, map[string]any{"users": users}, err)
}

// answer writes v with status, or err when it is not nil.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, status, v)
}

// userRequest is the body of POST /api/admin/users: a new user, optionally added to a team at once.
type userRequest struct {
	Name string       `json:"name"`
	Team string       `json:"team"`
	Role rag.TeamRole `json:"role"` // in Team; member by default
}

// handleCreateUser answers 201 with the user; 409 conflict when the name exists, 404 for an unknown team.
func (s *Server) handleCreateUser(w http.ResponseWriter, r *http.Request, ps rag.PrincipalStore) {
	var req userRequest
	if err := decodeJSON(w, r, MaxJSONBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	u, err := access.AddUser(r.Context(), ps, req.Name, req.Team, req.Role)
	s.answer(w, r, http.StatusCreated, u, err)
}

// handlePutUser changes a user: {"disabled": true} disables it (its keys are refused), false enables it.
func (s *Server) handlePutUser(w http.ResponseWriter, r *http.Request, ps rag.PrincipalStore) {
	var req struct {
		Disabled *bool `json:"disabled"`
	}
	if err := decodeJSON(w, r, MaxJSONBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Disabled == nil {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "disabled (true or false) is required"))
		return
	}
	name := r.PathValue("name")
	err := ps.SetUserDisabled(r.Context(), name, *req.Disabled)
	s.answer(w, r, http.StatusOK, map[string]any{"name": name, "disabled": *req.Disabled}, err)
}

func (s *Server) handleListTeams(w http.ResponseWriter, r *http.Request, ps rag.PrincipalStore) {
	teams, err := ps.ListTeams(r.Context())
	s.answer(w, r, http.StatusOK, map[string]any{"teams": teams}, err)
}

// handleCreateTeam answers 201 with the team; 409 conflict when the name exists.
func (s *Server) handleCreateTeam(w http.ResponseWriter, r *http.Request, ps rag.PrincipalStore) {
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeJSON(w, r, MaxJSONBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	t := &rag.Team{Name: req.Name}
	s.answer(w, r, http.StatusCreated, t, ps.CreateTeam(r.Context(), t))
}

func (s *Server) handleTeamMembers(w http.ResponseWriter, r *http.Request, ps rag.PrincipalStore) {
	members, err := ps.TeamMembers(r.Context(), r.PathValue("name"))
	s.answer(w, r, http.StatusOK, map[string]any{"members": members}, err)
}

// handlePutMember adds a user to a team or changes its role: {"role": "member"|"admin"} (member when
// absent).
func (s *Server) handlePutMember(w http.ResponseWriter, r *http.Request, ps rag.PrincipalStore) {
	var req struct {
		Role rag.TeamRole `json:"role"`
	}
	if err := decodeJSON(w, r, MaxJSONBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Role == "" {
		req.Role = rag.RoleMember
	}
	m := rag.TeamMember{Team: r.PathValue("name"), User: r.PathValue("user"), Role: req.Role}
	noteTarget(r, memberTarget(m.Team, m.User))
	s.answer(w, r, http.StatusOK, m, ps.PutTeamMember(r.Context(), m))
}

// handleRemoveMember takes a user out of a team (204); its keys lose the team's access on their next
// request. 404 when the user is not a member.
func (s *Server) handleRemoveMember(w http.ResponseWriter, r *http.Request, ps rag.PrincipalStore) {
	team, user := r.PathValue("name"), r.PathValue("user")
	noteTarget(r, memberTarget(team, user))
	if err := ps.RemoveTeamMember(r.Context(), team, user); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// memberTarget is the audit target of a change to a team's membership: "team:TEAM/user:USER".
func memberTarget(team, user string) string {
	return rag.TeamPrefix + team + "/" + rag.UserPrefix + user
}

func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request, ps rag.PrincipalStore) {
	keys, err := ps.ListAPIKeys(r.Context())
	s.answer(w, r, http.StatusOK, map[string]any{"keys": keys}, err)
}

// keyRequest is the body of POST /api/admin/keys.
type keyRequest struct {
	User   string   `json:"user"`
	Scopes []string `json:"scopes"`
	// ExpiresIn is a Go duration ("720h"); empty: the key never expires.
	ExpiresIn string `json:"expires_in"`
}

// createdKey is the answer to POST /api/admin/keys: the key, shown this once, and its record.
type createdKey struct {
	Key string `json:"key"`
	*rag.APIKey
}

// handleCreateKey answers 201 with the new key; 404 for an unknown user, 400 for a bad scope or expiry.
func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request, ps rag.PrincipalStore) {
	var req keyRequest
	if err := decodeJSON(w, r, MaxJSONBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	scopes, err := rag.ParseScopes(strings.Join(req.Scopes, ","))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var ttl time.Duration
	if req.ExpiresIn != "" {
		if ttl, err = time.ParseDuration(req.ExpiresIn); err != nil || ttl <= 0 {
			s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "expires_in %q is not a positive duration like 720h", req.ExpiresIn))
			return
		}
	}
	key, rec, err := access.CreateKey(r.Context(), ps, req.User, scopes, ttl, time.Now())
	if err == nil {
		noteTarget(r, rec.Prefix)
	}
	s.answer(w, r, http.StatusCreated, createdKey{Key: key, APIKey: rec}, err)
}

// handleRevokeKey revokes the key with that prefix (or whole key) and answers its record.
func (s *Server) handleRevokeKey(w http.ResponseWriter, r *http.Request, ps rag.PrincipalStore) {
	k, err := ps.RevokeAPIKey(r.Context(), access.RevocationTarget(r.PathValue("prefix")))
	s.answer(w, r, http.StatusOK, k, err)
}
