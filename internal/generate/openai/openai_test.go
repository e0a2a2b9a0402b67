package openai_test

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
	"github.com/ragd/ragd/internal/generate/openai"
	"github.com/ragd/ragd/internal/rag"
)

const key = "sk-proj-FakeGenerateKey0123456789"

type bundle struct {
	fake  *fakeapi.OpenAI
	gen   *openai.Generator
	mu    sync.Mutex
	waits []time.Duration
}

func (b *bundle) sleep(ctx context.Context, d time.Duration) error {
	b.mu.Lock()
	b.waits = append(b.waits, d)
	b.mu.Unlock()
	return ctx.Err()
}

func setup(t *testing.T, cfg openai.Config) *bundle {
	t.Helper()
	b := &bundle{fake: fakeapi.NewOpenAI(key)}
	t.Cleanup(b.fake.Close)
	cfg.APIKey = key
	cfg.BaseURL = b.fake.BaseURL()
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	cfg.Retry.Sleep = b.sleep
	g, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.gen = g
	return b
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
	b := setup(t, openai.Config{Model: "llama3.1:8b"})
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
		b := setup(t, openai.Config{OpenAIFields: official})
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
	b := setup(t, openai.Config{Model: "gpt-5-mini", OpenAIFields: true})
	if _, err := b.gen.Generate(context.Background(), request, nil); err != nil {
		t.Fatal(err)
	}
	body := lastBody(t, b.fake, fakeapi.EndpointGenerate)
	if body.Temperature != nil || body.ReasoningEffort != "low" || body.MaxCompletionTokens == nil {
		t.Fatalf("body %+v", body)
	}
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
		b := setup(t, openai.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 429, RetryAfter: time.Second})
		deltas, err := stream(b)
		if err != nil || strings.Join(deltas, "") != wantAnswer {
			t.Fatalf("err %v, deltas %q", err, deltas)
		}
		if len(b.waits) != 1 || b.waits[0] < time.Second || b.fake.Calls(fakeapi.EndpointStream) != 2 {
			t.Fatalf("waits %v", b.waits)
		}
	})
	t.Run("ThreeServerErrors", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{})
		b.fake.FailNext(3, fakeapi.Fault{Status: 500})
		_, err := stream(b)
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "The server had an error") {
			t.Fatalf("err %v", err)
		}
		if b.fake.Calls(fakeapi.EndpointStream) != 3 {
			t.Fatalf("%d calls", b.fake.Calls(fakeapi.EndpointStream))
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{Timeout: 100 * time.Millisecond})
		b.fake.FailNext(1, fakeapi.Fault{Delay: 5 * time.Second})
		_, err := b.gen.Generate(context.Background(), request, nil)
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "timed out") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("MalformedJSON", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Malformed: true})
		_, err := b.gen.Generate(context.Background(), request, nil)
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "unusable response") {
			t.Fatalf("err %v", err)
		}
		if b.fake.Calls(fakeapi.EndpointGenerate) != 1 {
			t.Fatal("malformed JSON must not be retried")
		}
	})
	t.Run("MalformedStreamEvent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Malformed: true})
		deltas, err := stream(b)
		if rag.ErrorCode(err) != rag.CodeLLMFailed || len(deltas) == 0 {
			t.Fatalf("err %v, deltas %q", err, deltas)
		}
	})
	t.Run("StreamCut", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{})
		b.fake.FailNext(1, fakeapi.Fault{CutAfter: 3})
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
		b := setup(t, openai.Config{})
		// The first chunk only carries the role: nothing reached the caller when the connection drops.
		b.fake.FailNext(1, fakeapi.Fault{CutAfter: 1})
		deltas, err := stream(b)
		if err != nil || strings.Join(deltas, "") != wantAnswer || b.fake.Calls(fakeapi.EndpointStream) != 2 {
			t.Fatalf("err %v, deltas %q", err, deltas)
		}
	})
	t.Run("CallbackErrorStops", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{})
		gone := errors.New("client went away")
		_, err := b.gen.Generate(context.Background(), request, func(string) error { return gone })
		if err != gone {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("KeyNeverInError", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 401, Message: "Incorrect API key provided: " + key})
		_, err := stream(b)
		if err == nil || strings.Contains(err.Error(), key) || strings.Contains(rag.ErrorMessage(err), key) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("Down", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{})
		b.fake.SetDown(true)
		_, err := b.gen.Generate(context.Background(), request, nil)
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "HTTP 503") {
			t.Fatalf("err %v", err)
		}
	})
}
