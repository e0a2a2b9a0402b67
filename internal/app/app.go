// Package app wires ragd's parts together from a Config: the store (embedded SQLite or PostgreSQL), the
// extractor, the embedder, the generator, retrieval, answers and ingestion, and on demand the durable job
// runner. The CLI, the server and the tests build the whole program through it.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ragd/ragd/internal/answer"
	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/chunk"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/embed"
	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/feedback"
	"github.com/ragd/ragd/internal/generate/extractive"
	"github.com/ragd/ragd/internal/graph"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/jobs"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/qa"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/reembed"
	"github.com/ragd/ragd/internal/rerank"
	"github.com/ragd/ragd/internal/retrieve"
	"github.com/ragd/ragd/internal/sources"
	"github.com/ragd/ragd/internal/store/postgres"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/telemetry"
	"github.com/ragd/ragd/internal/webhooks"
)

// App is a wired ragd.
type App struct {
	Config    config.Config
	Logger    *slog.Logger
	Store     rag.Store
	Extractor *extract.Extractor
	Embedder  rag.Embedder
	Generator rag.Generator
	// Retriever searches the space searches used when the App was opened (commands that run briefly);
	// Spaces.Search follows a re-embed as it completes (the server).
	Retriever *retrieve.Retriever
	Spaces    *reembed.Service
	Answers   *answer.Service
	// Graph imports collections' knowledge graphs and record tables and answers from them (docs/graph.md).
	Graph  *graph.Service
	Ingest *ingest.Pipeline
	// Board is the collections' Q&A boards and their answer pass (the "qa.answer" periodic job).
	Board *qa.Service
	// Feedback is users' ratings of answers and sources, and their export as eval items.
	Feedback *feedback.Service
	// Conversations keeps the principals' chats (the store's).
	Conversations rag.ConversationStore
	// Sources syncs the collections' sources (folders, web sites, repositories…; docs/connectors.md).
	Sources *sources.Service
	// Webhooks registers the collections' webhooks and queues their events (docs/integrations.md).
	Webhooks *webhooks.Service
	// Jobs is the durable job runner once OpenJobs has opened it, else nil.
	Jobs   *jobs.Runner
	jobsMu sync.Mutex // held by OpenJobs: a webhook event may open the runner from any goroutine
	// Audit is the audit log's writer once OpenAudit has started it, else nil.
	Audit *audit.Log

	// HTTP is the client of every request to an address a user gave (URL ingest, remote sources): it
	// refuses loopback, private and link-local addresses unless RAGD_FETCH_ALLOW_PRIVATE is set
	// (internal/netguard).
	HTTP *http.Client

	// Now is the clock of the purge of deleted documents (Purge); nil means time.Now. Tests move it
	// forward instead of waiting out RAGD_PURGE_AFTER.
	Now func() time.Time

	pg      *postgres.Store // the store when it is PostgreSQL: the runner shares its pool
	closers []func() error
}

