package gemini

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/ragd/ragd/internal/embed"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

// Defaults.
const (
	// DefaultEmbedModel is gemini-embedding-001; text-embedding-004 works too (at most 768 dimensions).
	DefaultEmbedModel = "gemini-embedding-001"
	// DefaultDim is the output dimensionality asked for (gemini-embedding-001 recommends 768, 1536, 3072).
	DefaultDim = 768
	// MaxBatch is the most texts batchEmbedContents accepts in one request.
	MaxBatch = 100
	// DefaultEmbedTimeout bounds one request.
	DefaultEmbedTimeout = 30 * time.Second
)

// Task types of the Gemini embedding API.
const (
	TaskDocument = "RETRIEVAL_DOCUMENT"
	TaskQuery    = "RETRIEVAL_QUERY"
)

// EmbedderConfig configures an Embedder. Only APIKey is required (GEMINI_API_KEY or GOOGLE_API_KEY). BaseURL
// replaces https://generativelanguage.googleapis.com/ (RAGD_GEMINI_BASE_URL): a proxy or a fake; Model
// defaults to DefaultEmbedModel (a "models/" prefix is accepted), Timeout (one request) to DefaultEmbedTimeout.
type EmbedderConfig struct {
	provider.Config
	// Dim is the output dimensionality (default DefaultDim).
	Dim int
	// BatchSize is the texts per request (default and maximum MaxBatch).
	BatchSize int
}

// Embedder is a rag.Embedder backed by the Gemini API.
type Embedder struct {
	client *genai.Client
	caller *provider.Caller
	space  rag.Space
	model  string
	batch  int
}

var _ rag.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder for cfg. It makes no request.
func NewEmbedder(ctx context.Context, cfg EmbedderConfig) (*Embedder, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("gemini embedder: an API key is required (GEMINI_API_KEY or GOOGLE_API_KEY)")
	}
	cfg.Model = strings.TrimPrefix(cfg.Model, "models/")
	cfg.Config = cfg.Config.WithDefaults(DefaultEmbedModel, DefaultEmbedTimeout)
	model := cfg.Model
	if cfg.Dim == 0 {
		cfg.Dim = DefaultDim
	}
	if cfg.Dim < 0 {
		return nil, fmt.Errorf("gemini embedder: invalid dimension %d", cfg.Dim)
	}
	if cfg.BatchSize <= 0 || cfg.BatchSize > MaxBatch {
		cfg.BatchSize = MaxBatch
	}
	caller := cfg.Caller("gemini", rag.CodeEmbeddingFailed, Explain)
	client, err := newClient(ctx, cfg.APIKey, cfg.BaseURL, caller.HTTPClient(cfg.HTTPClient))
	if err != nil {
		return nil, fmt.Errorf("gemini embedder: %w", err)
	}
	return &Embedder{client: client, caller: caller, model: model, batch: cfg.BatchSize,
		space: rag.Space{Provider: "gemini", Model: model, Dim: cfg.Dim}}, nil
}

// Space is {gemini, model, dim}.
func (e *Embedder) Space() rag.Space { return e.space }

// Batching reports the texts per request and the requests at once (embed.Batcher).
func (e *Embedder) Batching() (size, parallel int) {
	return e.batch, max(e.caller.Policy().MaxConcurrency, 1)
}

// EmbedDocuments embeds passages with task type RETRIEVAL_DOCUMENT, in batches of at most MaxBatch.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if err := e.checkTexts(texts); err != nil {
		return nil, err
	}
	parallel := e.caller.Policy().MaxConcurrency
	return embed.Batches(ctx, texts, e.batch, parallel, func(ctx context.Context, batch []string) ([][]float32, error) {
		return e.call(ctx, batch, TaskDocument)
	})
}

// EmbedQuery embeds a question with task type RETRIEVAL_QUERY.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := e.checkTexts([]string{text}); err != nil {
		return nil, err
	}
	vecs, err := e.call(ctx, []string{text}, TaskQuery)
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (e *Embedder) checkTexts(texts []string) error {
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return rag.Errorf(rag.CodeEmbeddingFailed, "gemini embedding failed: text %d is empty", i)
		}
	}
	return nil
}

func (e *Embedder) call(ctx context.Context, texts []string, task string) ([][]float32, error) {
	contents := make([]*genai.Content, len(texts))
	for i, t := range texts {
		contents[i] = genai.NewContentFromText(t, genai.RoleUser)
	}
	dim := int32(e.space.Dim)
	var vecs [][]float32
	err := e.caller.Do(ctx, func(ctx context.Context) error {
		resp, err := e.client.Models.EmbedContent(ctx, e.model, contents,
			&genai.EmbedContentConfig{TaskType: task, OutputDimensionality: &dim})
		if err != nil {
			return err
		}
		vecs = make([][]float32, len(resp.Embeddings))
		for i, emb := range resp.Embeddings {
			if emb == nil {
				return provider.BadResponse("embedding %d is missing", i)
			}
			vecs[i] = emb.Values
		}
		// Gemini returns vectors shorter than the model's full size without normalising them.
		if err := embed.Check(e.space, len(texts), vecs); err != nil {
			return provider.BadResponse("%v", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return vecs, nil
}
