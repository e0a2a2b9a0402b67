package gemini_test

import (
	"cmp"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/gemini"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/generate/generatetest"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

const key = "AIzaFakeGenerateKey-0123456789"

type bundle struct {
	fake *fakeapi.Gemini
	gen  *gemini.Generator
}

func setup(t *testing.T, cfg gemini.GeneratorConfig) *bundle {
	t.Helper()
	fake, gen := fakeapi.Start(t, fakeapi.NewGemini, key, func(url string) (*gemini.Generator, error) {
		cfg.APIKey, cfg.BaseURL = key, url
		cfg.Timeout = cmp.Or(cfg.Timeout, 5*time.Second)
		cfg.Retry.Sleep = (&fakeapi.Waits{}).Sleep
		return gemini.NewGenerator(context.Background(), cfg)
	})
	return &bundle{fake: fake, gen: gen}
}

var request = rag.GenerateRequest{
	Question: "How long is the main runway?",
	Language: "en",
	History: []rag.Turn{
		{Role: rag.RoleAssistant, Content: "Hello, ask me about the airport."},
		{Role: rag.RoleUser, Content: "What about terminals?"},
		{Role: rag.RoleAssistant, Content: "Terminal 2 opened in 2018 [1]."},
	},
	Passages: []rag.Passage{
		{N: 1, Title: "Runways", PageStart: 2, Text: "The main runway is 3,200 metres long. It was resurfaced in 2019."},
		{N: 2, Title: "Terminals", Text: "Terminal 2 opened in 2018."},
	},
}

const wantAnswer = "According to the documents, The main runway is 3,200 metres long [1]."

type genBody struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"contents"`
	SystemInstruction struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"systemInstruction"`
	GenerationConfig struct {
		Temperature     float64 `json:"temperature"`
		MaxOutputTokens int     `json:"maxOutputTokens"`
		ThinkingConfig  *struct {
			ThinkingBudget *int   `json:"thinkingBudget"`
			ThinkingLevel  string `json:"thinkingLevel"`
		} `json:"thinkingConfig"`
	} `json:"generationConfig"`
}

func checkRequest(t *testing.T, f *fakeapi.Gemini, endpoint, path string) genBody {
	t.Helper()
	req, ok := f.LastRequest(endpoint)
	if !ok {
		t.Fatalf("no %s request", endpoint)
	}
	if req.Path != path || req.Header.Get("x-goog-api-key") != key {
		t.Errorf("path %s, key %q", req.Path, req.Header.Get("x-goog-api-key"))
	}
	var body genBody
	if err := req.JSON(&body); err != nil {
		t.Fatal(err)
	}
	if len(body.SystemInstruction.Parts) == 0 || body.SystemInstruction.Parts[0].Text != generate.SystemPrompt("") {
		t.Errorf("system instruction %+v", body.SystemInstruction)
	}
	// The leading assistant greeting is dropped: turns start with the user and alternate.
	var roles []string
	for _, c := range body.Contents {
		roles = append(roles, c.Role)
	}
	if strings.Join(roles, ",") != "user,model,user" {
		t.Errorf("roles %v", roles)
	}
	last := body.Contents[len(body.Contents)-1].Parts[0].Text
	if !strings.Contains(last, "[1] Runways — p. 2\nThe main runway") || !strings.Contains(last, "Question: How long is the main runway?") {
		t.Errorf("user message %q", last)
	}
	gc := body.GenerationConfig
	if gc.Temperature < 0.299 || gc.Temperature > 0.301 || gc.MaxOutputTokens != 2048 {
		t.Errorf("generation config %+v", gc)
	}
	if gc.ThinkingConfig == nil || gc.ThinkingConfig.ThinkingBudget == nil || *gc.ThinkingConfig.ThinkingBudget != 0 {
		t.Errorf("thinking not off for a flash model: %+v", gc.ThinkingConfig)
	}
	if v := f.Violations(); len(v) > 0 {
		t.Errorf("violations %v", v)
	}
	return body
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	b := setup(t, gemini.GeneratorConfig{})
	gen, err := b.gen.Generate(context.Background(), request, nil)
	if err != nil {
		t.Fatal(err)
	}
	if gen.Text != wantAnswer || gen.Model != "gemini/gemini-2.5-flash" || b.gen.Name() != gen.Model {
		t.Fatalf("generation %+v", gen)
	}
	if gen.InputTokens == 0 || gen.OutputTokens == 0 {
		t.Errorf("usage %+v", gen)
	}
	checkRequest(t, b.fake, fakeapi.EndpointGenerate, "/v1beta/models/gemini-2.5-flash:generateContent")
}

func TestStream(t *testing.T) {
	t.Parallel()
	b := setup(t, gemini.GeneratorConfig{})
	var deltas []string
	gen, err := b.gen.Generate(context.Background(), request, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) < 3 || strings.Join(deltas, "") != gen.Text || gen.Text != wantAnswer {
		t.Fatalf("deltas %q, text %q", deltas, gen.Text)
	}
	checkRequest(t, b.fake, fakeapi.EndpointStream, "/v1beta/models/gemini-2.5-flash:streamGenerateContent")
	if req, _ := b.fake.LastRequest(fakeapi.EndpointStream); req.Query != "alt=sse" {
		t.Errorf("query %q", req.Query)
	}
	if gen.OutputTokens == 0 {
		t.Errorf("usage %+v", gen)
	}
}

func TestThinkingConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		model, budget, level string
	}{{"gemini-2.5-flash-lite", "0", ""}, {"gemini-3.5-flash", "", "MINIMAL"}, {"gemini-2.5-pro", "", ""}} {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			b := setup(t, gemini.GeneratorConfig{Config: provider.Config{Model: tc.model}})
			if _, err := b.gen.Generate(context.Background(), request, nil); err != nil {
				t.Fatal(err)
			}
			req, _ := b.fake.LastRequest(fakeapi.EndpointGenerate)
			var body genBody
			_ = req.JSON(&body)
			tcfg := body.GenerationConfig.ThinkingConfig
			budget, level := "", ""
			if tcfg != nil {
				level = tcfg.ThinkingLevel
				if tcfg.ThinkingBudget != nil {
					budget = "0"
				}
			}
			if budget != tc.budget || level != tc.level {
				t.Fatalf("thinking %+v", tcfg)
			}
		})
	}
}

func TestGenerator(t *testing.T) {
	t.Parallel()
	generatetest.Run(t, generatetest.Kit{
		Provider: "gemini",
		NewFake:  func(key string) fakeapi.Fake { return fakeapi.NewGemini(key) },
		Key:      key,
		New: func(c generatetest.Config) (rag.Generator, error) {
			return gemini.NewGenerator(context.Background(), gemini.GeneratorConfig{Config: c})
		},
		ServerError: "An internal error has occurred",
		WrongKey:    "API key not valid",
		DownStatus:  503,
		Preamble:    0,
	})
}
