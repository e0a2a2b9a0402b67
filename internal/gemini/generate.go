package gemini

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

// DefaultGenerateModel is the model when none is set.
const DefaultGenerateModel = "gemini-2.5-flash"

// GeneratorConfig configures a Generator. Only APIKey is required (GEMINI_API_KEY or GOOGLE_API_KEY).
// BaseURL replaces https://generativelanguage.googleapis.com/ (RAGD_GEMINI_BASE_URL); Model defaults to
// DefaultGenerateModel (a "models/" prefix is accepted), Timeout to generate.DefaultTimeout.
type GeneratorConfig struct {
	provider.Config
	generate.Settings
}

// Generator is a rag.Generator backed by the Gemini API.
type Generator struct {
	client *genai.Client
	caller *provider.Caller
	model  string
	cfg    GeneratorConfig
}

var (
	_ rag.Generator     = (*Generator)(nil)
	_ rag.Completer     = (*Generator)(nil)
	_ rag.JSONCompleter = (*Generator)(nil)
)

// NewGenerator returns a Generator for cfg. It makes no request.
func NewGenerator(ctx context.Context, cfg GeneratorConfig) (*Generator, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("gemini generator: an API key is required (GEMINI_API_KEY or GOOGLE_API_KEY)")
	}
	cfg.Model = strings.TrimPrefix(cfg.Model, "models/")
	cfg.Config = cfg.Config.WithDefaults(DefaultGenerateModel, generate.DefaultTimeout)
	cfg.Settings = cfg.Settings.WithDefaults()
	model := cfg.Model
	caller := cfg.Caller("gemini", rag.CodeLLMFailed, Explain)
	client, err := newClient(ctx, cfg.APIKey, cfg.BaseURL, caller.HTTPClient(cfg.HTTPClient))
	if err != nil {
		return nil, fmt.Errorf("gemini generator: %w", err)
	}
	go generate.WarmTokenizer()
	return &Generator{client: client, caller: caller, model: model, cfg: cfg}, nil
}

// Name is "gemini/<model>".
func (g *Generator) Name() string { return "gemini/" + g.model }

// config is the generation config: thinking is turned off for flash models, whose answers from given
// passages do not need it and would only be slower (Gemini 2.5 takes a zero budget, Gemini 3 a minimal
// level).
func (g *Generator) config(p generate.Prompt) *genai.GenerateContentConfig {
	c := &genai.GenerateContentConfig{
		SystemInstruction:     genai.NewContentFromText(p.System, genai.RoleUser),
		MaxOutputTokens:       int32(cmp.Or(p.MaxOutputTokens, g.cfg.MaxOutputTokens)),
		AutomaticContinuation: genai.Ptr(false),
	}
	t := g.cfg.Temperature
	if p.Temperature != nil {
		t = *p.Temperature
	}
	if t >= 0 {
		c.Temperature = genai.Ptr(float32(t))
	}
	if strings.Contains(g.model, "flash") && !strings.Contains(g.model, "tts") && !strings.Contains(g.model, "image") {
		switch {
		case strings.HasPrefix(g.model, "gemini-2.5"):
			c.ThinkingConfig = &genai.ThinkingConfig{ThinkingBudget: genai.Ptr[int32](0)}
		case strings.HasPrefix(g.model, "gemini-3"):
			c.ThinkingConfig = &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelMinimal}
		}
	}
	return c
}

// Generate answers req from its passages; with onDelta it streams.
func (g *Generator) Generate(ctx context.Context, req rag.GenerateRequest, onDelta func(string) error) (*rag.Generation, error) {
	p := generate.BuildPrompt(req, g.cfg.Budget)
	var contents []*genai.Content
	for _, t := range p.Turns() {
		role := genai.Role(genai.RoleUser)
		if t.Role == rag.RoleAssistant {
			role = genai.RoleModel
		}
		contents = append(contents, genai.NewContentFromText(t.Content, role))
	}
	cfg := g.config(p)
	st := generate.NewStream(onDelta)
	gen := &rag.Generation{Model: g.Name()}
	err := g.caller.Do(ctx, func(ctx context.Context) error {
		st.Reset()
		if onDelta == nil {
			if _, err := g.once(ctx, contents, cfg, st, gen); err != nil {
				return err
			}
			return checkText(st.Text())
		}
		finished := false
		for resp, err := range g.client.Models.GenerateContentStream(ctx, g.model, contents, cfg) {
			if err != nil {
				return st.Fail(err)
			}
			done, err := collect(resp, st, gen)
			if err != nil {
				return err
			}
			finished = finished || done
		}
		if !finished {
			return st.Fail(provider.ErrIncomplete)
		}
		return checkText(st.Text())
	})
	return st.Finish(gen, err)
}

