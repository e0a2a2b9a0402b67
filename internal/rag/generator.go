package rag

import "context"

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
	// DocumentIDs are the documents an assistant turn cited (optional): a follow-up question's retrieval
	// favours them (see answer.Service.Ask).
	DocumentIDs []string `json:"document_ids,omitempty"`
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
	// NotCovered is the reply when the passages do not answer the question (a collection profile's fixed
	// reply); "" is the default in the question's language (generate.NotFound).
	NotCovered string
	// Temperature and MaxOutputTokens override a hosted generator's own settings when set (a collection
	// profile's generation settings); offline generators have none.
	Temperature     *float64
	MaxOutputTokens int
	// MaxChars, when set, is the answer length a quoting generator (the extractive answerer) aims for
	// instead of its own: the answer service sets it for each document's part of a comparison.
	MaxChars int
	// Reserve are further passages of the answer's documents (numbered after Passages) that a quoting
	// generator (the extractive answerer) may quote once Passages cover the question: they do not count in
	// deciding whether they do, only in choosing the sentences that answer. The answer service sets them to
	// the passages of the best passage's document that the per-document cap kept out; generators that
	// write (hosted models) ignore them.
	Reserve []Passage
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

// Completer is a Generator that also answers a plain prompt (a system and a user message, no passages, not
// streamed): the answer service uses it to rewrite a follow-up question into a standalone one. Errors carry
// CodeLLMFailed.
type Completer interface {
	Complete(ctx context.Context, system, user string) (string, error)
}

// JSONSchema is the shape a structured answer must have (JSONCompleter): a JSON Schema object in the subset
// every provider's structured output accepts — objects whose properties are all required and that allow no
// other properties, arrays, strings (with enum), integers, numbers and booleans. Name identifies it to
// providers that want one (letters, digits, _ and -).
type JSONSchema struct {
	Name   string
	Schema map[string]any
}

// JSONCompleter is a Generator that also answers a plain prompt with JSON that follows a schema, by its
// provider's structured output (OpenAI response_format json_schema, Gemini responseJsonSchema, Anthropic
// output_config.format). It returns the JSON text as the model wrote it: callers validate it, since a model
// may still name what the schema's enums do not hold on providers that do not enforce them. Errors carry
// CodeLLMFailed.
type JSONCompleter interface {
	CompleteJSON(ctx context.Context, system, user string, schema JSONSchema) ([]byte, error)
}
