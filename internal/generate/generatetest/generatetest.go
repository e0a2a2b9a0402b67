// Package generatetest is the suite every hosted generator passes against its provider's fake
// (internal/fakeapi): an answer whole and streamed, and one fault matrix (429 with Retry-After, 5xx,
// timeouts, malformed JSON and stream events, a stream cut before and after text reached the caller, a
// caller that stops, a provider that is down, a wrong key, a key that must never reach a message). An
// adapter's own tests keep only what is particular to its wire format.
package generatetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

// Config is what the suite sets on the generator under test (APIKey, BaseURL, Timeout, Retry): the
// provider.Config of its GeneratorConfig, whose other fields stay at the adapter's defaults.
type Config = provider.Config

// Kit describes a generator to the suite.
type Kit struct {
	// Provider is the name in the generator's Name and messages ("gemini").
	Provider string
	// NewFake starts the provider's fake accepting key.
	NewFake func(key string) fakeapi.Fake
	// Key is a key in the provider's format; the suite checks that it never appears in an error.
	Key string
	// New returns the generator (default model) for c.
	New func(c Config) (rag.Generator, error)
	// ServerError is a text of the provider's answer to a 500 that the message must carry.
	ServerError string
	// WrongKey is a text of the provider's answer to a wrong key that the message must carry.
	WrongKey string
	// DownStatus is the status of a provider that is down (503; Anthropic answers 529).
	DownStatus int
	// Preamble is the number of stream events before the first piece of text (OpenAI's role-only chunk,
	// Anthropic's message_start, content_block_start and ping; none for Gemini).
	Preamble int
}

// Request is the question the suite asks; Answer is what the fakes answer to it.
var Request = rag.GenerateRequest{
	Question: "How long is the main runway?",
	Language: "en",
	History: []rag.Turn{
		{Role: rag.RoleUser, Content: "What about terminals?"},
		{Role: rag.RoleAssistant, Content: "Terminal 2 opened in 2018 [1]."},
	},
	Passages: []rag.Passage{
		{N: 1, Title: "Runways", PageStart: 2, Text: "The main runway is 3,200 metres long. It was resurfaced in 2019."},
		{N: 2, Title: "Terminals", Text: "Terminal 2 opened in 2018."},
	},
}

// Answer is the fakes' answer to Request.
const Answer = "According to the documents, The main runway is 3,200 metres long [1]."

type bundle struct {
	fake  fakeapi.Fake
	gen   rag.Generator
	waits *fakeapi.Waits
}

func (k Kit) setup(t *testing.T, c Config) *bundle {
	t.Helper()
	b := &bundle{waits: &fakeapi.Waits{}}
	b.fake, b.gen = fakeapi.Start(t, k.NewFake, k.Key, func(url string) (rag.Generator, error) {
		c.APIKey, c.BaseURL = cmp.Or(c.APIKey, k.Key), url
		c.Timeout = cmp.Or(c.Timeout, 5*time.Second)
		c.Retry.Sleep = b.waits.Sleep
		return k.New(c)
	})
	return b
}

// stream asks Request with a callback and returns the pieces it received.
func (b *bundle) stream() (*rag.Generation, []string, error) {
	var deltas []string
	gen, err := b.gen.Generate(context.Background(), Request, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	return gen, deltas, err
}

func (b *bundle) generate() (*rag.Generation, error) {
	return b.gen.Generate(context.Background(), Request, nil)
}

// Run runs the suite as subtests of t.
func Run(t *testing.T, k Kit) {
	t.Run("Generate", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		gen, err := b.generate()
		if err != nil {
			t.Fatal(err)
		}
		if gen.Text != Answer || !strings.HasPrefix(gen.Model, k.Provider+"/") || b.gen.Name() != gen.Model {
			t.Fatalf("generation %+v", gen)
		}
		if gen.InputTokens == 0 || gen.OutputTokens == 0 {
			t.Errorf("usage %+v", gen)
		}
		if b.fake.Calls(fakeapi.EndpointGenerate) != 1 || b.fake.Calls(fakeapi.EndpointStream) != 0 {
			t.Error("streamed without a callback")
		}
		if v := b.fake.Violations(); len(v) > 0 {
			t.Errorf("violations %v", v)
		}
	})
	t.Run("Stream", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		gen, deltas, err := b.stream()
		if err != nil {
			t.Fatal(err)
		}
		if len(deltas) < 3 || strings.Join(deltas, "") != Answer || gen.Text != Answer {
			t.Fatalf("deltas %q, text %q", deltas, gen.Text)
		}
		if b.fake.Calls(fakeapi.EndpointStream) != 1 {
			t.Error("not streamed")
		}
		if v := b.fake.Violations(); len(v) > 0 {
			t.Errorf("violations %v", v)
		}
	})
	t.Run("EmptyAnswer", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.SetAnswer(func(string) string { return "" })
		_, err := b.generate()
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "empty") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("Complete", func(t *testing.T) {
		t.Parallel()
		k.complete(t)
	})
	t.Run("CompleteJSON", func(t *testing.T) {
		t.Parallel()
		k.completeJSON(t)
	})
	t.Run("Faults", func(t *testing.T) {
		t.Parallel()
		k.faults(t)
	})
}

