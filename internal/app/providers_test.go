package app_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/config"
)

// TestProviders: the default build has every hosted provider; an offline build (go test -tags ragd_offline)
// has none, and a configuration that names one fails at start-up with an error that names the build.
func TestProviders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		set  func(*config.Config)
	}{
		{"EmbedderGemini", func(c *config.Config) { c.Embedder, c.GeminiAPIKey = "gemini", "k" }},
		{"EmbedderOpenAI", func(c *config.Config) { c.Embedder, c.OpenAIAPIKey = "openai", "k" }},
		{"GeneratorGemini", func(c *config.Config) { c.Generator, c.GeminiAPIKey = "gemini", "k" }},
		{"GeneratorOpenAI", func(c *config.Config) { c.Generator, c.OpenAIAPIKey = "openai", "k" }},
		{"GeneratorAnthropic", func(c *config.Config) { c.Generator, c.AnthropicAPIKey = "anthropic", "k" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := config.Default()
			cfg.DataDir = t.TempDir()
			tc.set(&cfg)
			a, err := app.Open(context.Background(), cfg, nil)
			if offline {
				if err == nil || !strings.Contains(err.Error(), "not in this build") || !strings.Contains(err.Error(), "ragd_offline") {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_ = a.Close()
		})
	}
	want := []string{"anthropic", "gemini", "openai"}
	if offline {
		want = nil
	}
	if got := app.Providers(); !slices.Equal(got, want) {
		t.Fatalf("providers %v, want %v", got, want)
	}
}
