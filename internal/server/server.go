// Package server is ragd's HTTP API and web UI. All routes are listed in one place (routes); handlers decode,
// call the services given in Deps and encode — they contain no SQL and no retrieval logic. The server knows
// those services only through the small interfaces below, so it depends on no store, job runner or model
// SDK: `ragd serve` (internal/cli) builds Deps from the wired app. Middleware, outermost first: panic
// recovery, request log, CORS (answers preflights), API-key authentication of /api/*; chat and search are
// rate limited per key (or per client IP without keys).
package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/reembed"
	"github.com/ragd/ragd/internal/slots"
)

// MaxJSONBody is the largest JSON request body accepted by chat and search (10 KB); larger bodies are 413.
const MaxJSONBody = 10 * 1024

// MaxFilesPerUpload is how many files one upload request may carry.
const MaxFilesPerUpload = 100

// Documents reads and changes documents as a principal sees them (rag.Store implements it).
type Documents interface {
	ListDocuments(ctx context.Context, p rag.Principal, q rag.DocumentQuery) (*rag.DocumentPage, error)
	GetDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error)
	UpdateDocument(ctx context.Context, p rag.Principal, id string, u rag.DocumentUpdate) (*rag.Document, error)
	TrashDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error)
	RestoreDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error)
	DocumentBlob(ctx context.Context, p rag.Principal, documentID, hash string) ([]byte, error)
	ListVersions(ctx context.Context, p rag.Principal, id string) ([]*rag.DocumentVersion, error)
	DocumentHistory(ctx context.Context, p rag.Principal, id string, limit int) ([]*rag.DocumentEvent, error)
	ListChunks(ctx context.Context, p rag.Principal, id string) ([]*rag.Chunk, error)
}

// Collections lists, reads, creates and updates collections (rag.Store implements it).
type Collections interface {
	ListCollections(ctx context.Context) ([]*rag.Collection, error)
	GetCollection(ctx context.Context, idOrName string) (*rag.Collection, error)
	CreateCollection(ctx context.Context, c *rag.Collection) error
	UpdateCollection(ctx context.Context, c *rag.Collection) error
	EnsureCollection(ctx context.Context, name, owner string) (*rag.Collection, error)
}

// Pinger answers /readyz: whether the store can be reached (rag.Store implements it).
type Pinger interface {
	Ping(ctx context.Context) error
}

// Answerer answers questions, streaming the steps to emit (*answer.Service implements it).
type Answerer interface {
	Ask(ctx context.Context, p rag.Principal, req rag.AskRequest, emit func(rag.AnswerEvent) error) (*rag.Answer, error)
}

// Searcher searches the documents (*reembed.Service implements it: it follows a re-embed as it completes).
type Searcher interface {
	Search(ctx context.Context, p rag.Principal, req rag.SearchRequest) (*rag.SearchResult, error)
}

// EmbeddingStatus says how far the chunks are embedded in the configured space (*reembed.Service
// implements it).
type EmbeddingStatus interface {
	Status(ctx context.Context) (*reembed.Status, error)
}

// Submitter records uploads as queued documents, and gives up a queued version that cannot be scheduled
// (*ingest.Pipeline implements it).
type Submitter interface {
	Submit(ctx context.Context, p rag.Principal, req ingest.Request) (*rag.Document, ingest.Outcome, error)
	Abandon(ctx context.Context, docID, contentHash string, reason error) error
	Revert(ctx context.Context, p rag.Principal, docID string, version int) (*rag.Document, ingest.Outcome, error)
	Retry(ctx context.Context, p rag.Principal, docID string) (*rag.Document, error)
}

// Enqueuer schedules the processing of a submitted document version. The durable job runner
// (*jobs.Runner) implements it; the server calls it after Submitter.Submit has recorded a queued document,
// so an upload survives a crash between the two (the runner's start-up reconciliation enqueues it).
type Enqueuer interface {
	EnqueueIngest(ctx context.Context, documentID, contentHash string) error
}

