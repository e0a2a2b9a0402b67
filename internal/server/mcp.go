package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/mcpserver"
	"github.com/ragd/ragd/internal/rag"
)

// mcpBodyLimit is the largest MCP request body (the go-sdk's default, 4 MiB): ingest_text's text
// (mcpserver.MaxTextBytes) fits with room for JSON escaping.
const mcpBodyLimit = mcp.DefaultMaxRequestBodyBytes

// routesMCP serves the MCP server (internal/mcpserver) over streamable HTTP at /mcp. It is stateless: every
// POST carries its own key and any ragd process behind a load balancer can answer it (GET and DELETE, which
// only sessions use, are 405). With API keys, a request needs one in "Authorization: Bearer" (or
// X-RAG-API-Key); its principal reaches the tools through the go-sdk's TokenInfo.
func (s *Server) routesMCP() {
	build := func(p *rag.Principal) http.Handler {
		d := mcpserver.Deps{Search: s.deps.Search, Answers: s.deps.Answers, Collections: s.deps.Collections,
			Documents: s.deps.Documents, Ingest: serverIngester{s}, MaxTextBytes: min(s.set.MaxUploadBytes, mcpserver.MaxTextBytes),
			Principal: p}
		if s.deps.Audit != nil {
			d.Audit = s.auditMCP
		}
		srv := mcpserver.New(d)
		return readBodyFirst(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: true, Logger: s.log, MaxRequestBodyBytes: mcpBodyLimit,
				PropagateRequestCancellation: true}))
	}
	// Without any key (configured or stored) every call is the local user's; once keys exist, a call needs
	// one, as on /api. Keys do not all expire.
	open := build(&rag.LocalPrincipal)
	guarded := auth.RequireBearerToken(s.verifyMCPKey, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(build(nil))
	s.mux.Handle("/mcp", s.mcpGuard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		required, err := s.authRequired(r.Context())
		r = r.WithContext(context.WithValue(r.Context(), clientAddrKey{}, clientAddr(r)))
		switch {
		case err != nil:
			s.writeError(w, r, err)
		case required:
			if r.Header.Get("Authorization") == "" {
				s.auditRefused(r, "", http.StatusUnauthorized, "no key")
			}
			guarded.ServeHTTP(w, r)
		default:
			open.ServeHTTP(w, r)
		}
	})))
}

// verifyMCPKey is the bearer-token verifier of /mcp: a configured key's principal, as TokenInfo.UserID (the
// go-sdk keeps a session's requests to one user) and under mcpserver.PrincipalExtra for the tools.
func (s *Server) verifyMCPKey(ctx context.Context, key string, r *http.Request) (*auth.TokenInfo, error) {
	p, err := s.resolveKey(ctx, key)
	if errors.Is(err, rag.ErrNotFound) {
		s.auditRefused(r, "", http.StatusUnauthorized, "invalid key")
		return nil, auth.ErrInvalidToken
	}
	if err == nil && !p.Allows(rag.ScopeRead) {
		s.auditRefused(r, p.ID, http.StatusUnauthorized, "missing scope read")
		return nil, auth.ErrInvalidToken
	}
	if err != nil {
		return nil, err
	}
	return &auth.TokenInfo{UserID: p.ID, Extra: map[string]any{mcpserver.PrincipalExtra: p}}, nil
}

// mcpGuard gives /mcp what the /api middleware gives /api routes: no caching, the CORS allow-list for
// cross-origin requests, X-RAG-API-Key as well as Authorization: Bearer.
func (s *Server) mcpGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if o := r.Header.Get("Origin"); o != "" && !s.cors.allows(o) && !sameOrigin(r, o) {
			s.writeError(w, r, rag.Errorf(rag.CodeForbidden, "origin %s is not allowed", o))
			return
		}
		if k := r.Header.Get("X-RAG-API-Key"); k != "" && r.Header.Get("Authorization") == "" {
			r.Header.Set("Authorization", "Bearer "+k)
		}
		next.ServeHTTP(w, r)
	})
}

// readBodyFirst reads an authenticated POST's body (at most mcpBodyLimit + 1 bytes; the transport refuses
// a larger one) and then lifts the read deadline, as handleChat does, so that a long answer is not cut by
// RAGD_READ_TIMEOUT.
func readBodyFirst(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, mcpBodyLimit+1))
			if err != nil {
				return // the client went away or sent too slowly
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		}
		next.ServeHTTP(w, r)
	})
}

// serverIngester adds ingest_text's documents as uploads are: recorded, then queued for the job runner.
type serverIngester struct{ s *Server }

func (i serverIngester) IngestText(ctx context.Context, p rag.Principal, req ingest.Request) (mcpserver.Ingested, error) {
	// As POST /api/documents: the write scope, and write on the collection.
	if !p.Allows(rag.ScopeWrite) {
		return mcpserver.Ingested{}, rag.Errorf(rag.CodeForbidden, "this key lacks the write scope that ingest_text needs")
	}
	if err := i.s.mayWriteCollection(ctx, p, req.Collection); err != nil {
		return mcpserver.Ingested{}, err
	}
	// submit takes the request only for its context.
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/mcp", nil)
	if err != nil {
		return mcpserver.Ingested{}, err
	}
	v, err := i.s.submit(r, p, req)
	if err != nil {
		return mcpserver.Ingested{}, err
	}
	return mcpserver.Ingested{ID: v.ID, Status: v.Status, Chunks: v.ChunkCount, Outcome: ingest.Outcome(v.Outcome)}, nil
}
