package rag

import (
	"context"
	"fmt"
)

// Space identifies an embedding space: vectors are only comparable within one space. Every stored vector
// records its space, and a query only searches vectors of the configured space.
type Space struct {
	Provider string `json:"provider"` // "hash", "gemini", "openai", …
	Model    string `json:"model"`    // e.g. "v1", "text-embedding-004"
	Dim      int    `json:"dim"`
}

// ID is the space's stable string form, "<provider>/<model>/<dim>".
func (s Space) ID() string { return fmt.Sprintf("%s/%s/%d", s.Provider, s.Model, s.Dim) }

// String implements fmt.Stringer.
func (s Space) String() string { return s.ID() }

// Embedder turns text into vectors of one space. Vectors are L2-normalised so that a dot product is the
// cosine similarity. Implementations must be safe for concurrent use.
type Embedder interface {
	// Space reports the embedding space of every vector this embedder returns.
	Space() Space
	// EmbedDocuments embeds passages for indexing, one vector per text, in order. Callers may pass any
	// number of texts; the embedder batches as its provider requires. Errors carry CodeEmbeddingFailed.
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery embeds a search query (providers distinguish query and document tasks).
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}
