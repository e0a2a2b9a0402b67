package server

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strings"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
)

// Limits of POST /v1/embeddings.
const (
	// MaxEmbeddingsBody is the largest body (1 MiB); over it 413 payload_too_large.
	MaxEmbeddingsBody = 1 << 20
	// MaxEmbeddingInputs is how many texts one request may embed; one more is 400 invalid_request.
	MaxEmbeddingInputs = 256
)

// embeddingsRequest is OpenAI's embeddings request: input is a string or a list of strings (token arrays
// are refused: ragd's embedders take text).
type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     int             `json:"dimensions"`
}

type embedding struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"` // []float32, or a base64 string of little-endian float32s
}

// inputs reads input as texts. Errors: CodeInvalid.
func (e embeddingsRequest) inputs() ([]string, error) {
	var one string
	if err := json.Unmarshal(e.Input, &one); err == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(e.Input, &many); err != nil {
		return nil, rag.Errorf(rag.CodeInvalid, "input: want a string or a list of strings")
	}
	return many, nil
}

// handleEmbeddings embeds texts with the configured embedder (the model "ragd", or its space's ID as
// GET /api/status shows it). It counts against the search limit. Its usage is generate.EstimateTokens'
// (linear in the input, which may be a megabyte; the tokenizer is not).
func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	var req embeddingsRequest
	if err := decodeJSON(w, r, MaxEmbeddingsBody, &req); err != nil {
		s.writeOpenAIError(w, r, err)
		return
	}
	space := s.deps.Embedder.Space()
	texts, err := req.inputs()
	switch {
	case err != nil:
	case req.Model != ModelAll && req.Model != space.ID():
		err = rag.Errorf(rag.CodeNotFound, "no embedding model %q: the model is %q (or %q)", req.Model, ModelAll, space.ID())
	case len(texts) == 0 || len(texts) > MaxEmbeddingInputs:
		err = rag.Errorf(rag.CodeInvalid, "input: 1 to %d texts, got %d", MaxEmbeddingInputs, len(texts))
	case req.Dimensions != 0 && req.Dimensions != space.Dim:
		err = rag.Errorf(rag.CodeInvalid, "dimensions: the embedder's vectors have %d, got %d", space.Dim, req.Dimensions)
	case req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64":
		err = rag.Errorf(rag.CodeInvalid, "encoding_format: float or base64, got %q", req.EncodingFormat)
	}
	for i := 0; err == nil && i < len(texts); i++ {
		if strings.TrimSpace(texts[i]) == "" {
			err = rag.Errorf(rag.CodeInvalid, "input[%d] is empty", i)
		}
	}
	if err != nil {
		s.writeOpenAIError(w, r, err)
		return
	}
	vecs, err := s.deps.Embedder.EmbedDocuments(r.Context(), texts)
	if err != nil {
		s.writeOpenAIError(w, r, err)
		return
	}
	data := make([]embedding, len(vecs))
	tokens := 0
	for i, v := range vecs {
		data[i] = embedding{Object: "embedding", Index: i, Embedding: v}
		if req.EncodingFormat == "base64" {
			data[i].Embedding = base64Floats(v)
		}
		tokens += generate.EstimateTokens(texts[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": space.ID(),
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// base64Floats is v as OpenAI's base64 encoding: the little-endian float32s, base64 (standard) encoded.
func base64Floats(v []float32) string {
	var b bytes.Buffer
	b.Grow(4 * len(v))
	for _, f := range v {
		_ = binary.Write(&b, binary.LittleEndian, math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}
