package anthropic

import (
	"cmp"
	"context"
	"errors"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

// Defaults.
const (
	DefaultBaseURL       = "https://api.anthropic.com"
	DefaultGenerateModel = "claude-haiku-4-5"
)

// GeneratorConfig configures a Generator. Only APIKey is required: ANTHROPIC_API_KEY, sent in x-api-key.
// BaseURL replaces DefaultBaseURL (ANTHROPIC_BASE_URL); Model defaults to DefaultGenerateModel, Timeout to
// generate.DefaultTimeout; Temperature is sent as at most 1.
type GeneratorConfig struct {
	provider.Config
	generate.Settings
}

// Generator is a rag.Generator backed by the Anthropic Messages API.
type Generator struct {
	client anthropic.Client
	caller *provider.Caller
	cfg    GeneratorConfig
}

var (
	_ rag.Generator     = (*Generator)(nil)
	_ rag.Completer     = (*Generator)(nil)
	_ rag.JSONCompleter = (*Generator)(nil)
)

// NewGenerator returns a Generator for cfg. It makes no request.
func NewGenerator(cfg GeneratorConfig) (*Generator, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("anthropic generator: an API key is required (ANTHROPIC_API_KEY)")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	cfg.Config = cfg.Config.WithDefaults(DefaultGenerateModel, generate.DefaultTimeout)
	cfg.Settings = cfg.Settings.WithDefaults()
	caller := cfg.Caller("anthropic", rag.CodeLLMFailed, Explain)
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
	return st.Finish(gen, err)
}

// Complete answers a plain system and user message (rag.Completer), not streamed.
func (g *Generator) Complete(ctx context.Context, system, user string) (string, error) {
	return g.complete(ctx, g.params(generate.Prompt{System: system, User: user}))
}

// CompleteJSON answers a plain system and user message with JSON that follows schema (rag.JSONCompleter):
// output_config.format json_schema, at temperature 0.
func (g *Generator) CompleteJSON(ctx context.Context, system, user string, schema rag.JSONSchema) ([]byte, error) {
	zero := 0.0
	params := g.params(generate.Prompt{System: system, User: user, Temperature: &zero})
	params.OutputConfig = anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schema.Schema}}
	text, err := g.complete(ctx, params)
	return []byte(text), err
}

// complete makes one non-streamed call (retried by the caller's rules) and returns its text; an answer cut
// at the output token limit or refused is an error, since a plain completion is read whole.
func (g *Generator) complete(ctx context.Context, params anthropic.MessageNewParams) (string, error) {
	var b strings.Builder
	err := g.caller.Do(ctx, func(ctx context.Context) error {
		b.Reset()
		msg, err := g.client.Messages.New(ctx, params)
		if err != nil {
			return err
		}
		for _, block := range msg.Content {
			if block.Type == "text" {
				b.WriteString(block.Text)
			}
		}
		switch msg.StopReason {
		case anthropic.StopReasonMaxTokens:
			return provider.BadResponse("the answer was cut at the output token limit")
		case anthropic.StopReasonRefusal:
			return provider.BadResponse("the model refused to answer")
		}
		return checkAnswer(b.String(), string(msg.StopReason))
	})
	return b.String(), err
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