// Open builds an App from cfg. Close releases it.
func Open(ctx context.Context, cfg config.Config, logger *slog.Logger) (*App, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &App{Config: cfg, Logger: logger, HTTP: netguard.Options{AllowPrivate: cfg.FetchAllowPrivate}.Client()}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()

	if err := a.openStore(ctx); err != nil {
		return nil, err
	}
	ex, err := extract.New(extract.Options{
		MaxBytes: cfg.MaxUploadBytes,
		Limits: extract.Limits{
			MaxMemberBytes: cfg.MaxMemberBytes, MaxInflatedBytes: cfg.MaxInflatedBytes, MaxDepth: cfg.MaxDepth,
			MaxXMLElements: cfg.MaxXMLElements, MaxPages: cfg.MaxPages, MaxChars: cfg.MaxChars, Timeout: cfg.ExtractTimeout,
		},
		PDFMemoryLimit: cfg.PDFMemoryLimit,
		OCR: extract.OCROptions{Mode: cfg.OCR, Langs: cfg.OCRLangs, PageTimeout: cfg.OCRPageTimeout,
			PageMemory: cfg.OCRPageMemory, Logger: logger},
	})
	if err != nil {
		return nil, fmt.Errorf("extractor: %w", err)
	}
	a.Extractor = ex
	a.closers = append(a.closers, ex.Close)

	if a.Embedder, err = newEmbedder(ctx, cfg, a.Store, logger); err != nil {
		return nil, err
	}
	if a.Generator, err = newGenerator(ctx, cfg, logger); err != nil {
		return nil, err
	}
	rr, err := newRerank(cfg, a.Store)
	if err != nil {
		return nil, err
	}
	// Searches use the configured embedder's space once every chunk is in it; until then an old space, while
	// the "reembed" periodic job (OpenJobs) fills the configured one.
	a.Spaces, err = reembed.New(ctx, a.Store, a.Embedder, func(ctx context.Context, sp rag.Space) (rag.Embedder, error) {
		return embedderOf(ctx, cfg, a.Store, sp, logger)
	}, reembed.Options{Logger: logger, Retrieve: retrieve.Options{
		VectorWeight:    cfg.VectorWeight,
		KeywordWeight:   cfg.KeywordWeight,
		MinSimilarity:   cfg.MinSimilarity,
		Feedback:        cfg.Feedback,
		KeywordFeedback: cfg.KeywordFeedback,
		DocumentWeight:  cfg.DocumentWeight,
		OpeningWeight:   cfg.OpeningWeight,
		MaxPerDocument:  cfg.MaxPerDocument,
		Rerank:          rr,
	}})
	if err != nil {
		return nil, err
	}
	a.Retriever = a.Spaces.Retriever()
	gs, graphs := a.Store.(graph.Store)
	if !graphs {
		return nil, fmt.Errorf("store %T keeps no knowledge graphs", a.Store)
	}
	a.Graph = graph.New(gs, a.Embedder, profile.GraphSettings)
	if c, ok := a.Generator.(rag.JSONCompleter); ok {
		a.Graph.UseCompleter(c) // profiles with graph.extract get entities and relations from their documents
	}
	a.Answers = answer.New(a.Spaces, a.Generator, answer.Options{Collections: a.Store, Graph: a.Graph, Records: a.Store, CacheTTL: cfg.AnswerCacheTTL,
		Expand: cfg.QueryExpansion == "llm", Chunks: a.Store, Logger: logger})
	a.Ingest = ingest.New(a.Store, a.Extractor, a.Embedder, ingest.Options{
		MaxBytes:  cfg.MaxUploadBytes,
		Chunk:     chunk.Options{Size: cfg.ChunkSize, Overlap: chunkOverlap(cfg.ChunkOverlap)},
		MaxChunks: cfg.MaxChunks,
		Metadata:  cfg.Metadata,
		Fetch:     a.fetchURL,
		Logger:    logger,
		Settled:   a.documentSettled,
		AfterCommit: func(ctx context.Context, doc *rag.Document, text string) error {
			res, err := a.Graph.ExtractDocument(ctx, doc, text)
			if res != nil {
				logger.Info("graph extracted from document", slog.String("document", doc.ID), slog.Int("version", doc.Version),
					slog.Int("calls", res.Calls), slog.Bool("truncated", res.Truncated), slog.Int("entities", res.Entities),
					slog.Int("relations", res.Relations), slog.Int("dropped_unknown_type", res.DroppedUnknownType),
					slog.Int("dropped_dangling", res.DroppedDangling), slog.Int("dropped_invalid", res.DroppedInvalid))
			}
			return err
		},
	})
	questions, boards := a.Store.(rag.QuestionStore)
	if !boards {
		return nil, fmt.Errorf("store %T has no Q&A boards", a.Store)
	}
	a.Board = qa.New(questions, a.Store, a.Embedder, a.Store, a.Answers, qa.Options{
		Batch: cfg.QA.Batch, Delay: cfg.QA.Delay, MaxAttempts: cfg.QA.MaxAttempts, Logger: logger, Answered: a.questionAnswered,
	})
	ratings, rates := a.Store.(rag.FeedbackStore)
	if !rates {
		return nil, fmt.Errorf("store %T keeps no feedback", a.Store)
	}
	a.Feedback = feedback.New(ratings, a.Store)
	conversations, chats := a.Store.(rag.ConversationStore)
	if !chats {
		return nil, fmt.Errorf("store %T keeps no conversations", a.Store)
	}
	a.Conversations = conversations
	if err := a.openSources(); err != nil {
		return nil, err
	}
	if err := a.openWebhooks(); err != nil {
		return nil, err
	}
	ok = true
	return a, nil
}

