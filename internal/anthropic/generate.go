package anthropic

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

// Defaults.
const (
	DefaultBaseURL         = "https://api.anthropic.com"
	DefaultGenerateModel   = "claude-haiku-4-5"
	DefaultTemperature     = 0.3
	DefaultMaxOutputTokens = 2048
	// DefaultGenerateTimeout bounds one attempt, the whole stream included.
	DefaultGenerateTimeout = 120 * time.Second
)

// GeneratorConfig configures a Generator. Only APIKey is required.
type GeneratorConfig struct {
	// APIKey is sent in x-api-key (ANTHROPIC_API_KEY).
	APIKey string
	// BaseURL replaces DefaultBaseURL (ANTHROPIC_BASE_URL).
	BaseURL string
	// Model is the model (default DefaultGenerateModel).
	Model string
	// Temperature, 0–1 (default DefaultTemperature; negative for the model's own default).
	Temperature float64
	// MaxOutputTokens is max_tokens (default DefaultMaxOutputTokens).
	MaxOutputTokens int
	// Timeout bounds one attempt (default DefaultGenerateTimeout).
	Timeout time.Duration
	// HTTPClient is the client to use (default: a new one); its transport is wrapped, not changed.
	HTTPClient *http.Client
	// MaxConcurrency bounds the requests in flight (default provider.DefaultMaxConcurrency).
	MaxConcurrency int
	// Retry is the retry policy (zero value: provider defaults).
	Retry provider.Retry
	// Logger receives a warning per retry (default slog.Default()).
	Logger *slog.Logger
	// Budget bounds the context (zero value: generate defaults).
	Budget generate.Budget
}

// Generator is a rag.Generator backed by the Anthropic Messages API.
type Generator struct {
	client anthropic.Client
	caller *provider.Caller
	cfg    GeneratorConfig
}

var _ rag.Generator = (*Generator)(nil)

// NewGenerator returns a Generator for cfg. It makes no request.
func NewGenerator(cfg GeneratorConfig) (*Generator, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("anthropic generator: an API key is required (ANTHROPIC_API_KEY)")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Model == "" {
		cfg.Model = DefaultGenerateModel
	}
	if cfg.Temperature == 0 {
		cfg.Temperature = DefaultTemperature
	}
	if cfg.MaxOutputTokens <= 0 {
		cfg.MaxOutputTokens = DefaultMaxOutputTokens
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultGenerateTimeout
	}
	caller := provider.New(provider.Policy{Provider: "anthropic", Code: rag.CodeLLMFailed, Timeout: cfg.Timeout,
		Retry: cfg.Retry, MaxConcurrency: cfg.MaxConcurrency, Secrets: []string{cfg.APIKey},
		Explain: Explain, Logger: cfg.Logger})
	client := newClient(cfg.BaseURL, cfg.APIKey, caller.HTTPClient(cfg.HTTPClient))
	go generate.WarmTokenizer()
	return &Generator{client: client, caller: caller, cfg: cfg}, nil
}

// Name is "anthropic/<model>".
func (g *Generator) Name() string { return "anthropic/" + g.cfg.Model }

func (g *Generator) params(p generate.Prompt) anthropic.MessageNewParams {
	var msgs []anthropic.MessageParam
	for _, t := range p.Turns() {
		if t.Role == rag.RoleAssistant {
			msgs = append(msgs, anthropic.NewAssistantMessage(anthropic.NewTextBlock(t.Content)))
		} else {
			msgs = append(msgs, anthropic.NewUserMessage(anthropic.NewTextBlock(t.Content)))
		}
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(g.cfg.Model),
		MaxTokens: int64(cmp.Or(p.MaxOutputTokens, g.cfg.MaxOutputTokens)),
		Messages:  msgs,
		System:    []anthropic.TextBlockParam{{Text: p.System}},
	}
	t := g.cfg.Temperature
	if p.Temperature != nil {
		t = *p.Temperature
	}
	if t >= 0 {
		params.Temperature = anthropic.Float(min(t, 1))
	}
	return params
}

// Generate answers req from its passages; with onDelta it streams.
func (g *Generator) Generate(ctx context.Context, req rag.GenerateRequest, onDelta func(string) error) (*rag.Generation, error) {
	p := generate.BuildPrompt(req, g.cfg.Budget)
	params := g.params(p)
	st := generate.NewStream(onDelta)
	gen := &rag.Generation{Model: g.Name()}
	err := g.caller.Do(ctx, func(ctx context.Context) error {
		st.Reset()
		if onDelta == nil {
			msg, err := g.client.Messages.New(ctx, params)
			if err != nil {
				return err
			}
			for _, block := range msg.Content {
				if block.Type == "text" {
					_ = st.Add(block.Text)
				}
			}
			gen.InputTokens, gen.OutputTokens = int(msg.Usage.InputTokens), int(msg.Usage.OutputTokens)
			return checkAnswer(st.Text(), string(msg.StopReason))
		}
		stream := g.client.Messages.NewStreaming(ctx, params)
		defer stream.Close()
		stopped, stop := false, ""
		for stream.Next() {
			switch ev := stream.Current().AsAny().(type) {
			case anthropic.MessageStartEvent:
				gen.InputTokens = int(ev.Message.Usage.InputTokens)
			case anthropic.ContentBlockDeltaEvent:
				if ev.Delta.Type == "text_delta" {
					if err := st.Add(ev.Delta.Text); err != nil {
						return err
					}
				}
			case anthropic.MessageDeltaEvent:
				stop = string(ev.Delta.StopReason)
				gen.OutputTokens = int(ev.Usage.OutputTokens)
			case anthropic.MessageStopEvent:
				stopped = true
			}
		}
		if err := stream.Err(); err != nil {
			return st.Fail(err)
		}
		if !stopped {
			return st.Fail(provider.ErrIncomplete)
		}
		return checkAnswer(st.Text(), stop)
	})
	if st.CallbackErr != nil {
		return nil, st.CallbackErr
	}
	if err != nil {
		return nil, err
	}
	gen.Text = st.Text()
	return gen, nil
}

func checkAnswer(text, stop string) error {
	if strings.TrimSpace(text) != "" {
		return nil
	}
	if stop != "" && stop != "end_turn" {
		return provider.BadResponse("the model stopped without an answer (%s)", stop)
	}
	return provider.BadResponse("the answer is empty")
}