// Deps is what a Server serves: its services and its settings. Every service is required.
type Deps struct {
	Documents   Documents
	Collections Collections
	Store       Pinger
	Answers     Answerer
	Search      Searcher
	Embedding   EmbeddingStatus
	Ingest      Submitter
	// Enqueuer processes uploads in the background. There is no in-process fallback — one mechanism,
	// whether the jobs run in this process or in `ragd worker`s. The server only enqueues: starting and
	// stopping the runner is the caller's (ragd serve's) business.
	Enqueuer Enqueuer
	// Board serves the collections' Q&A boards and starts answer passes.
	Board Board
	// Graph imports collections' knowledge graphs and record tables.
	Graph Graphs
	// Feedback rates answers and sources.
	Feedback Feedback
	// Embedder serves POST /v1/embeddings (optional: nil serves none).
	Embedder rag.Embedder
	// Principals resolves users' API keys and manages users, teams and keys (/api/admin/). Optional: nil
	// leaves only the keys of Settings.APIKeys.
	Principals rag.PrincipalStore
	// Access answers who may write a document or add to a collection, and which collections a principal
	// sees. Optional: nil lets only admins write (without Principals every principal is one).
	Access rag.AccessStore
	// Files reads documents' stored originals; Pages renders the pages of PDFs (pages.go).
	Files Files
	Pages PDFPages
	// Audit records every /api/ request (nil: none); AuditEvents serves GET /api/admin/audit.
	Audit       *audit.Log
	AuditEvents AuditEvents

	Settings Settings
	Logger   *slog.Logger // nil discards
	// Slots admits searches and chats a few at a time, the others waiting in line (nil: all at once).
	Slots *slots.Gate
	// Now is the rate limiters' clock (tests fix time with it); nil means time.Now.
	Now func() time.Time

	// Conversations keeps the principals' chats (rag.Store implementations implement it).
	Conversations rag.ConversationStore

	// Sources syncs collections' sources (optional: nil serves none, the routes answer not_found).
	Sources Sources

	// Webhooks registers collections' webhooks (optional: nil sends none, the routes answer not_found).
	Webhooks Webhooks
}

// Settings are the server's limits and what /api/status reports.
type Settings struct {
	APIKeys         []string // empty: the API is open
	CORSOrigins     []string
	RateLimitChat   int // requests per minute per key or client; 0 is unlimited
	RateLimitSearch int
	MaxUploadBytes  int64
	// UploadBudget bounds the upload bytes held by all requests at once (0: unbounded); an upload that
	// does not fit gets 429 rate_limited with Retry-After.
	UploadBudget int64
	// Metadata bounds the metadata of an upload or update (rag.MetadataLimits defaults when zero).
	Metadata rag.MetadataLimits
	// AllowedHosts are the Host names (port ignored) served; others get 403 forbidden, which refuses DNS
	// rebinding. Empty (or "*") serves every host; `ragd serve` fills it (server.DefaultAllowedHosts).
	AllowedHosts []string
	// StoreKind ("sqlite" or "postgres"), Embedder and Generator describe the installation in /api/status.
	StoreKind string
	Embedder  rag.Space
	Generator string
	// MetricsToken, when set, is the bearer token GET /metrics needs (RAGD_METRICS_TOKEN); empty leaves
	// /metrics open, as Prometheus' own endpoints are.
	MetricsToken string
	// PurgeAfter is how long a deleted document can be restored before the purge job removes it
	// (RAGD_PURGE_AFTER); documents show when that happens (purge_at).
	PurgeAfter time.Duration
}

// Server serves the API and the UI.
type Server struct {
	deps    Deps
	set     Settings
	log     *slog.Logger
	mux     *http.ServeMux
	handler http.Handler
	now     func() time.Time

	keys        *keyring
	stored      keyPresence
	hosts       hostPolicy
	uploads     *byteBudget // nil: unbounded
	cors        corsPolicy
	chatLimit   *limiter
	searchLimit *limiter
	pages       *pageCache
}