func (a *App) openStore(ctx context.Context) error {
	keys, err := DataKeys(a.Config)
	if err != nil {
		return err
	}
	if a.Config.DatabaseURL != "" {
		st, err := postgres.Open(ctx, a.Config.DatabaseURL, postgres.Options{Schema: URLSchema(a.Config.DatabaseURL), Logger: a.Logger,
			HNSWM: a.Config.HNSWM, HNSWEfConstruction: a.Config.HNSWEfConstruction, EfSearch: a.Config.HNSWEfSearch, Keys: keys,
			ReaderRole: readerRole(a.Config), ReaderOptional: a.Config.PGRowSecurity == "auto", KeywordIndexMin: a.Config.KeywordIndexMin})
		if err != nil {
			return fmt.Errorf("open postgres: %w", err)
		}
		a.Store, a.pg = st, st
		a.closers = append(a.closers, st.Close)
		return nil
	}
	if err := os.MkdirAll(a.Config.DataDir, 0o750); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(a.Config.DataDir, "ragd.db"),
		sqlite.Options{VectorIndexMin: a.Config.VectorIndexMin, VectorMemory: a.Config.VectorMemory, VectorHeap: a.Config.VectorHeap,
			KeywordIndexMin: a.Config.KeywordIndexMin, HitCacheBytes: a.Config.HitCache,
			VectorColumns: a.Config.VectorColumns, Keys: keys})
	if err != nil {
		return fmt.Errorf("open %s: %w", a.Config.DataDir, err)
	}
	a.Store = st
	a.closers = append(a.closers, st.Close)
	return nil
}

// readerRole is the role PostgreSQL's row-secured reads run as, "" with RAGD_PG_ROW_SECURITY=off.
func readerRole(c config.Config) string {
	if c.PGRowSecurity == "off" {
		return ""
	}
	return c.PGReaderRole
}

// URLSchema returns the schema named first in the search_path parameter of a PostgreSQL URL or DSN
// (…?search_path=ragd), or "" for the default (public). ragd keeps its tables, and River's, in that schema:
// several installations can then share one database, and the store names the schema in every statement
// rather than relying on the session's search_path (which PGlite shares among all connections).
func URLSchema(url string) string {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return "" // postgres.Open reports the bad URL
	}
	first, _, _ := strings.Cut(cfg.ConnConfig.RuntimeParams["search_path"], ",")
	first = strings.TrimSpace(first)
	if len(first) >= 2 && first[0] == '"' && first[len(first)-1] == '"' {
		first = strings.ReplaceAll(first[1:len(first)-1], `""`, `"`)
	}
	if first == "$user" {
		return ""
	}
	return first
}

