// Package server is ragd's HTTP API and web UI. All routes are listed in one place (routes); handlers decode,
// call the app's services and encode — they contain no SQL and no retrieval logic. Middleware, outermost
// first: panic recovery, request log, CORS (answers preflights), API-key authentication of /api/*; chat and
// search are rate limited per key (or per client IP without keys).
package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/rag"
)

// MaxJSONBody is the largest JSON request body accepted by chat and search (10 KB); larger bodies are 413.
const MaxJSONBody = 10 * 1024

// MaxFilesPerUpload is how many files one upload request may carry.
const MaxFilesPerUpload = 100

// Enqueuer schedules the processing of a submitted document version. The durable job runner
// (*jobs.Runner) implements it; the server calls it after ingest.Pipeline.Submit has recorded a queued
// document, so an upload survives a crash between the two (the runner's start-up reconciliation enqueues it).
type Enqueuer interface {
	EnqueueIngest(ctx context.Context, documentID, contentHash string) error
}

// Server serves the API and the UI over an App.
type Server struct {
	app     *app.App
	log     *slog.Logger
	mux     *http.ServeMux
	handler http.Handler
	now     func() time.Time

	keys        *keyring
	cors        corsPolicy
	chatLimit   *limiter
	searchLimit *limiter

	enqueuer Enqueuer
}

// Option configures a Server.
type Option func(*Server)

// WithEnqueuer makes uploads schedule their processing through e instead of the app's job runner.
func WithEnqueuer(e Enqueuer) Option { return func(s *Server) { s.enqueuer = e } }

// WithClock replaces the clock of the rate limiters (tests fix time with it).
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// New returns a Server for a. Uploads are processed in the background by the durable job runner: a.Jobs
// (see app.App.OpenJobs), or the Enqueuer given WithEnqueuer. There is no in-process fallback — one
// mechanism, whether the jobs run in this process or in `ragd worker`s — so New panics when it has neither.
// The server only enqueues: starting and stopping the runner is the caller's (ragd serve's) business.
func New(a *app.App, opts ...Option) *Server {
	s := &Server{app: a, log: a.Logger, mux: http.NewServeMux(), now: time.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, o := range opts {
		o(s)
	}
	s.keys = newKeyring(a.Config.APIKeys)
	s.cors = newCORSPolicy(a.Config.CORSOrigins)
	s.chatLimit = newLimiter(a.Config.RateLimitChat, s.now)
	s.searchLimit = newLimiter(a.Config.RateLimitSearch, s.now)
	if s.enqueuer == nil && a.Jobs != nil {
		s.enqueuer = a.Jobs
	}
	if s.enqueuer == nil {
		panic("server: no job runner to process uploads: open it with App.OpenJobs or pass WithEnqueuer")
	}
	s.routes()
	s.handler = s.recoverPanics(s.logRequests(s.withCORS(s.authenticate(s.mux))))
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// routes lists every route of the server.
func (s *Server) routes() {
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	s.mux.HandleFunc("GET /readyz", s.handleReady)

	s.mux.HandleFunc("GET /api/status", s.handleStatus)
	s.mux.HandleFunc("POST /api/chat", s.limited(s.chatLimit, s.handleChat))
	s.mux.HandleFunc("POST /api/search", s.limited(s.searchLimit, s.handleSearch))

	s.mux.HandleFunc("GET /api/documents", s.handleListDocuments)
	s.mux.HandleFunc("POST /api/documents", s.handleCreateDocuments)
	s.mux.HandleFunc("GET /api/documents/{id}", s.handleGetDocument)
	s.mux.HandleFunc("PUT /api/documents/{id}", s.handleUpdateDocument)
	s.mux.HandleFunc("DELETE /api/documents/{id}", s.handleDeleteDocument)
	s.mux.HandleFunc("GET /api/documents/{id}/chunks", s.handleListChunks)

	s.mux.HandleFunc("GET /api/collections", s.handleListCollections)
	s.mux.HandleFunc("POST /api/collections", s.handleCreateCollection)

	// Anything else under /api/ is a JSON 404 (or 405 from the patterns above), never the UI.
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, rag.Errorf(rag.CodeNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
	})

	s.mux.Handle("GET /{$}", s.page("index.html"))
	s.mux.Handle("GET /documents", s.page("documents.html"))
	s.mux.Handle("/", s.assets())
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if err := s.app.Store.Ping(r.Context()); err != nil {
		s.writeError(w, r, rag.WrapError(rag.CodeDBError, err, "store not ready"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
