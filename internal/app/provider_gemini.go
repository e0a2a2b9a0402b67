//go:build !ragd_offline

package app

import (
	"context"
	"log/slog"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/gemini"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

func init() {
	embedders["gemini"] = func(ctx context.Context, cfg config.Config, logger *slog.Logger) (rag.Embedder, error) {
		return gemini.NewEmbedder(ctx, gemini.EmbedderConfig{Config: provider.Config{APIKey: cfg.GeminiAPIKey,
			BaseURL: cfg.GeminiBaseURL, Model: cfg.EmbedModel, Timeout: cfg.ModelTimeout, Logger: logger}, Dim: cfg.EmbedDim})
	}
	generators["gemini"] = func(ctx context.Context, cfg config.Config, logger *slog.Logger) (rag.Generator, error) {
		return gemini.NewGenerator(ctx, gemini.GeneratorConfig{Config: provider.Config{APIKey: cfg.GeminiAPIKey,
			BaseURL: cfg.GeminiBaseURL, Model: cfg.GenerateModel, Timeout: cfg.ModelTimeout, Logger: logger}})
	}
}
