package app

import (
	"context"

	"github.com/ragd/ragd/internal/connector/web"
)

// fetchURL downloads the document of a URL ingest (ingest.Options.Fetch) with the SSRF-guarded client.
func (a *App) fetchURL(ctx context.Context, url string, maxBytes int64) (string, []byte, error) {
	return web.Fetcher(a.HTTP)(ctx, url, maxBytes)
}
