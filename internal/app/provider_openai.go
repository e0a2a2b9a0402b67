//go:build !ragd_offline

package app

import (
	"context"
	"log/slog"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/openai"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

func init() {
	embedders["openai"] = func(_ context.Context, cfg config.Config, logger *slog.Logger) (rag.Embedder, error) {
		return openai.NewEmbedder(openai.EmbedderConfig{Config: provider.Config{APIKey: cfg.OpenAIAPIKey,
			BaseURL: cfg.OpenAIBaseURL, Model: cfg.EmbedModel, Timeout: cfg.ModelTimeout, Logger: logger}, Dim: cfg.EmbedDim})
	}
	generators["openai"] = func(_ context.Context, cfg config.Config, logger *slog.Logger) (rag.Generator, error) {
		return openai.NewGenerator(openai.GeneratorConfig{Config: provider.Config{APIKey: cfg.OpenAIAPIKey,
			BaseURL: cfg.OpenAIBaseURL, Model: cfg.GenerateModel, Timeout: cfg.ModelTimeout, Logger: logger}})
	}
}
