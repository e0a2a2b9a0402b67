package openai_test

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/generate/generatetest"
	"github.com/ragd/ragd/internal/openai"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

const key = "sk-proj-FakeGenerateKey0123456789"

type bundle struct {
	fake *fakeapi.OpenAI
	gen  *openai.Generator
}

func setup(t *testing.T, cfg openai.GeneratorConfig) *bundle {
	t.Helper()
	fake, gen := fakeapi.Start(t, fakeapi.NewOpenAI, key, func(url string) (*openai.Generator, error) {
		cfg.APIKey, cfg.BaseURL = key, url
		cfg.Timeout = cmp.Or(cfg.Timeout, 5*time.Second)
		cfg.Retry.Sleep = (&fakeapi.Waits{}).Sleep
		return openai.NewGenerator(cfg)
	})
	return &bundle{fake: fake, gen: gen}
}

var request = rag.GenerateRequest{
	Question: "활주로 길이는?",
	Language: "ko",
	History: []rag.Turn{
		{Role: rag.RoleUser, Content: "터미널은?"},
		{Role: rag.RoleAssistant, Content: "제2터미널은 2018년에 열렸다 [1]."},
	},
	Passages: []rag.Passage{
		{N: 1, Title: "활주로", Section: "시설", Text: "제1활주로는 길이 3,750미터이다. 2001년에 개항했다."},
	},
}

const wantAnswer = "According to the documents, 제1활주로는 길이 3,750미터이다 [1]."

type chatBody struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Temperature         *float64        `json:"temperature"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	ReasoningEffort     string          `json:"reasoning_effort"`
	Stream              bool            `json:"stream"`
	StreamOptions       json.RawMessage `json:"stream_options"`
}

func lastBody(t *testing.T, f *fakeapi.OpenAI, endpoint string) chatBody {
	t.Helper()
	req, ok := f.LastRequest(endpoint)
	if !ok {
		t.Fatalf("no %s request", endpoint)
	}
	if req.Path != "/v1/chat/completions" || req.Header.Get("Authorization") != "Bearer "+key {
		t.Errorf("path %s, auth %q", req.Path, req.Header.Get("Authorization"))
	}
	var body chatBody
	if err := req.JSON(&body); err != nil {
		t.Fatal(err)
	}
	if v := f.Violations(); len(v) > 0 {
		t.Errorf("violations %v", v)
	}
	return body
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	b := setup(t, openai.GeneratorConfig{Config: provider.Config{Model: "llama3.1:8b"}})
	gen, err := b.gen.Generate(context.Background(), request, nil)
	if err != nil {
		t.Fatal(err)
	}
	if gen.Text != wantAnswer || gen.Model != "openai/llama3.1:8b" || gen.InputTokens == 0 {
		t.Fatalf("generation %+v", gen)
	}
	body := lastBody(t, b.fake, fakeapi.EndpointGenerate)
	var roles []string
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,user" || body.Messages[0].Content != generate.SystemPrompt("") {
		t.Errorf("messages %+v", body.Messages)
	}
	if last := body.Messages[3].Content; !strings.Contains(last, "[1] 활주로 — 시설\n제1활주로") || !strings.Contains(last, "Answer in Korean") {
		t.Errorf("user message %q", last)
	}
	// A local server gets the widely known max_tokens.
	if body.Temperature == nil || *body.Temperature != 0.3 || body.MaxTokens == nil || *body.MaxTokens != 2048 || body.MaxCompletionTokens != nil || body.Stream {
		t.Errorf("body %+v", body)
	}
}

func TestStream(t *testing.T) {
	t.Parallel()
	for _, official := range []bool{false, true} {
		b := setup(t, openai.GeneratorConfig{OpenAIFields: official})
		var deltas []string
		gen, err := b.gen.Generate(context.Background(), request, func(d string) error {
			deltas = append(deltas, d)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(deltas) < 3 || strings.Join(deltas, "") != wantAnswer || gen.Text != wantAnswer {
			t.Fatalf("deltas %q", deltas)
		}
		body := lastBody(t, b.fake, fakeapi.EndpointStream)
		if !body.Stream || (body.MaxCompletionTokens != nil) != official || (len(body.StreamOptions) > 0) != official {
			t.Errorf("official %v: body %+v", official, body)
		}
		if official && gen.OutputTokens == 0 {
			t.Errorf("usage not read from the stream: %+v", gen)
		}
	}
}

func TestReasoningModel(t *testing.T) {
	t.Parallel()
	b := setup(t, openai.GeneratorConfig{Config: provider.Config{Model: "gpt-5-mini"}, OpenAIFields: true})
	if _, err := b.gen.Generate(context.Background(), request, nil); err != nil {
		t.Fatal(err)
	}
	body := lastBody(t, b.fake, fakeapi.EndpointGenerate)
	if body.Temperature != nil || body.ReasoningEffort != "low" || body.MaxCompletionTokens == nil {
		t.Fatalf("body %+v", body)
	}
}

func TestGenerator(t *testing.T) {
	t.Parallel()
	generatetest.Run(t, generatetest.Kit{
		Provider: "openai",
		NewFake:  func(key string) fakeapi.Fake { return fakeapi.NewOpenAI(key) },
		Key:      key,
		New: func(c generatetest.Config) (rag.Generator, error) {
			return openai.NewGenerator(openai.GeneratorConfig{Config: c})
		},
		ServerError: "server_error: The server had an error",
		WrongKey:    "Incorrect API key provided",
		DownStatus:  503,
		Preamble:    1,
	})
}
