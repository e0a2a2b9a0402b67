package openai

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/ragd/ragd/internal/embed"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

// Defaults.
const (
	// DefaultEmbedModel is text-embedding-3-small.
	DefaultEmbedModel = "text-embedding-3-small"
	// DefaultBatch is the texts per request to OpenAI (its limit is 2048 inputs and 300k tokens).
	DefaultBatch = 100
	// DefaultLocalBatch is the texts per request to other servers (TEI accepts 32 by default).
	DefaultLocalBatch = 32
	// DefaultEmbedTimeout bounds one request.
	DefaultEmbedTimeout = 30 * time.Second
)

// KnownDims are the native sizes of common embedding models, used when EmbedderConfig.Dim is zero.
var KnownDims = map[string]int{
	"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536,
	"nomic-embed-text": 768, "mxbai-embed-large": 1024, "bge-m3": 1024, "all-minilm": 384,
	"snowflake-arctic-embed": 1024, "BAAI/bge-m3": 1024, "BAAI/bge-small-en-v1.5": 384,
	"BAAI/bge-base-en-v1.5": 768, "intfloat/multilingual-e5-large": 1024,
	"intfloat/multilingual-e5-base": 768, "intfloat/multilingual-e5-small": 384,
	"sentence-transformers/all-MiniLM-L6-v2": 384, "nomic-ai/nomic-embed-text-v1.5": 768,
}

// EmbedderConfig configures an Embedder. APIKey (OPENAI_API_KEY, sent as a bearer token) is required for OpenAI
// itself, optional for a local server; BaseURL is the API root including /v1 (OPENAI_BASE_URL; default
// DefaultBaseURL), e.g. http://localhost:11434/v1 for Ollama or http://localhost:8000/v1 for vLLM; Model
// defaults to DefaultEmbedModel (an Ollama tag such as "nomic-embed-text:latest" is looked up in KnownDims
// without its tag), Timeout (one request) to DefaultEmbedTimeout.
type EmbedderConfig struct {
	provider.Config
	// Dim is the vector size. Zero takes the model's size from KnownDims (an unknown model needs it set).
	// For text-embedding-3 models it is sent as "dimensions"; for other models it must equal the model's
	// own size, which is checked on every response.
	Dim int
	// BatchSize is the texts per request (default DefaultBatch for OpenAI, DefaultLocalBatch otherwise).
	BatchSize int
}

// Embedder is a rag.Embedder backed by an OpenAI-compatible embeddings endpoint.
type Embedder struct {
	client     openai.Client
	caller     *provider.Caller
	space      rag.Space
	dimensions bool
	batch      int
}

var _ rag.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder for cfg. It makes no request.
func NewEmbedder(cfg EmbedderConfig) (*Embedder, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	official := isOpenAI(cfg.BaseURL)
	if official && cfg.APIKey == "" {
		return nil, errors.New("openai embedder: an API key is required for api.openai.com (OPENAI_API_KEY)")
	}
	cfg.Config = cfg.Config.WithDefaults(DefaultEmbedModel, DefaultEmbedTimeout)
	if cfg.Dim == 0 {
		base, _, _ := strings.Cut(cfg.Model, ":")
		cfg.Dim = KnownDims[base]
	}
	if cfg.Dim <= 0 {
		return nil, fmt.Errorf("openai embedder: the vector size of model %q is not known: set the dimension", cfg.Model)
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultLocalBatch
		if official {
			cfg.BatchSize = DefaultBatch
		}
	}
	caller := cfg.Caller("openai", rag.CodeEmbeddingFailed, Explain)
	client := newClient(cfg.BaseURL, cfg.APIKey, caller.HTTPClient(cfg.HTTPClient))
	return &Embedder{client: client, caller: caller, batch: cfg.BatchSize,
		dimensions: strings.HasPrefix(cfg.Model, "text-embedding-3"),
		space:      rag.Space{Provider: "openai", Model: cfg.Model, Dim: cfg.Dim}}, nil
}

// Space is {openai, model, dim}.
func (e *Embedder) Space() rag.Space { return e.space }

// Batching reports the texts per request and the requests at once (embed.Batcher).
func (e *Embedder) Batching() (size, parallel int) {
	return e.batch, max(e.caller.Policy().MaxConcurrency, 1)
}

// EmbedDocuments embeds passages in batches.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if err := checkTexts(texts); err != nil {
		return nil, err
	}
	parallel := e.caller.Policy().MaxConcurrency
	return embed.Batches(ctx, texts, e.batch, parallel, e.call)
}

// EmbedQuery embeds a question (the endpoint has no query/document distinction).
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := checkTexts([]string{text}); err != nil {
		return nil, err
	}
	vecs, err := e.call(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func checkTexts(texts []string) error {
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return rag.Errorf(rag.CodeEmbeddingFailed, "openai embedding failed: text %d is empty", i)
		}
	}
	return nil
}

func (e *Embedder) call(ctx context.Context, texts []string) ([][]float32, error) {
	params := openai.EmbeddingNewParams{
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		Model:          openai.EmbeddingModel(e.space.Model),
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if e.dimensions {
		params.Dimensions = openai.Int(int64(e.space.Dim))
	}
	var vecs [][]float32
	err := e.caller.Do(ctx, func(ctx context.Context) error {
		resp, err := e.client.Embeddings.New(ctx, params)
		if err != nil {
			return err
		}
		vecs = make([][]float32, len(texts))
		for _, d := range resp.Data {
			if d.Index < 0 || int(d.Index) >= len(texts) || vecs[d.Index] != nil {
				return provider.BadResponse("embedding index %d is out of range or repeated", d.Index)
			}
			v := make([]float32, len(d.Embedding))
			for j, x := range d.Embedding {
				v[j] = float32(x)
			}
			vecs[d.Index] = v
		}
		for i, v := range vecs {
			if v == nil {
				return provider.BadResponse("got %d vectors for %d texts (text %d has none)", len(resp.Data), len(texts), i)
			}
		}
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
