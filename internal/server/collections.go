package server

import (
	"cmp"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/ragd/ragd/internal/access"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/reembed"
)

func (s *Server) handleListCollections(w http.ResponseWriter, r *http.Request) {
	cs, err := s.visibleCollections(r.Context(), principalOf(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if cs == nil {
		cs = []*rag.Collection{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"collections": cs})
}

// collectionRequest is the body of POST /api/collections.
type collectionRequest struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Settings    map[string]any `json:"settings"`
	// Owner is "user:NAME" or "team:NAME" (default: the caller); Visibility private (default), team or
	// public (docs/security.md).
	Owner      string         `json:"owner"`
	Visibility rag.Visibility `json:"visibility"`
}

// visibleCollections lists the collections p sees, in the store's query (all of them for admins).
func (s *Server) visibleCollections(ctx context.Context, p rag.Principal) ([]*rag.Collection, error) {
	if p.Admin {
		return s.deps.Collections.ListCollections(ctx)
	}
	if s.deps.Access == nil {
		return nil, rag.Errorf(rag.CodeForbidden, "only admins list collections on this server")
	}
	return s.deps.Access.VisibleCollections(ctx, p)
}

// collection returns a collection p sees (by ID or name); not_found otherwise.
func (s *Server) collection(ctx context.Context, p rag.Principal, idOrName string) (*rag.Collection, error) {
	if p.Admin {
		return s.deps.Collections.GetCollection(ctx, idOrName)
	}
	if s.deps.Access == nil {
		return nil, rag.Errorf(rag.CodeForbidden, "only admins read collections on this server")
	}
	c, _, err := s.deps.Access.CollectionAccess(ctx, p, idOrName)
	return c, err
}

// handleCreateCollection answers 201 with the collection, 409 conflict when the name exists.
func (s *Server) handleCreateCollection(w http.ResponseWriter, r *http.Request) {
	var req collectionRequest
	if err := decodeJSON(w, r, MaxJSONBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	name := strings.TrimSpace(req.Name)
	switch {
	case name == "":
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "name is required"))
		return
	case len([]rune(name)) > 100:
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "name is over 100 characters"))
		return
	}
	if _, err := rag.ParseSynonyms(req.Settings[rag.SynonymsSetting]); err != nil {
		s.writeError(w, r, err)
		return
	}
	owner := cmp.Or(strings.TrimSpace(req.Owner), principalOf(r).ID)
	if req.Owner != "" {
		err := rag.CheckOwner("owner", owner)
		if err == nil && s.deps.Principals != nil {
			err = access.CheckOwner(r.Context(), s.deps.Principals, owner)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	c := &rag.Collection{Name: name, Description: req.Description, Settings: req.Settings, Owner: owner, Visibility: req.Visibility}
	if err := s.deps.Collections.CreateCollection(r.Context(), c); err != nil {
		if rag.ErrorCode(err) == rag.CodeConflict {
			err = rag.WrapError(rag.CodeConflict, err, "a collection named %q already exists", name)
		}
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, c)
}

// statusView is GET /api/status: which models are active (the UI shows them) and how much is indexed.
type statusView struct {
	Store     string       `json:"store"`
	Embedder  embedderView `json:"embedder"`
	Generator string       `json:"generator"`
	// Embedding is the state of the embedding spaces: which one searches use, and the re-embed into the
	// configured one after a change of embedder.
	Embedding *reembed.Status `json:"embedding"`
	Documents map[string]int  `json:"documents"`
	Chunks    int             `json:"chunks"`
	Auth      bool            `json:"auth"`
	Limits    limitsView      `json:"limits"`
}

type embedderView struct {
	Space    string `json:"space"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Dim      int    `json:"dim"`
	// Lexical is true for the offline hash embedder: it matches words, not meaning.
	Lexical bool   `json:"lexical"`
	Note    string `json:"note,omitempty"`
}

type limitsView struct {
	ChatPerMinute    int   `json:"chat_per_minute"`
	SearchPerMinute  int   `json:"search_per_minute"`
	MaxUploadBytes   int64 `json:"max_upload_bytes"`
	MaxQuestionChars int   `json:"max_question_chars"`
	MaxJSONBytes     int   `json:"max_json_bytes"`
	HistoryTurns     int   `json:"history_turns"`
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	set := s.set
	sp := set.Embedder
	st := statusView{
		Store:     set.StoreKind,
		Embedder:  embedderView{Space: sp.ID(), Provider: sp.Provider, Model: sp.Model, Dim: sp.Dim, Lexical: sp.Provider == "hash"},
		Generator: set.Generator,
		Auth:      authenticated(r),
		Limits: limitsView{
			ChatPerMinute: set.RateLimitChat, SearchPerMinute: set.RateLimitSearch, MaxUploadBytes: set.MaxUploadBytes,
			MaxQuestionChars: rag.MaxQuestionChars, MaxJSONBytes: MaxJSONBody, HistoryTurns: rag.MaxHistoryTurns,
		},
	}
	if st.Embedder.Lexical {
		st.Embedder.Note = "The default hash embedder is lexical: it matches words and word pieces, not meaning. " +
			"Set RAGD_EMBEDDER to a neural embedder (gemini, openai, or an OpenAI-compatible server) for semantic search."
	}
	counts, err := s.documentCounts(r.Context(), principalOf(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st.Documents = counts
	if !principalOf(r).Admin {
		// Chunk and vector counts are the whole store's: only admins see them.
		writeJSON(w, http.StatusOK, st)
		return
	}
	emb, err := s.deps.Embedding.Status(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st.Embedding, st.Chunks = emb, emb.Chunks
	writeJSON(w, http.StatusOK, st)
}

// documentCounts counts the visible documents per status, and in total.
func (s *Server) documentCounts(ctx context.Context, p rag.Principal) (map[string]int, error) {
	out := map[string]int{}
	total := 0
	for _, st := range []rag.Status{rag.StatusQueued, rag.StatusProcessing, rag.StatusReady, rag.StatusFailed} {
		page, err := s.deps.Documents.ListDocuments(ctx, p, rag.DocumentQuery{Statuses: []rag.Status{st}, Limit: 1})
		if err != nil {
			return nil, err
		}
		out[string(st)] = page.Total
		total += page.Total
	}
	out["total"] = total
	return out, nil
}

// collectionView is a collection as GET and PUT /api/collections/{name} show it: with its profile in full,
// defaults filled in (a collection without a stored profile shows the one its settings give).
type collectionView struct {
	*rag.Collection
	Profile profile.Profile `json:"profile"`
}

func viewCollection(c *rag.Collection) (*collectionView, error) {
	p, err := profile.Of(c)
	if err != nil {
		return nil, err
	}
	return &collectionView{Collection: c, Profile: p}, nil
}

// handleGetCollection answers 200 with the collection and its profile, 404 not_found.
func (s *Server) handleGetCollection(w http.ResponseWriter, r *http.Request) {
	c, err := s.collection(r.Context(), principalOf(r), r.PathValue("name"))
	if err == nil {
		var v *collectionView
		if v, err = viewCollection(c); err == nil {
			writeJSON(w, http.StatusOK, v)
			return
		}
	}
	s.writeError(w, r, err)
}

// handlePutCollection applies the profile in the body (JSON, or YAML with Content-Type application/yaml;
// docs/collections.md) to the collection, creating
// it when it does not exist: 201 when created, 200 when updated, 400 invalid_request naming the field, 403
// forbidden when the collection is another principal's and the caller is not an admin.
func (s *Server) handlePutCollection(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.PathValue("name"))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, profile.MaxDocumentBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			err = rag.Errorf(rag.CodePayloadTooLarge, "request body is over %d bytes", profile.MaxDocumentBytes)
		}
		s.writeError(w, r, err)
		return
	}
	// The profile file itself, YAML, when the client says so (examples/pumsem/load sends collection.yaml);
	// JSON otherwise.
	decode := profile.DecodeJSON
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/yaml" || ct == "application/x-yaml" || ct == "text/yaml" {
		decode = func(what string, data []byte) (*profile.Profile, error) { return profile.Decode(what+".yaml", data) }
	}
	p, err := decode("request body", body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if p.Name == "" {
		p.Name = name
	}
	pr := principalOf(r)
	if c, err := s.deps.Collections.GetCollection(r.Context(), name); err == nil && !pr.Admin && c.Owner != pr.ID {
		s.writeError(w, r, rag.Errorf(rag.CodeForbidden, "collection %q belongs to another user", name))
		return
	}
	c, created, err := profile.Put(r.Context(), s.deps.Collections, name, p, pr.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, err := viewCollection(c)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, v)
}

// handleCollectionAccess is PUT /api/collections/{name}/access {"owner", "visibility"} (admin scope): a new
// owner (an existing user or team) and/or visibility; 200 with the collection.
func (s *Server) handleCollectionAccess(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Owner      string         `json:"owner"`
		Visibility rag.Visibility `json:"visibility"`
	}
	if err := decodeJSON(w, r, MaxJSONBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	err := rag.CheckAccessChange(req.Owner, req.Visibility)
	if err == nil && req.Owner == "" && req.Visibility == "" {
		err = rag.Errorf(rag.CodeInvalid, "owner or visibility is required")
	}
	if err == nil && req.Owner != "" && s.deps.Principals != nil {
		err = access.CheckOwner(r.Context(), s.deps.Principals, req.Owner)
	}
	if err == nil && s.deps.Access == nil {
		err = rag.Errorf(rag.CodeNotFound, "this server keeps no collection access")
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.deps.Access.SetCollectionAccess(r.Context(), r.PathValue("name"), req.Owner, req.Visibility)
	s.answer(w, r, http.StatusOK, c, err)
}
