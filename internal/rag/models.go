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

// Role of a conversation turn.
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Turn is one message of the conversation history.
type Turn struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
}

// Passage is a numbered piece of context given to a generator; N is the citation number ([N]).
type Passage struct {
	N         int    `json:"n"`
	ChunkID   int64  `json:"chunk_id"`
	Title     string `json:"title"`
	Section   string `json:"section,omitempty"`
	PageStart int    `json:"page_start,omitempty"`
	PageEnd   int    `json:"page_end,omitempty"`
	Text      string `json:"text"`
	// Score is the retrieval score that ranked the passage (fused), for generators that weigh passages.
	Score float64 `json:"score"`
}

// GenerateRequest is what a generator answers from.
type GenerateRequest struct {
	Question string
	// Language of the question, "ko" or "en" (see textproc.DetectLanguage); answers use it.
	Language string
	History  []Turn
	Passages []Passage
	// SystemPrompt overrides the default system prompt when non-empty (per-collection setting).
	SystemPrompt string
}

// Generation is a generator's answer: markdown with [n] citations referring to GenerateRequest.Passages.
type Generation struct {
	Text  string
	Model string
	// InputTokens/OutputTokens as reported by the provider (0 when unknown).
	InputTokens  int
	OutputTokens int
}

// Generator writes an answer from passages. Implementations must be safe for concurrent use.
type Generator interface {
	// Name is "<provider>/<model>", shown by `ragd serve` and the UI.
	Name() string
	// Generate answers req. When onDelta is non-nil the text is also streamed through it, piece by piece, in
	// order (the concatenated deltas equal Generation.Text); an error returned by onDelta stops generation
	// and is returned. Errors carry CodeLLMFailed.
	Generate(ctx context.Context, req GenerateRequest, onDelta func(string) error) (*Generation, error)
}
