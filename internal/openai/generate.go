package openai

import (
	"context"
	"errors"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

// DefaultGenerateModel is the chat model when none is set.
const DefaultGenerateModel = "gpt-4.1-mini"

// GeneratorConfig configures a Generator. APIKey (OPENAI_API_KEY, sent as a bearer token) is required for
// OpenAI itself, optional for a local server; BaseURL is the API root including /v1 (OPENAI_BASE_URL; default
// DefaultBaseURL); Model defaults to DefaultGenerateModel, Timeout to generate.DefaultTimeout. Temperature is
// not sent to reasoning models (o1, o3, o4, gpt-5), which only accept their default. MaxOutputTokens is sent
// as max_completion_tokens to OpenAI and as max_tokens to other servers, which do not all know the newer field.
type GeneratorConfig struct {
	provider.Config
	generate.Settings
	// OpenAIFields sends max_completion_tokens and stream_options (usage in the stream) as OpenAI wants;
	// it is on by itself when BaseURL is api.openai.com (a proxy in front of OpenAI may need it set).
	OpenAIFields bool
}

// Generator is a rag.Generator backed by an OpenAI-compatible chat completions endpoint.
type Generator struct {
	client openai.Client
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
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	official := isOpenAI(cfg.BaseURL)
	if official {
		cfg.OpenAIFields = true
	}
	if official && cfg.APIKey == "" {
		return nil, errors.New("openai generator: an API key is required for api.openai.com (OPENAI_API_KEY)")
	}
	cfg.Config = cfg.Config.WithDefaults(DefaultGenerateModel, generate.DefaultTimeout)
	cfg.Settings = cfg.Settings.WithDefaults()
	caller := cfg.Caller("openai", rag.CodeLLMFailed, Explain)
	client := newClient(cfg.BaseURL, cfg.APIKey, caller.HTTPClient(cfg.HTTPClient))
	go generate.WarmTokenizer()
	return &Generator{client: client, caller: caller, cfg: cfg}, nil
}

// Name is "openai/<model>".
func (g *Generator) Name() string { return "openai/" + g.cfg.Model }

// reasoning reports OpenAI's reasoning models, which reject a temperature.
func reasoning(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if model == p || strings.HasPrefix(model, p+"-") {
			return true
		}
	}
	return false
}

func (g *Generator) params(p generate.Prompt, stream bool) openai.ChatCompletionNewParams {
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(p.System)}
	for _, t := range p.Turns() {
		if t.Role == rag.RoleAssistant {
			msgs = append(msgs, openai.AssistantMessage(t.Content))
		} else {
			msgs = append(msgs, openai.UserMessage(t.Content))
		}
	}
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(g.cfg.Model), Messages: msgs}
	if reasoning(g.cfg.Model) {
		params.ReasoningEffort = shared.ReasoningEffortLow
	} else if t := temperature(p, g.cfg.Temperature); t >= 0 {
		params.Temperature = openai.Float(t)
	}
	maxOut := g.cfg.MaxOutputTokens
	if p.MaxOutputTokens > 0 {
		maxOut = p.MaxOutputTokens
	}
	if g.cfg.OpenAIFields {
		params.MaxCompletionTokens = openai.Int(int64(maxOut))
		if stream {
			params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		}
	} else {
		params.MaxTokens = openai.Int(int64(maxOut))
	}
	return params
}

// temperature is the prompt's temperature when it has one, else the configured one.
func temperature(p generate.Prompt, configured float64) float64 {
	if p.Temperature != nil {
		return *p.Temperature
	}
	return configured
}

// Generate answers req from its passages; with onDelta it streams.
func (g *Generator) Generate(ctx context.Context, req rag.GenerateRequest, onDelta func(string) error) (*rag.Generation, error) {
	p := generate.BuildPrompt(req, g.cfg.Budget)
	st := generate.NewStream(onDelta)
	gen := &rag.Generation{Model: g.Name()}
	err := g.caller.Do(ctx, func(ctx context.Context) error {
		st.Reset()
		if onDelta == nil {
			resp, err := g.client.Chat.Completions.New(ctx, g.params(p, false))
			if err != nil {
				return err
			}
			if len(resp.Choices) == 0 {
				return provider.BadResponse("the answer has no choices")
			}
			c := resp.Choices[0]
			text := c.Message.Content
			if text == "" {
				text = c.Message.Refusal
			}
			_ = st.Add(text)
			gen.InputTokens, gen.OutputTokens = int(resp.Usage.PromptTokens), int(resp.Usage.CompletionTokens)
			return checkAnswer(st.Text(), c.FinishReason)
		}
		stream := g.client.Chat.Completions.NewStreaming(ctx, g.params(p, true))
		defer stream.Close()
		finish := ""
		for stream.Next() {
			chunk := stream.Current()
			if chunk.Usage.TotalTokens > 0 {
				gen.InputTokens, gen.OutputTokens = int(chunk.Usage.PromptTokens), int(chunk.Usage.CompletionTokens)
			}
			if len(chunk.Choices) == 0 {
				continue
			}
			c := chunk.Choices[0]
			piece := c.Delta.Content
			if piece == "" {
				piece = c.Delta.Refusal
			}
			if err := st.Add(piece); err != nil {
				return err
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
		if err := stream.Err(); err != nil {
			return st.Fail(err)
		}
		if finish == "" {
			return st.Fail(provider.ErrIncomplete)
		}
		return checkAnswer(st.Text(), finish)
	})
	return st.Finish(gen, err)
}

// Complete answers a plain system and user message (rag.Completer), not streamed.
func (g *Generator) Complete(ctx context.Context, system, user string) (string, error) {
	var text string
	err := g.caller.Do(ctx, func(ctx context.Context) error {
		resp, err := g.client.Chat.Completions.New(ctx, g.params(generate.Prompt{System: system, User: user}, false))
		if err != nil {
			return err
		}
		if len(resp.Choices) == 0 {
			return provider.BadResponse("the answer has no choices")
		}
		text = resp.Choices[0].Message.Content
		return checkAnswer(text, resp.Choices[0].FinishReason)
	})
	return text, err
}

// CompleteJSON answers a plain system and user message with JSON that follows schema (rag.JSONCompleter):
// response_format json_schema, strict, at temperature 0.
func (g *Generator) CompleteJSON(ctx context.Context, system, user string, schema rag.JSONSchema) ([]byte, error) {
	zero := 0.0
	params := g.params(generate.Prompt{System: system, User: user, Temperature: &zero}, false)
	params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: schema.Name, Schema: schema.Schema, Strict: openai.Bool(true)},
	}}
	var text string
	err := g.caller.Do(ctx, func(ctx context.Context) error {
		resp, err := g.client.Chat.Completions.New(ctx, params)
		if err != nil {
			return err
		}
		if len(resp.Choices) == 0 {
			return provider.BadResponse("the answer has no choices")
		}
		c := resp.Choices[0]
		if c.Message.Refusal != "" {
			return provider.BadResponse("the model refused: %s", c.Message.Refusal)
		}
		text = c.Message.Content
		if c.FinishReason == "length" {
			return provider.BadResponse("the structured answer was cut at the output token limit")
		}
		return checkAnswer(text, c.FinishReason)
	})
	return []byte(text), err
}

func checkAnswer(text, finish string) error {
	if strings.TrimSpace(text) != "" {
		return nil
	}
	if finish != "" && finish != "stop" {
		return provider.BadResponse("the model stopped without an answer (%s)", finish)
	}
	return provider.BadResponse("the answer is empty")
}
