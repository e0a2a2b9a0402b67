package anthropic_test

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/anthropic"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/generate/generatetest"
	"github.com/ragd/ragd/internal/rag"
)

const key = "sk-ant-api03-FakeKey0123456789"

type bundle struct {
	fake *fakeapi.Anthropic
	gen  *anthropic.Generator
}

func setup(t *testing.T, cfg anthropic.GeneratorConfig) *bundle {
	t.Helper()
	fake, gen := fakeapi.Start(t, fakeapi.NewAnthropic, key, func(url string) (*anthropic.Generator, error) {
		cfg.APIKey, cfg.BaseURL = key, url
		cfg.Timeout = cmp.Or(cfg.Timeout, 5*time.Second)
		cfg.Retry.Sleep = (&fakeapi.Waits{}).Sleep
		return anthropic.NewGenerator(cfg)
	})
	return &bundle{fake: fake, gen: gen}
}

var request = rag.GenerateRequest{
	Question: "What does CITE mean?",
	Language: "en",
	History: []rag.Turn{
		{Role: rag.RoleUser, Content: "Hi"},
		{Role: rag.RoleUser, Content: "Still there?"},
		{Role: rag.RoleAssistant, Content: "Yes."},
	},
	Passages: []rag.Passage{
		{N: 1, Title: "Guide", PageStart: 7, PageEnd: 8, Text: "Citations are written as CITE markers in the draft. The editor resolves them."},
	},
}

const wantAnswer = "According to the documents, Citations are written as CITE markers in the draft [1]."

type msgBody struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	System    []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Temperature *float64 `json:"temperature"`
	Stream      bool     `json:"stream"`
}

func lastBody(t *testing.T, f *fakeapi.Anthropic, endpoint string) msgBody {
	t.Helper()
	req, ok := f.LastRequest(endpoint)
	if !ok {
		t.Fatalf("no %s request", endpoint)
	}
	if req.Path != "/v1/messages" || req.Header.Get("x-api-key") != key || req.Header.Get("anthropic-version") == "" {
		t.Errorf("path %s, headers %v", req.Path, req.Header)
	}
	var body msgBody
	if err := req.JSON(&body); err != nil {
		t.Fatal(err)
	}
	if v := f.Violations(); len(v) > 0 {
		t.Errorf("violations %v", v)
	}
	var roles []string
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	// The two user turns are merged: turns alternate.
	if strings.Join(roles, ",") != "user,assistant,user" {
		t.Errorf("roles %v", roles)
	}
	if len(body.System) != 1 || body.System[0].Text != generate.SystemPrompt("") {
		t.Errorf("system %+v", body.System)
	}
	if body.Model != "claude-haiku-4-5" || body.MaxTokens != 2048 || body.Temperature == nil || *body.Temperature != 0.3 {
		t.Errorf("body %+v", body)
	}
	return body
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	b := setup(t, anthropic.GeneratorConfig{})
	gen, err := b.gen.Generate(context.Background(), request, nil)
	if err != nil {
		t.Fatal(err)
	}
	if gen.Text != wantAnswer || gen.Model != "anthropic/claude-haiku-4-5" || gen.InputTokens == 0 || gen.OutputTokens == 0 {
		t.Fatalf("generation %+v", gen)
	}
	if body := lastBody(t, b.fake, fakeapi.EndpointGenerate); body.Stream {
		t.Error("streamed without onDelta")
	}
}

func TestStream(t *testing.T) {
	t.Parallel()
	b := setup(t, anthropic.GeneratorConfig{})
	var deltas []string
	gen, err := b.gen.Generate(context.Background(), request, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) < 3 || strings.Join(deltas, "") != wantAnswer || gen.Text != wantAnswer || gen.OutputTokens == 0 {
		t.Fatalf("deltas %q, gen %+v", deltas, gen)
	}
	if body := lastBody(t, b.fake, fakeapi.EndpointStream); !body.Stream {
		t.Error("not streamed")
	}
	if !strings.Contains(string(mustLast(t, b.fake).Body), "[1] Guide — pp. 7–8") {
		t.Error("passage header missing")
	}
}

func mustLast(t *testing.T, f *fakeapi.Anthropic) fakeapi.Request {
	t.Helper()
	r, ok := f.LastRequest(fakeapi.EndpointStream)
	if !ok {
		t.Fatal("no request")
	}
	return r
}

func TestGenerator(t *testing.T) {
	t.Parallel()
	generatetest.Run(t, generatetest.Kit{
		Provider: "anthropic",
		NewFake:  func(key string) fakeapi.Fake { return fakeapi.NewAnthropic(key) },
		Key:      key,
		New: func(c generatetest.Config) (rag.Generator, error) {
			return anthropic.NewGenerator(anthropic.GeneratorConfig{Config: c})
		},
		ServerError: "api_error: Internal server error",
		WrongKey:    "authentication_error: invalid x-api-key",
		DownStatus:  529,
		Preamble:    3,
	})
}

// TestOverloaded529ThenOK: Anthropic's 529 "overloaded_error" is retried like a 5xx.
func TestOverloaded529ThenOK(t *testing.T) {
	t.Parallel()
	b := setup(t, anthropic.GeneratorConfig{})
	b.fake.FailNext(2, fakeapi.Fault{Status: 529})
	if _, err := b.gen.Generate(context.Background(), request, nil); err != nil {
		t.Fatal(err)
	}
	if b.fake.Calls(fakeapi.EndpointGenerate) != 3 {
		t.Fatalf("%d calls", b.fake.Calls(fakeapi.EndpointGenerate))
	}
}