// OpenJobs opens the durable job runner (internal/jobs) once and returns it; later calls return the same
// one. It is separate from Open so that commands that run no jobs (search, ask, eval) do not pay River's
// migrations. On the embedded store the jobs live in <data-dir>/jobs.db; on PostgreSQL in the store's
// database and schema, through the store's pool. Zero fields of opt take the configuration's values
// (IngestWorkers, the logger); opt.Work makes this process run jobs, not only insert them. The caller
// starts the runner (after registering periodic jobs); Close stops and closes it before the store.
func (a *App) OpenJobs(ctx context.Context, opt jobs.Options) (*jobs.Runner, error) {
	a.jobsMu.Lock()
	defer a.jobsMu.Unlock()
	if a.Jobs != nil {
		return a.Jobs, nil
	}
	if opt.IngestWorkers == 0 {
		opt.IngestWorkers = a.Config.IngestWorkers
	}
	if opt.Logger == nil {
		opt.Logger = a.Logger
	}
	if opt.Webhooks == nil {
		opt.Webhooks = a.Webhooks
	}
	if opt.WebhookMaxAttempts == 0 {
		opt.WebhookMaxAttempts = a.Config.Webhooks.MaxAttempts
	}
	if opt.WebhookRetryBase == 0 {
		opt.WebhookRetryBase = a.Config.Webhooks.RetryBase
	}
	var (
		r   *jobs.Runner
		err error
	)
	if a.pg != nil {
		opt.Schema = a.pg.Schema()
		r, err = jobs.OpenPostgres(ctx, a.pg.Pool(), a.Store, a.Ingest, opt)
	} else {
		r, err = jobs.OpenSQLite(ctx, filepath.Join(a.Config.DataDir, "jobs.db"), a.Store, a.Ingest, opt)
	}
	if err != nil {
		return nil, fmt.Errorf("open jobs: %w", err)
	}
	// The re-embed after a change of embedder: at start-up, then every minute in case a run stopped (the
	// provider was down, the process was stopping); a run with nothing to do costs one count query.
	// Only a working runner schedules (River panics when an insert-only client is given periodic jobs).
	if opt.Work {
		if err := r.AddPeriodic(ReembedJob, jobs.Every(time.Minute), a.Reembed, &jobs.PeriodicOptions{RunOnStart: true}); err != nil {
			r.Close()
			return nil, err
		}
		// The Q&A boards' answer pass: one process at a time runs it (River's periodic job), and the
		// store's claims keep even overlapping passes (POST /api/qa/runs, answer-now) from answering a
		// question twice.
		if err := r.AddPeriodic(QAJob, jobs.Every(a.Config.QA.Interval), func(ctx context.Context) error {
			_, err := a.Board.Pass(ctx, qa.TriggerSchedule)
			return err
		}, nil); err != nil {
			r.Close()
			return nil, err
		}
		// Data sealed with an earlier key (or stored in the clear before a key was set) is re-sealed with
		// the current one (docs/security.md "Encryption at rest").
		if err := r.AddPeriodic(ResealJob, jobs.Every(time.Minute), func(ctx context.Context) error {
			_, err := a.Reseal(ctx, nil)
			return err
		}, &jobs.PeriodicOptions{RunOnStart: true}); err != nil {
			r.Close()
			return nil, err
		}
		if err := r.AddPeriodic(AuditPruneJob, jobs.Every(time.Hour), func(ctx context.Context) error {
			_, err := a.PruneAudit(ctx)
			return err
		}, &jobs.PeriodicOptions{RunOnStart: true}); err != nil {
			r.Close()
			return nil, err
		}
		// Sources whose cron schedule has come are synced (docs/connectors.md); the sync lease keeps a
		// source from syncing twice at once when a watcher or a request syncs it too.
		if err := r.AddPeriodic(SourcesJob, jobs.Every(time.Minute), func(ctx context.Context) error {
			_, err := a.Sources.Due(ctx)
			return err
		}, &jobs.PeriodicOptions{RunOnStart: true}); err != nil {
			r.Close()
			return nil, err
		}
		// Deleted documents are removed for good once RAGD_PURGE_AFTER has passed (docs/security.md).
		if err := r.AddPeriodic(PurgeJob, jobs.Every(PurgeInterval(a.Config.PurgeAfter)), func(ctx context.Context) error {
			_, err := a.Purge(ctx)
			return err
		}, &jobs.PeriodicOptions{RunOnStart: true}); err != nil {
			r.Close()
			return nil, err
		}
	}
	a.Jobs = r
	// After the store's closer, so run before it: running jobs stop while the store is still open.
	a.closers = append(a.closers, r.Close)
	return r, nil
}

// Reembed re-embeds into the configured space what is not in it yet: the chunks (reembed.Service) and the
// entities of the collections' knowledge graphs.
func (a *App) Reembed(ctx context.Context) error {
	if err := a.Spaces.Reembed(ctx); err != nil {
		return err
	}
	_, err := a.Graph.Reembed(ctx, a.Store)
	return err
}

// QAJob is the name of the periodic job that answers the boards' open questions (RAGD_QA_INTERVAL).
const QAJob = "qa.answer"

// ReembedJob is the name of the periodic job that re-embeds chunks after a change of embedder.
const ReembedJob = "reembed"

// Warm loads now what the first search would otherwise load: the embedded store's in-memory keyword index
// (about 3 s per 100,000 chunks, from 10,000 chunks on) and vectors of the embedding space searches use
// (about 2 s per 100,000 768-d vectors). PostgreSQL needs nothing: its indexes are on disk.
func (a *App) Warm(ctx context.Context) error {
	if w, ok := a.Store.(interface {
		WaitKeywordIndex(ctx context.Context) (int, int64, error)
	}); ok {
		if _, _, err := w.WaitKeywordIndex(ctx); err != nil {
			return err
		}
	}
	w, ok := a.Store.(interface {
		WarmVectors(ctx context.Context, space rag.Space) error
	})
	sp, vector := a.Spaces.SearchSpace()
	if !ok || !vector {
		return nil
	}
	return w.WarmVectors(ctx, sp)
}

