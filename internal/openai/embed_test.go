package openai_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/embed/embedtest"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/openai"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

const embedKey = "sk-proj-FakeKey0123456789abcdef"

var embedKit = embedtest.Kit{
	Provider: "openai",
	NewFake:  func(key string) fakeapi.Fake { return fakeapi.NewOpenAI(key) },
	Key:      embedKey,
	New: func(c embedtest.Config) (rag.Embedder, error) {
		return openai.NewEmbedder(openai.EmbedderConfig{Config: c.Provider(), BatchSize: c.BatchSize})
	},
	// The fake is not api.openai.com: a local server's batch size applies.
	Dim: 1536, MaxBatch: openai.DefaultLocalBatch,
	ServerError: "server_error: The server had an error",
	WrongKey:    "Incorrect API key provided",
}

func TestEmbedder(t *testing.T) {
	t.Parallel()
	embedtest.Run(t, embedKit)
}

func setupEmbedder(t *testing.T, cfg openai.EmbedderConfig) (*fakeapi.OpenAI, *openai.Embedder) {
	t.Helper()
	return fakeapi.Start(t, fakeapi.NewOpenAI, embedKey, func(url string) (*openai.Embedder, error) {
		cfg.APIKey, cfg.BaseURL = embedKey, url
		return openai.NewEmbedder(cfg)
	})
}

type embBody struct {
	Input          []string `json:"input"`
	Model          string   `json:"model"`
	Dimensions     *int     `json:"dimensions"`
	EncodingFormat string   `json:"encoding_format"`
}

func lastEmbedBody(t *testing.T, f *fakeapi.OpenAI) (fakeapi.Request, embBody) {
	t.Helper()
	req, ok := f.LastRequest(fakeapi.EndpointEmbed)
	if !ok {
		t.Fatal("no embeddings request")
	}
	var b embBody
	if err := req.JSON(&b); err != nil {
		t.Fatal(err)
	}
	return req, b
}

// TestEmbedDocumentsRequest checks /v1/embeddings as OpenAI wants it: "dimensions" for text-embedding-3.
func TestEmbedDocumentsRequest(t *testing.T) {
	t.Parallel()
	fake, e := setupEmbedder(t, openai.EmbedderConfig{Dim: 256})
	if _, err := e.EmbedDocuments(context.Background(), []string{"The runway is 3 km long.", "활주로 길이는 3킬로미터이다."}); err != nil {
		t.Fatal(err)
	}
	if sp := e.Space(); sp != (rag.Space{Provider: "openai", Model: "text-embedding-3-small", Dim: 256}) {
		t.Fatalf("space %v", sp)
	}
	req, body := lastEmbedBody(t, fake)
	if req.Path != "/v1/embeddings" || req.Header.Get("Authorization") != "Bearer "+embedKey {
		t.Errorf("path %s, auth %q", req.Path, req.Header.Get("Authorization"))
	}
	if body.Model != "text-embedding-3-small" || body.Dimensions == nil || *body.Dimensions != 256 || body.EncodingFormat != "float" || len(body.Input) != 2 {
		t.Errorf("body %+v", body)
	}
	if v := fake.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
}

// TestLocalServerModel is Ollama's nomic-embed-text: fixed size, no "dimensions" sent, size from KnownDims.
func TestLocalServerModel(t *testing.T) {
	t.Parallel()
	fake, e := setupEmbedder(t, openai.EmbedderConfig{Config: provider.Config{Model: "nomic-embed-text:latest"}})
	if e.Space().Dim != 768 {
		t.Fatalf("space %v", e.Space())
	}
	// The fake knows the model without its Ollama tag, as a vLLM/TEI deployment would name it.
	e2, err := openai.NewEmbedder(openai.EmbedderConfig{Config: provider.Config{APIKey: embedKey, BaseURL: fake.BaseURL(), Model: "nomic-embed-text"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e2.EmbedQuery(context.Background(), "q"); err != nil {
		t.Fatal(err)
	}
	_, body := lastEmbedBody(t, fake)
	if body.Dimensions != nil {
		t.Fatalf("dimensions sent to a fixed-size model: %d", *body.Dimensions)
	}
}

// TestModelIgnoresDimension: a server that returns its own size instead of the configured one must fail,
// so that a vector of the wrong size never reaches a store.
func TestModelIgnoresDimension(t *testing.T) {
	t.Parallel()
	fake, e := setupEmbedder(t, openai.EmbedderConfig{Config: provider.Config{Model: "mxbai-embed-large"}, Dim: 768})
	_, err := e.EmbedDocuments(context.Background(), embedtest.Texts(3))
	if rag.ErrorCode(err) != rag.CodeEmbeddingFailed {
		t.Fatalf("err %v", err)
	}
	if msg := rag.ErrorMessage(err); !strings.Contains(msg, "1024-dimensional") || !strings.Contains(msg, "768") {
		t.Fatalf("message %q", msg)
	}
	if fake.Calls(fakeapi.EndpointEmbed) != 1 {
		t.Fatal("a wrong dimension must not be retried")
	}
}

func TestUnknownModelNeedsDim(t *testing.T) {
	t.Parallel()
	if _, err := openai.NewEmbedder(openai.EmbedderConfig{Config: provider.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "my-model"}}); err == nil {
		t.Fatal("no error for a model of unknown size")
	}
	if _, err := openai.NewEmbedder(openai.EmbedderConfig{Config: provider.Config{Model: "text-embedding-3-small"}}); err == nil {
		t.Fatal("no error without a key for api.openai.com")
	}
}

// TestBatchSize checks a configured batch size at its boundary (the suite checks the default).
func TestBatchSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ size, n, requests int }{{100, 100, 1}, {100, 101, 2}} {
		t.Run(fmt.Sprintf("%d/%d", tc.size, tc.n), func(t *testing.T) {
			t.Parallel()
			fake, e := setupEmbedder(t, openai.EmbedderConfig{BatchSize: tc.size})
			in := embedtest.Texts(tc.n)
			vecs, err := e.EmbedDocuments(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if got := fake.Calls(fakeapi.EndpointEmbed); got != tc.requests {
				t.Fatalf("%d requests, want %d", got, tc.requests)
			}
			last := fakeapi.Vector(in[tc.n-1], 1536)
			if vecs[tc.n-1][5] != last[5] {
				t.Fatal("order lost")
			}
		})
	}
}
