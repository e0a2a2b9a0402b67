package providers

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/openai"
	"github.com/ragd/ragd/internal/rag"
)

// TestEmbeddingOutageDuringIngestion: the embedding API fails while ten documents are being ingested. The
// jobs that hit the outage are retried later; once the API is back every document is ready, and no chunk
// was sent to the API twice (what was embedded before a failure comes from the embedding cache).
func TestEmbeddingOutageDuringIngestion(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	cfg := f.config(t, "openai", "extractive")
	cfg.IngestWorkers = 2
	e := start(t, cfg)
	const outage = 15 // failed requests: five calls of three attempts each, more than any call retries
	f.openai.FailNext(2, fakeapi.Fault{})
	f.openai.FailNext(outage, fakeapi.Fault{Status: 503, Message: "The engine is currently overloaded"})

	docs := upload(t, e.url, tenFiles(t)...)
	docs = waitReady(t, e.url, docs, 3*time.Minute)
	multi := 0
	for _, d := range docs {
		if d.ChunkCount == 0 || d.ErrorCode != "" {
			t.Fatalf("document %+v", d)
		}
		if d.ChunkCount > openai.DefaultLocalBatch {
			multi++
		}
	}
	// Documents that take several requests can meet the outage part-way: what their earlier requests
	// embedded must come from the cache on the retry (checked by embeddedOnce below).
	if multi < 2 {
		t.Fatalf("only %d documents need more than one embedding request: the test cannot show partial progress kept", multi)
	}
	if got := f.openai.Stats().Faulted; got != outage {
		t.Fatalf("%d requests met the outage, want %d", got, outage)
	}
	texts := chunkTexts(t, e.app.Store)
	embeddedOnce(t, f.openai.Server, texts)
	st := f.openai.Stats()
	t.Logf("%d documents, %d chunks: %d embedding requests (%d refused by the outage), %d texts embedded",
		len(docs), len(texts), st.Requests, st.Faulted, st.EmbeddedTexts)
	mustContain(t, "log", e.logs.String(), "attempt failed", "overloaded")
	mustNotContain(t, "log", e.logs.String(), openaiKey)
}

