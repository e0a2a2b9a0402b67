package app

import (
	"github.com/ragd/ragd/internal/server"
	"github.com/ragd/ragd/internal/slots"
)

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
		Slots:       slots.New(cfg.SearchSlots),
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
