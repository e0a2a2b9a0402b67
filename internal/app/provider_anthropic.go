//go:build !ragd_offline

package app

import (
	"context"
	"log/slog"

	"github.com/ragd/ragd/internal/anthropic"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

func init() {
	generators["anthropic"] = func(_ context.Context, cfg config.Config, logger *slog.Logger) (rag.Generator, error) {
		return anthropic.NewGenerator(anthropic.GeneratorConfig{Config: provider.Config{APIKey: cfg.AnthropicAPIKey,
			BaseURL: cfg.AnthropicBaseURL, Model: cfg.GenerateModel, Timeout: cfg.ModelTimeout, Logger: logger}})
	}
}