// TestGeneratorFaults injects each kind of failure into each generator's API and checks what ragd's chat
// API answers: a 429 with Retry-After is waited out and the answer arrives; three 500s, a timeout, a
// malformed body and a cut connection are 502 llm_failed with the provider's reason and never the key; a
// stream cut in the middle ends the SSE stream with an error event after the text that arrived.
func TestGeneratorFaults(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"openai", "gemini", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			f := newFakes(t)
			cfg := f.config(t, "hash", provider)
			cfg.ModelTimeout = 2 * time.Second
			e := start(t, cfg)
			fake := f.server(provider)
			fake.SetAnswer(quoteAnswer)
			waitReady(t, e.url, upload(t, e.url, fixture(t, "html/en_wikipedia_mozilla.html")), time.Minute)
			key := map[string]string{"openai": openaiKey, "gemini": geminiKey, "anthropic": anthropicKey}[provider]
			// Anthropic's stream opens with three events without text (message_start, content_block_start,
			// ping): a cut after them is a failed call that is retried, not a stream cut in the middle.
			cut := map[string]int{"openai": 3, "gemini": 2, "anthropic": 5}[provider]
			generations := func() int { return fake.Calls(fakeapi.EndpointGenerate) + fake.Calls(fakeapi.EndpointStream) }

			// failed asks a question as JSON and checks the 502.
			failed := func(t *testing.T, reason string) {
				t.Helper()
				code, body := chat(t, e.url, mozillaQuestion)
				if code != http.StatusBadGateway {
					t.Fatalf("HTTP %d %s, want 502", code, body)
				}
				eb := decode[errorBody](t, body)
				if eb.Error != rag.CodeLLMFailed {
					t.Fatalf("error %s, want llm_failed: %s", eb.Error, body)
				}
				mustContain(t, "error message", eb.Message, provider, reason)
				mustNotContain(t, "error body", string(body), key)
			}

			t.Run("RateLimitedThenOK", func(t *testing.T) {
				before := generations()
				fake.FailNext(1, fakeapi.Fault{Status: 429, RetryAfter: time.Second})
				code, body := chat(t, e.url, mozillaQuestion)
				if code != http.StatusOK || !strings.Contains(decode[chatResponse](t, body).Answer, "[1]") {
					t.Fatalf("HTTP %d %s", code, body)
				}
				if n := generations() - before; n != 2 {
					t.Fatalf("%d requests, want the refused one and its retry", n)
				}
			})
			t.Run("ThreeServerErrors", func(t *testing.T) {
				before := generations()
				fake.FailNext(3, fakeapi.Fault{Status: 500, Message: "shard 7 exploded"})
				failed(t, "shard 7 exploded")
				if n := generations() - before; n != 3 {
					t.Fatalf("%d requests, want 3 attempts", n)
				}
			})
			t.Run("TwoServerErrorsThenOK", func(t *testing.T) {
				fake.FailNext(2, fakeapi.Fault{Status: 500})
				if code, body := chat(t, e.url, mozillaQuestion); code != http.StatusOK {
					t.Fatalf("HTTP %d %s", code, body)
				}
			})
			t.Run("Timeout", func(t *testing.T) {
				fake.FailNext(1, fakeapi.Fault{Delay: 4 * time.Second})
				failed(t, "timed out")
			})
			t.Run("MalformedJSON", func(t *testing.T) {
				fake.FailNext(1, fakeapi.Fault{Malformed: true})
				code, body := chat(t, e.url, mozillaQuestion)
				if code != http.StatusBadGateway || decode[errorBody](t, body).Error != rag.CodeLLMFailed {
					t.Fatalf("HTTP %d %s", code, body)
				}
				mustNotContain(t, "error body", string(body), key)
			})
			t.Run("StreamCut", func(t *testing.T) {
				fake.FailNext(1, fakeapi.Fault{CutAfter: cut})
				code, events := chatStream(t, e.url, mozillaQuestion)
				if code != http.StatusOK || names(events) != "sources,delta,error" {
					t.Fatalf("HTTP %d, events %s", code, names(events))
				}
				eb := decode[errorBody](t, events[len(events)-1].data)
				if eb.Error != rag.CodeLLMFailed || eb.Message == "" || strings.Contains(eb.Message, key) {
					t.Fatalf("error event %+v", eb)
				}
				if d := deltas(t, events); d == "" {
					t.Fatal("no text arrived before the cut")
				}
			})
			t.Run("StreamCutJSON", func(t *testing.T) {
				fake.FailNext(1, fakeapi.Fault{CutAfter: cut})
				code, body := chat(t, e.url, mozillaQuestion)
				if code != http.StatusBadGateway || decode[errorBody](t, body).Error != rag.CodeLLMFailed {
					t.Fatalf("HTTP %d %s", code, body)
				}
			})
			t.Run("Recovered", func(t *testing.T) {
				code, events := chatStream(t, e.url, mozillaQuestion)
				if code != http.StatusOK || names(events) != "sources,delta,done" {
					t.Fatalf("HTTP %d, events %s", code, names(events))
				}
			})
			mustNotContain(t, "log", e.logs.String(), key)
			mustContain(t, "log", e.logs.String(), "llm_failed")
		})
	}
}

// TestQueryEmbeddingFaults: a 429 on the question's embedding is waited out; an embedding API that stays
// down makes search and chat 502 embedding_failed with the provider's reason.
func TestQueryEmbeddingFaults(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"openai", "gemini"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			f := newFakes(t)
			e := start(t, f.config(t, provider, "extractive"))
			fake := f.server(provider)
			waitReady(t, e.url, upload(t, e.url, fixture(t, "html/en_wikipedia_mozilla.html")), time.Minute)

			fake.FailNext(1, fakeapi.Fault{Status: 429, RetryAfter: time.Second})
			if res := search(t, e.url, "Firefox release history", 3); len(res.Hits) == 0 {
				t.Fatal("no hits after a 429")
			}
			fake.FailNext(3, fakeapi.Fault{Status: 503, Message: "backend pool drained"})
			resp, body := do(t, "POST", e.url+"/api/search", map[string]any{"query": "Thunderbird e-mail client"}, nil)
			eb := decode[errorBody](t, body)
			if resp.StatusCode != http.StatusBadGateway || eb.Error != rag.CodeEmbeddingFailed {
				t.Fatalf("HTTP %d %s", resp.StatusCode, body)
			}
			mustContain(t, "error message", eb.Message, "backend pool drained")
			fake.FailNext(3, fakeapi.Fault{Status: 503})
			if code, body := chat(t, e.url, "Who founded the Mozilla Foundation?"); code != http.StatusBadGateway ||
				decode[errorBody](t, body).Error != rag.CodeEmbeddingFailed {
				t.Fatalf("chat: HTTP %d %s", code, body)
			}
		})
	}
}
