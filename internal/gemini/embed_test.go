package gemini_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/embed/embedtest"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/gemini"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

const embedKey = "AIzaFakeKey-0123456789abcdef"

var embedKit = embedtest.Kit{
	Provider: "gemini",
	NewFake:  func(key string) fakeapi.Fake { return fakeapi.NewGemini(key) },
	Key:      embedKey,
	New: func(c embedtest.Config) (rag.Embedder, error) {
		return gemini.NewEmbedder(context.Background(), gemini.EmbedderConfig{Config: c.Provider(), BatchSize: c.BatchSize})
	},
	Dim: gemini.DefaultDim, MaxBatch: gemini.MaxBatch,
	ServerError: "An internal error has occurred",
	WrongKey:    "API key not valid",
}

func TestEmbedder(t *testing.T) {
	t.Parallel()
	embedtest.Run(t, embedKit)
}

func setupEmbedder(t *testing.T, cfg gemini.EmbedderConfig) (*fakeapi.Gemini, *gemini.Embedder) {
	t.Helper()
	return fakeapi.Start(t, fakeapi.NewGemini, embedKey, func(url string) (*gemini.Embedder, error) {
		cfg.APIKey, cfg.BaseURL = embedKey, url
		return gemini.NewEmbedder(context.Background(), cfg)
	})
}

type batchBody struct {
	Requests []struct {
		Model                string `json:"model"`
		TaskType             string `json:"taskType"`
		OutputDimensionality int    `json:"outputDimensionality"`
		Content              struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
	} `json:"requests"`
}

func lastBatch(t *testing.T, fake *fakeapi.Gemini) (fakeapi.Request, batchBody) {
	t.Helper()
	req, ok := fake.LastRequest(fakeapi.EndpointEmbed)
	if !ok {
		t.Fatal("no request")
	}
	var body batchBody
	if err := req.JSON(&body); err != nil {
		t.Fatal(err)
	}
	return req, body
}

// TestEmbedDocumentsRequest checks batchEmbedContents as the Gemini API wants it.
func TestEmbedDocumentsRequest(t *testing.T) {
	t.Parallel()
	fake, e := setupEmbedder(t, gemini.EmbedderConfig{})
	in := []string{"The runway is 3 km long.", "활주로 길이는 3킬로미터이다."}
	if _, err := e.EmbedDocuments(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if got := e.Space(); got != (rag.Space{Provider: "gemini", Model: "gemini-embedding-001", Dim: 768}) {
		t.Fatalf("space %+v", got)
	}
	req, body := lastBatch(t, fake)
	if req.Path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" {
		t.Errorf("path %s", req.Path)
	}
	if req.Header.Get("x-goog-api-key") != embedKey {
		t.Errorf("x-goog-api-key not sent")
	}
	for i, r := range body.Requests {
		if r.TaskType != gemini.TaskDocument || r.OutputDimensionality != 768 || r.Model != "models/gemini-embedding-001" || r.Content.Parts[0].Text != in[i] {
			t.Errorf("request %d: %+v", i, r)
		}
	}
	if v := fake.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
}

func TestEmbedQueryRequest(t *testing.T) {
	t.Parallel()
	fake, e := setupEmbedder(t, gemini.EmbedderConfig{Config: provider.Config{Model: "models/text-embedding-004"}})
	v, err := e.EmbedQuery(context.Background(), "how long is the runway?")
	if err != nil {
		t.Fatal(err)
	}
	if e.Space().Model != "text-embedding-004" || len(v) != 768 {
		t.Fatalf("space %v, dim %d", e.Space(), len(v))
	}
	_, body := lastBatch(t, fake)
	if len(body.Requests) != 1 || body.Requests[0].TaskType != gemini.TaskQuery {
		t.Fatalf("body %+v", body)
	}
}

func TestOutputDimensionalityTooLarge(t *testing.T) {
	t.Parallel()
	_, e := setupEmbedder(t, gemini.EmbedderConfig{Config: provider.Config{Model: "text-embedding-004"}, Dim: 1024})
	_, err := e.EmbedQuery(context.Background(), "q")
	if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "output_dimensionality") {
		t.Fatalf("err %v", err)
	}
}

func TestNewEmbedderRequiresKey(t *testing.T) {
	t.Parallel()
	if _, err := gemini.NewEmbedder(context.Background(), gemini.EmbedderConfig{}); err == nil {
		t.Fatal("no error without a key")
	}
}