func newEmbedder(ctx context.Context, cfg config.Config, cache embed.Cache, logger *slog.Logger) (rag.Embedder, error) {
	if cfg.Embedder == "hash" {
		return telemetry.Embedder(hash.New(cmp.Or(cfg.EmbedDim, hash.DefaultDim))), nil
	}
	open, ok := embedders[cfg.Embedder]
	if !ok {
		return nil, notBuilt("embedder", cfg.Embedder)
	}
	e, err := open(ctx, cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("embedder %s: %w", cfg.Embedder, err)
	}
	// Hosted embeddings cost money and time: every (space, text) is asked for once, then read from the store.
	// The calls counted and traced are the provider's: a text found in the cache is no call.
	return embed.WithCache(telemetry.Embedder(e), cache, logger), nil
}

// embedderOf builds the embedder of an existing space with the configured keys and base URLs, so that an
// old space can still be searched during a re-embed; it fails when that provider is not configured.
func embedderOf(ctx context.Context, cfg config.Config, cache embed.Cache, sp rag.Space, logger *slog.Logger) (rag.Embedder, error) {
	cfg.Embedder, cfg.EmbedModel, cfg.EmbedDim = sp.Provider, sp.Model, sp.Dim
	return newEmbedder(ctx, cfg, cache, logger)
}

// newRerank returns the re-ranking stage the configuration asks for (off by default). Importance comes from
// users' ratings of sources (rerank.FeedbackSignals) when the store keeps feedback.
func newRerank(cfg config.Config, st rag.Store) (rerank.Options, error) {
	w, err := rerank.Preset(cfg.RerankPreset)
	if err != nil {
		return rerank.Options{}, err
	}
	opt := rerank.Options{Weights: w, TopN: cfg.RerankTopN}
	if fs, ok := st.(rag.FeedbackStore); ok {
		opt.Signals = rerank.FeedbackSignals{Tallies: fs}
	}
	if cfg.Reranker != "" && cfg.Reranker != "none" {
		opt.Encoder, err = rerank.New(rerank.Config{Reranker: cfg.Reranker, Model: cfg.RerankModel, BaseURL: cfg.RerankURL,
			APIKey: cfg.RerankAPIKey, Timeout: cfg.ModelTimeout})
		if err != nil {
			return rerank.Options{}, fmt.Errorf("re-ranker: %w", err)
		}
	}
	return opt, nil
}

func newGenerator(ctx context.Context, cfg config.Config, logger *slog.Logger) (rag.Generator, error) {
	if cfg.Generator == "extractive" {
		return telemetry.Generator(extractive.New(extractive.Options{})), nil
	}
	open, ok := generators[cfg.Generator]
	if !ok {
		return nil, notBuilt("generator", cfg.Generator)
	}
	g, err := open(ctx, cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("generator %s: %w", cfg.Generator, err)
	}
	return telemetry.Generator(g), nil
}

// chunkOverlap maps the configured overlap to chunk.Options, where 0 means "default" and a negative value
// means none.
func chunkOverlap(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// Close releases everything Open acquired, in reverse order.
func (a *App) Close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(errs...)
}

// Principals returns the store's users, teams and keys (both stores keep them), or nil for a store that
// keeps none.
func (a *App) Principals() rag.PrincipalStore {
	ps, _ := a.Store.(rag.PrincipalStore)
	return ps
}

// RowSecurity returns the role a non-admin's reads run as under PostgreSQL's row-level security policies,
// or "" when they do not (SQLite, RAGD_PG_ROW_SECURITY=off, or a reader role ragd could not set up).
func (a *App) RowSecurity() string {
	if a.pg == nil {
		return ""
	}
	return a.pg.RowSecurity()
}

// Access returns the store's write and collection checks (both stores answer them), or nil.
func (a *App) Access() rag.AccessStore {
	as, _ := a.Store.(rag.AccessStore)
	return as
}
