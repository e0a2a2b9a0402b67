package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/generate/anthropic"
	"github.com/ragd/ragd/internal/rag"
)

const key = "sk-ant-api03-FakeKey0123456789"

type bundle struct {
	fake  *fakeapi.Anthropic
	gen   *anthropic.Generator
	mu    sync.Mutex
	waits []time.Duration
}

func (b *bundle) sleep(ctx context.Context, d time.Duration) error {
	b.mu.Lock()
	b.waits = append(b.waits, d)
	b.mu.Unlock()
	return ctx.Err()
}

func setup(t *testing.T, cfg anthropic.Config) *bundle {
	t.Helper()
	b := &bundle{fake: fakeapi.NewAnthropic(key)}
	t.Cleanup(b.fake.Close)
	cfg.APIKey = key
	cfg.BaseURL = b.fake.BaseURL()
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	cfg.Retry.Sleep = b.sleep
	g, err := anthropic.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.gen = g
	return b
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
	b := setup(t, anthropic.Config{})
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
	b := setup(t, anthropic.Config{})
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

func TestFaults(t *testing.T) {
	t.Parallel()
	stream := func(b *bundle) ([]string, error) {
		var deltas []string
		_, err := b.gen.Generate(context.Background(), request, func(d string) error {
			deltas = append(deltas, d)
			return nil
		})
		return deltas, err
	}
	t.Run("RateLimitedThenOK", func(t *testing.T) {
		t.Parallel()
		b := setup(t, anthropic.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 429, RetryAfter: 4 * time.Second})
		deltas, err := stream(b)
		if err != nil || strings.Join(deltas, "") != wantAnswer {
			t.Fatalf("err %v", err)
		}
		if len(b.waits) != 1 || b.waits[0] < 4*time.Second {
			t.Fatalf("waits %v", b.waits)
		}
	})
	t.Run("Overloaded529ThenOK", func(t *testing.T) {
		t.Parallel()
		b := setup(t, anthropic.Config{})
		b.fake.FailNext(2, fakeapi.Fault{Status: 529})
		if _, err := b.gen.Generate(context.Background(), request, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ThreeServerErrors", func(t *testing.T) {
		t.Parallel()
		b := setup(t, anthropic.Config{})
		b.fake.FailNext(3, fakeapi.Fault{Status: 500})
		_, err := stream(b)
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "api_error: Internal server error") {
			t.Fatalf("err %v", err)
		}
		if b.fake.Calls(fakeapi.EndpointStream) != 3 {
			t.Fatalf("%d calls", b.fake.Calls(fakeapi.EndpointStream))
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		b := setup(t, anthropic.Config{Timeout: 100 * time.Millisecond})
		b.fake.FailNext(1, fakeapi.Fault{Delay: 5 * time.Second})
		_, err := stream(b)
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "timed out") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("MalformedJSON", func(t *testing.T) {
		t.Parallel()
		b := setup(t, anthropic.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Malformed: true})
		_, err := b.gen.Generate(context.Background(), request, nil)
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "unusable response") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("MalformedStreamEvent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, anthropic.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Malformed: true})
		deltas, err := stream(b)
		if rag.ErrorCode(err) != rag.CodeLLMFailed || len(deltas) == 0 {
			t.Fatalf("err %v, deltas %q", err, deltas)
		}
	})
	t.Run("StreamCut", func(t *testing.T) {
		t.Parallel()
		b := setup(t, anthropic.Config{})
		// message_start, content_block_start, ping, two deltas, then the connection drops.
		b.fake.FailNext(1, fakeapi.Fault{CutAfter: 5})
		deltas, err := stream(b)
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "connection error") {
			t.Fatalf("err %v", err)
		}
		if len(deltas) != 2 || b.fake.Calls(fakeapi.EndpointStream) != 1 {
			t.Fatalf("deltas %q, calls %d", deltas, b.fake.Calls(fakeapi.EndpointStream))
		}
	})
	t.Run("CutBeforeAnswerIsRetried", func(t *testing.T) {
		t.Parallel()
		b := setup(t, anthropic.Config{})
		b.fake.FailNext(1, fakeapi.Fault{CutAfter: 2})
		deltas, err := stream(b)
		if err != nil || strings.Join(deltas, "") != wantAnswer || b.fake.Calls(fakeapi.EndpointStream) != 2 {
			t.Fatalf("err %v, deltas %q", err, deltas)
		}
	})
	t.Run("CallbackErrorStops", func(t *testing.T) {
		t.Parallel()
		b := setup(t, anthropic.Config{})
		gone := errors.New("client went away")
		_, err := b.gen.Generate(context.Background(), request, func(string) error { return gone })
		if err != gone {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("KeyNeverInError", func(t *testing.T) {
		t.Parallel()
		b := setup(t, anthropic.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 401, Message: "invalid x-api-key " + key})
		_, err := stream(b)
		if err == nil || strings.Contains(err.Error(), key) || strings.Contains(rag.ErrorMessage(err), key) {
			t.Fatalf("err %v", err)
		}
		if !strings.Contains(rag.ErrorMessage(err), "authentication_error") {
			t.Fatalf("message %q", rag.ErrorMessage(err))
		}
	})
	t.Run("Down", func(t *testing.T) {
		t.Parallel()
		b := setup(t, anthropic.Config{})
		b.fake.SetDown(true)
		_, err := stream(b)
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "HTTP 529") {
			t.Fatalf("err %v", err)
		}
	})
}
