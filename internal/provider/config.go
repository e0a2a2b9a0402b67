package provider

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// Config is what every hosted-model adapter (internal/openai, internal/anthropic, internal/gemini) is
// configured with: which endpoint, model and key, and the policy of its Caller. Each adapter's EmbedderConfig
// and GeneratorConfig embed it, adding what is theirs.
type Config struct {
	// APIKey is the provider's key (each adapter names its variable; some servers need none). It is redacted
	// from every message.
	APIKey string
	// BaseURL replaces the provider's endpoint: a proxy, a self-hosted server, a fake (each adapter says what
	// its URL includes and its default).
	BaseURL string
	// Model is the model (default: the adapter's).
	Model string
	// Timeout bounds one attempt (default: the adapter's, for an embedding request or a whole answer).
	Timeout time.Duration
	// HTTPClient is the client to use (default: a new one); its transport is wrapped, not changed.
	HTTPClient *http.Client
	// MaxConcurrency bounds the requests in flight (default DefaultMaxConcurrency).
	MaxConcurrency int
	// Retry is the retry policy (zero value: the defaults of Retry).
	Retry Retry
	// Logger receives a warning per retry (default slog.Default()).
	Logger *slog.Logger
}

// WithDefaults returns c with an empty Model set to model and a zero or negative Timeout to timeout.
func (c Config) WithDefaults(model string, timeout time.Duration) Config {
	if c.Model == "" {
		c.Model = model
	}
	if c.Timeout <= 0 {
		c.Timeout = timeout
	}
	return c
}

// Caller returns the Caller of c for the adapter of provider name, whose failures carry code and whose SDK's
// errors explain explains (see Policy).
func (c Config) Caller(name string, code rag.Code, explain func(error) Failure) *Caller {
	return New(Policy{Provider: name, Code: code, Timeout: c.Timeout, Retry: c.Retry, MaxConcurrency: c.MaxConcurrency,
		Secrets: []string{c.APIKey}, Explain: explain, Logger: c.Logger})
}