// Schema is the structured answer the suite asks for: names and their count.
var Schema = rag.JSONSchema{Name: "names", Schema: map[string]any{
	"type": "object", "additionalProperties": false, "required": []any{"names", "count"},
	"properties": map[string]any{
		"names": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"Alice", "Bob"}}},
		"count": map[string]any{"type": "integer"},
	},
}}

// complete checks a plain completion (rag.Completer, used for question rewrites, expansions and graph
// answers): the user message reaches the fake, the model's text comes back whole, an empty one is an error.
func (k Kit) complete(t *testing.T) {
	b := k.setup(t, Config{})
	c, ok := b.gen.(rag.Completer)
	if !ok {
		t.Fatalf("%T completes no plain prompt", b.gen)
	}
	got := make(chan string, 1)
	b.fake.SetAnswer(func(prompt string) string {
		got <- prompt
		return "the runway question, reworded"
	})
	out, err := c.Complete(context.Background(), "Reword the question.", "How long is the runway?")
	if err != nil {
		t.Fatal(err)
	}
	if out != "the runway question, reworded" {
		t.Errorf("answer %q", out)
	}
	if p := <-got; !strings.Contains(p, "How long is the runway?") {
		t.Errorf("the fake saw %q", p)
	}
	if v := b.fake.Violations(); len(v) > 0 || b.fake.Calls(fakeapi.EndpointGenerate) != 1 {
		t.Errorf("violations %v, %d calls", v, b.fake.Calls(fakeapi.EndpointGenerate))
	}
	b.fake.SetAnswer(func(string) string { return "" })
	if _, err := c.Complete(context.Background(), "Reword the question.", "How long is the runway?"); rag.ErrorCode(err) != rag.CodeLLMFailed {
		t.Errorf("empty answer: %v", err)
	}
}

