package app

import (
	"runtime"

	"github.com/ragd/ragd/internal/server"
	"github.com/ragd/ragd/internal/slots"
)

// SearchSlots is how many searches and chats the server runs at once (RAGD_SEARCH_SLOTS): the configured
// count; none (0) for -1; for 0, one per processor when every stage of a search runs in this process (the
// embedded store, the hash embedder, no hosted reranker), since only then is a search's time this machine's
// processors' — and none otherwise, where a search mostly waits on a database or a model.
func (a *App) SearchSlots() int {
	c := a.Config
	switch {
	case c.SearchSlots > 0:
		return c.SearchSlots
	case c.SearchSlots < 0:
		return 0
	case c.DatabaseURL == "" && a.Embedder.Space().Provider == "hash" && (c.Reranker == "" || c.Reranker == "none"):
		return runtime.GOMAXPROCS(0)
	}
	return 0
}

// ServerDeps gives the HTTP server the app's services, enq to process uploads (the job runner, see OpenJobs)
// and the configuration's limits. The server knows them only through its own small interfaces.
func (a *App) ServerDeps(enq server.Enqueuer) server.Deps {
	cfg := a.Config
	hosts := cfg.AllowedHosts
	if len(hosts) == 0 {
		hosts = server.DefaultAllowedHosts(cfg.Addr)
	}
	kind := "sqlite"
	if cfg.DatabaseURL != "" {
		kind = "postgres"
	}
	events, _ := a.Store.(server.AuditEvents)
	return server.Deps{
		Audit:       a.OpenAudit(),
		AuditEvents: events,
		Documents:   a.Store,
		Collections: a.Store,
		Store:       a.Store,
		Answers:     a.Answers,
		Search:      a.Spaces,
		Embedding:   a.Spaces,
		Ingest:      a.Ingest,
		Enqueuer:    enq,
		Board:       a.Board,
		Graph:       a.Graph,
		Feedback:    a.Feedback,
		Embedder:    a.Embedder,
		Principals:  a.Principals(),
		Access:      a.Access(),
		Files:       a.Store,
		Pages:       a.Extractor,
		Logger:      a.Logger,
		Slots:       slots.New(a.SearchSlots()),
		Settings: server.Settings{
			APIKeys:         cfg.APIKeys,
			CORSOrigins:     cfg.CORSOrigins,
			RateLimitChat:   cfg.RateLimitChat,
			RateLimitSearch: cfg.RateLimitSearch,
			MaxUploadBytes:  cfg.MaxUploadBytes,
			UploadBudget:    cfg.UploadBudgetBytes,
			Metadata:        cfg.Metadata,
			AllowedHosts:    hosts,
			StoreKind:       kind,
			Embedder:        a.Embedder.Space(),
			Generator:       a.Generator.Name(),
			PurgeAfter:      cfg.PurgeAfter,
			MetricsToken:    cfg.MetricsToken,
		},
		Conversations: a.Conversations,
		Sources:       a.Sources,
		Webhooks:      a.Webhooks,
	}
}