// New returns a Server over d. It fails when a service is missing.
func New(d Deps) (*Server, error) {
	if d.Documents == nil || d.Collections == nil || d.Store == nil || d.Answers == nil || d.Search == nil ||
		d.Embedding == nil || d.Ingest == nil || d.Enqueuer == nil || d.Board == nil || d.Graph == nil || d.Feedback == nil ||
		d.Conversations == nil || d.Files == nil || d.Pages == nil {
		return nil, errors.New("server: every service of Deps is required (documents, collections, store, answers, search, embedding, ingest, enqueuer, board, graph, feedback, conversations, files, pages)")
	}
	s := &Server{deps: d, set: d.Settings, log: d.Logger, mux: http.NewServeMux(), now: d.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.keys = newKeyring(s.set.APIKeys)
	s.hosts = newHostPolicy(s.set.AllowedHosts)
	if s.set.UploadBudget > 0 {
		s.uploads = &byteBudget{limit: s.set.UploadBudget}
	}
	s.cors = newCORSPolicy(s.set.CORSOrigins)
	s.chatLimit = newLimiter(s.set.RateLimitChat, s.now)
	s.searchLimit = newLimiter(s.set.RateLimitSearch, s.now)
	s.pages = newPageCache(PageCacheBytes)
	s.routes()
	s.handler = s.instrument(s.recoverPanics(s.logRequests(s.checkHost(s.withHeaders(s.withCORS(s.authenticate(s.audited(s.mux))))))))
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// routes lists every route of the server.
func (s *Server) routes() {
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	s.mux.HandleFunc("GET /readyz", s.handleReady)
	s.mux.Handle("GET /metrics", s.handleMetrics())

	s.mux.HandleFunc("GET /api/status", s.handleStatus)
	s.mux.HandleFunc("GET /api/me", s.handleMe)
	s.mux.HandleFunc("GET /api/openapi.json", s.handleOpenAPI)
	s.mux.HandleFunc("POST /api/chat", s.limited(s.chatLimit, s.handleChat))
	s.mux.HandleFunc("POST /api/search", s.limited(s.searchLimit, s.handleSearch))

	s.mux.HandleFunc("GET /api/documents", s.handleListDocuments)
	s.mux.HandleFunc("POST /api/documents", s.handleCreateDocuments)
	s.mux.HandleFunc("GET /api/documents/{id}", s.handleGetDocument)
	s.mux.HandleFunc("PUT /api/documents/{id}", s.handleUpdateDocument)
	s.mux.HandleFunc("DELETE /api/documents/{id}", s.handleDeleteDocument)
	s.mux.HandleFunc("GET /api/documents/{id}/chunks", s.handleListChunks)
	s.mux.HandleFunc("GET /api/documents/{id}/grants", s.handleGetGrants)
	s.mux.HandleFunc("PUT /api/documents/{id}/grants", s.handlePutGrants)
	s.mux.HandleFunc("GET /api/documents/{id}/file", s.handleDocumentFile)
	s.mux.HandleFunc("GET /api/documents/{id}/pages/{page}", s.handlePageImage)
	s.mux.HandleFunc("GET /api/documents/{id}/pages/{page}/boxes", s.handlePageBoxes)
	s.mux.HandleFunc("POST /api/documents/{id}/restore", s.handleRestoreDocument)
	s.mux.HandleFunc("POST /api/documents/{id}/retry", s.handleRetryDocument)
	s.mux.HandleFunc("GET /api/documents/{id}/versions", s.handleListVersions)
	s.mux.HandleFunc("GET /api/documents/{id}/history", s.handleDocumentHistory)
	s.mux.HandleFunc("GET /api/admin/audit", s.handleListAudit)
	s.mux.HandleFunc("GET /api/documents/{id}/versions/{n}", s.handleGetVersion)
	s.mux.HandleFunc("GET /api/documents/{id}/versions/{n}/file", s.handleVersionFile)
	s.mux.HandleFunc("POST /api/documents/{id}/versions/{n}/restore", s.handleRevert)

	s.mux.HandleFunc("GET /api/collections", s.handleListCollections)
	s.mux.HandleFunc("POST /api/collections", s.handleCreateCollection)
	s.mux.HandleFunc("GET /api/collections/{name}", s.handleGetCollection)
	s.mux.HandleFunc("PUT /api/collections/{name}", s.handlePutCollection)
	s.mux.HandleFunc("PUT /api/collections/{name}/access", s.handleCollectionAccess)
	s.mux.HandleFunc("GET /api/collections/{name}/graph", s.handleGraphStats)
	s.mux.HandleFunc("POST /api/collections/{name}/graph", s.handleImportGraph)
	s.mux.HandleFunc("POST /api/collections/{name}/tables/{table}", s.handleImportTable)
	s.mux.HandleFunc("GET /api/collections/{name}/sources", s.handleListSources)
	s.mux.HandleFunc("POST /api/collections/{name}/sources", s.handleAddSource)
	s.mux.HandleFunc("GET /api/collections/{name}/sources/{id}", s.handleGetSource)
	s.mux.HandleFunc("DELETE /api/collections/{name}/sources/{id}", s.handleDeleteSource)
	s.mux.HandleFunc("POST /api/collections/{name}/sources/{id}/sync", s.handleSyncSource)
	s.mux.HandleFunc("GET /api/collections/{name}/webhooks", s.handleListWebhooks)
	s.mux.HandleFunc("POST /api/collections/{name}/webhooks", s.handleAddWebhook)
	s.mux.HandleFunc("DELETE /api/collections/{name}/webhooks/{id}", s.handleDeleteWebhook)
	s.mux.HandleFunc("GET /api/collections/{name}/webhooks/{id}/deliveries", s.handleWebhookDeliveries)
	s.mux.HandleFunc("POST /api/collections/{name}/webhooks/{id}/ping", s.handlePingWebhook)

	s.mux.HandleFunc("GET /api/questions", s.handleListQuestions)
	s.mux.HandleFunc("POST /api/questions", s.handleCreateQuestion)
	s.mux.HandleFunc("GET /api/questions/similar", s.handleSimilarQuestions)
	s.mux.HandleFunc("GET /api/questions/{id}", s.handleGetQuestion)
	s.mux.HandleFunc("DELETE /api/questions/{id}", s.handleDeleteQuestion)
	s.mux.HandleFunc("POST /api/questions/{id}/answers", s.handleAnswerQuestion)
	s.mux.HandleFunc("GET /api/questions/{id}/similar", s.handleSimilarQuestions)
	s.mux.HandleFunc("GET /api/qa/runs", s.handleListRuns)
	s.mux.HandleFunc("POST /api/qa/runs", s.handleStartRun)
	s.mux.HandleFunc("GET /api/qa/runs/{id}", s.handleGetRun)

	s.adminRoutes()

	s.mux.HandleFunc("POST /api/feedback", s.handleRate)
	s.mux.HandleFunc("GET /api/feedback", s.handleListFeedback)
	s.mux.HandleFunc("GET /api/feedback/export", s.handleExportFeedback)
	s.mux.HandleFunc("DELETE /api/feedback/{id}", s.handleDeleteFeedback)

	s.mux.HandleFunc("GET /api/conversations", s.handleListConversations)
	s.mux.HandleFunc("POST /api/conversations", s.handleCreateConversation)
	s.mux.HandleFunc("GET /api/conversations/{id}", s.handleGetConversation)
	s.mux.HandleFunc("PATCH /api/conversations/{id}", s.handleUpdateConversation)
	s.mux.HandleFunc("DELETE /api/conversations/{id}", s.handleDeleteConversation)

	// Integrations: the OpenAI-compatible API under /v1 (openai_compat.go), the MCP server at /mcp (mcp.go).
	s.routesOpenAI()
	s.routesMCP()

	// Anything else under /api/ is a JSON not_found 404, never the UI — a known path with a method it does
	// not take included: this pattern matches every method, so the mux never answers 405 (SPEC.md's error
	// codes have none for it).
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, rag.Errorf(rag.CodeNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
	})

	s.mux.Handle("GET /{$}", s.page("index.html"))
	s.mux.Handle("GET /documents", s.page("documents.html"))
	s.mux.Handle("GET /documents/{id}", s.page("document.html"))
	s.mux.Handle("GET /search", s.page("playground.html"))
	s.mux.Handle("GET /board", s.page("board.html"))
	s.mux.Handle("GET /admin", s.page("admin.html"))
	s.mux.Handle("/", s.assets())
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if err := s.deps.Store.Ping(r.Context()); err != nil {
		s.writeError(w, r, rag.WrapError(rag.CodeDBError, err, "store not ready"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