// completeJSON checks structured output: the schema reaches the fake in the provider's field, the user
// message with it, and the JSON the model writes comes back as written.
func (k Kit) completeJSON(t *testing.T) {
	b := k.setup(t, Config{})
	c, ok := b.gen.(rag.JSONCompleter)
	if !ok {
		t.Fatalf("%T has no structured output", b.gen)
	}
	type seen struct {
		prompt string
		schema map[string]any
	}
	got := make(chan seen, 1)
	b.fake.SetStructured(func(prompt string, schema map[string]any) string {
		got <- seen{prompt, schema}
		return `{"names":["Alice","Bob"],"count":2}`
	})
	out, err := c.CompleteJSON(context.Background(), "List the names.", "Alice met Bob.", Schema)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"names":["Alice","Bob"],"count":2}` {
		t.Errorf("answer %s", out)
	}
	s := <-got
	if !strings.Contains(s.prompt, "Alice met Bob.") || s.schema["type"] != "object" || s.schema["properties"] == nil {
		t.Errorf("the fake saw %+v", s)
	}
	if v := b.fake.Violations(); len(v) > 0 || b.fake.StructuredCalls() != 1 {
		t.Errorf("violations %v, %d structured calls", v, b.fake.StructuredCalls())
	}

	b.fake.SetStructured(nil) // the fake's default: the smallest instance of the schema
	if out, err = c.CompleteJSON(context.Background(), "List the names.", "Nobody.", Schema); err != nil || string(out) != `{"count":0,"names":[]}` {
		t.Errorf("default answer %s, %v", out, err)
	}
	b.fake.SetStructured(func(string, map[string]any) string { return "" })
	if _, err := c.CompleteJSON(context.Background(), "List the names.", "Nobody.", Schema); rag.ErrorCode(err) != rag.CodeLLMFailed {
		t.Errorf("empty structured answer: %v", err)
	}
}

func (k Kit) faults(t *testing.T) {
	t.Run("RateLimitedThenOK", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 429, RetryAfter: 2 * time.Second})
		gen, deltas, err := b.stream()
		if err != nil || gen.Text != Answer || strings.Join(deltas, "") != Answer {
			t.Fatalf("err %v, deltas %q", err, deltas)
		}
		if w := b.waits.All(); len(w) != 1 || w[0] < 2*time.Second || b.fake.Calls(fakeapi.EndpointStream) != 2 {
			t.Fatalf("waits %v, calls %d", w, b.fake.Calls(fakeapi.EndpointStream))
		}
	})
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("ThreeServerErrors/stream=%v", stream), func(t *testing.T) {
			t.Parallel()
			b := k.setup(t, Config{})
			b.fake.FailNext(3, fakeapi.Fault{Status: 500})
			endpoint := fakeapi.EndpointGenerate
			var err error
			if stream {
				_, _, err = b.stream()
				endpoint = fakeapi.EndpointStream
			} else {
				_, err = b.generate()
			}
			if rag.ErrorCode(err) != rag.CodeLLMFailed {
				t.Fatalf("err %v", err)
			}
			msg := rag.ErrorMessage(err)
			for _, want := range []string{k.Provider + " generation failed: HTTP 500", k.ServerError, "3 attempts"} {
				if !strings.Contains(msg, want) {
					t.Fatalf("message %q lacks %q", msg, want)
				}
			}
			if b.fake.Calls(endpoint) != 3 {
				t.Fatalf("%d calls", b.fake.Calls(endpoint))
			}
		})
	}
	t.Run("TwoServerErrorsThenOK", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(2, fakeapi.Fault{Status: 503})
		if gen, err := b.generate(); err != nil || gen.Text != Answer {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{Timeout: 100 * time.Millisecond})
		b.fake.FailNext(1, fakeapi.Fault{Delay: 5 * time.Second})
		_, _, err := b.stream()
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "timed out after 100ms") {
			t.Fatalf("err %v", err)
		}
		if b.fake.Calls(fakeapi.EndpointStream) != 1 {
			t.Fatal("a timeout is not retried")
		}
	})
	t.Run("MalformedJSON", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(1, fakeapi.Fault{Malformed: true})
		_, err := b.generate()
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "unusable response") {
			t.Fatalf("err %v", err)
		}
		if b.fake.Calls(fakeapi.EndpointGenerate) != 1 {
			t.Fatal("malformed JSON must not be retried")
		}
	})
	t.Run("MalformedStreamEvent", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(1, fakeapi.Fault{Malformed: true})
		_, deltas, err := b.stream()
		if rag.ErrorCode(err) != rag.CodeLLMFailed || len(deltas) == 0 {
			t.Fatalf("err %v, deltas %q", err, deltas)
		}
	})
	t.Run("StreamCut", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(1, fakeapi.Fault{CutAfter: k.Preamble + 2})
		_, deltas, err := b.stream()
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), "connection error") {
			t.Fatalf("err %v", err)
		}
		// Two pieces reached the caller; a retry would repeat them, so there is none.
		if len(deltas) != 2 || b.fake.Calls(fakeapi.EndpointStream) != 1 {
			t.Fatalf("deltas %q, calls %d", deltas, b.fake.Calls(fakeapi.EndpointStream))
		}
	})
	if k.Preamble > 0 {
		t.Run("StreamCutBeforeAnswerIsRetried", func(t *testing.T) {
			t.Parallel()
			b := k.setup(t, Config{})
			b.fake.FailNext(1, fakeapi.Fault{CutAfter: k.Preamble})
			_, deltas, err := b.stream()
			if err != nil || strings.Join(deltas, "") != Answer || b.fake.Calls(fakeapi.EndpointStream) != 2 {
				t.Fatalf("err %v, deltas %q", err, deltas)
			}
		})
	}
	t.Run("BodyCutIsRetried", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(1, fakeapi.Fault{CutAfter: 1})
		gen, err := b.generate()
		if err != nil || gen.Text != Answer || b.fake.Calls(fakeapi.EndpointGenerate) != 2 {
			t.Fatalf("err %v, calls %d", err, b.fake.Calls(fakeapi.EndpointGenerate))
		}
	})
	t.Run("CallbackErrorStops", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		gone := errors.New("client went away")
		n := 0
		_, err := b.gen.Generate(context.Background(), Request, func(string) error {
			n++
			return gone
		})
		if err != gone || n != 1 || b.fake.Calls(fakeapi.EndpointStream) != 1 {
			t.Fatalf("err %v, deltas %d", err, n)
		}
	})
	t.Run("KeyNeverInError", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 401, Message: "key " + k.Key + " was revoked"})
		_, _, err := b.stream()
		if err == nil {
			t.Fatal("no error")
		}
		for _, s := range []string{err.Error(), rag.ErrorMessage(err), fmt.Sprintf("%+v", err)} {
			if strings.Contains(s, k.Key) {
				t.Fatalf("key leaked: %s", s)
			}
		}
		if msg := rag.ErrorMessage(err); !strings.Contains(msg, "[redacted] was revoked") {
			t.Fatalf("message %q", msg)
		}
	})
	t.Run("WrongKey", func(t *testing.T) {
		t.Parallel()
		const wrong = "wrong-key-0000000000"
		b := k.setup(t, Config{APIKey: wrong})
		_, err := b.generate()
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), k.WrongKey) {
			t.Fatalf("err %v", err)
		}
		if strings.Contains(err.Error(), wrong) {
			t.Fatal("key leaked")
		}
		if b.fake.Calls(fakeapi.EndpointGenerate) != 1 {
			t.Fatal("a rejected key must not be retried")
		}
	})
	t.Run("Down", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.SetDown(true)
		_, _, err := b.stream()
		if rag.ErrorCode(err) != rag.CodeLLMFailed || !strings.Contains(rag.ErrorMessage(err), fmt.Sprintf("HTTP %d", k.DownStatus)) {
			t.Fatalf("err %v", err)
		}
		b.fake.SetDown(false)
		if _, _, err := b.stream(); err != nil {
			t.Fatalf("after coming back: %v", err)
		}
	})
}