// Complete answers a plain system and user message (rag.Completer), not streamed.
func (g *Generator) Complete(ctx context.Context, system, user string) (string, error) {
	return g.complete(ctx, user, g.config(generate.Prompt{System: system, User: user}))
}

// CompleteJSON answers a plain system and user message with JSON that follows schema (rag.JSONCompleter):
// responseMimeType application/json with responseJsonSchema, at temperature 0.
func (g *Generator) CompleteJSON(ctx context.Context, system, user string, schema rag.JSONSchema) ([]byte, error) {
	zero := 0.0
	cfg := g.config(generate.Prompt{System: system, User: user, Temperature: &zero})
	cfg.ResponseMIMEType = "application/json"
	cfg.ResponseJsonSchema = schema.Schema
	text, err := g.complete(ctx, user, cfg)
	return []byte(text), err
}

// complete makes one non-streamed call of user under cfg (retried by the caller's rules) and returns its
// text; an answer cut at the output token limit is an error, since a plain completion is read whole.
func (g *Generator) complete(ctx context.Context, user string, cfg *genai.GenerateContentConfig) (string, error) {
	contents := []*genai.Content{genai.NewContentFromText(user, genai.RoleUser)}
	st := generate.NewStream(nil)
	gen := &rag.Generation{Model: g.Name()}
	err := g.caller.Do(ctx, func(ctx context.Context) error {
		st.Reset()
		resp, err := g.once(ctx, contents, cfg, st, gen)
		if err != nil {
			return err
		}
		if c := resp.Candidates[0]; c.FinishReason == genai.FinishReasonMaxTokens {
			return provider.BadResponse("the answer was cut at the output token limit")
		}
		return checkText(st.Text())
	})
	return st.Text(), err
}

// once makes one non-streamed call and adds its text and usage to st and gen; an answer without a finish
// reason is an error.
func (g *Generator) once(ctx context.Context, contents []*genai.Content, cfg *genai.GenerateContentConfig, st *generate.Stream, gen *rag.Generation) (*genai.GenerateContentResponse, error) {
	resp, err := g.client.Models.GenerateContent(ctx, g.model, contents, cfg)
	if err != nil {
		return nil, err
	}
	done, err := collect(resp, st, gen)
	if err != nil {
		return nil, err
	}
	if !done {
		return nil, provider.BadResponse("the answer has no finish reason")
	}
	return resp, nil
}

// collect adds the text of a response (or stream chunk) and its usage; done reports a finish reason.
func collect(resp *genai.GenerateContentResponse, st *generate.Stream, gen *rag.Generation) (done bool, err error) {
	if resp == nil {
		return false, nil
	}
	if u := resp.UsageMetadata; u != nil {
		gen.InputTokens, gen.OutputTokens = int(u.PromptTokenCount), int(u.CandidatesTokenCount)
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		return false, provider.BadResponse("the question was blocked (%s)", pf.BlockReason)
	}
	if len(resp.Candidates) == 0 {
		return false, nil
	}
	c := resp.Candidates[0]
	if c.Content != nil {
		for _, part := range c.Content.Parts {
			if part == nil || part.Thought {
				continue
			}
			if err := st.Add(part.Text); err != nil {
				return false, err
			}
		}
	}
	if c.FinishReason == "" || c.FinishReason == genai.FinishReasonUnspecified {
		return false, nil
	}
	switch c.FinishReason {
	case genai.FinishReasonStop, genai.FinishReasonMaxTokens:
		return true, nil
	}
	if st.Text() == "" {
		return true, provider.BadResponse("the model stopped without an answer (%s)", c.FinishReason)
	}
	return true, nil
}

func checkText(text string) error {
	if strings.TrimSpace(text) == "" {
		return provider.BadResponse("the answer is empty")
	}
	return nil
}
