// Package gemini is ragd's Gemini provider (google.golang.org/genai): an Embedder that calls
// batchEmbedContents with task type RETRIEVAL_DOCUMENT for passages and RETRIEVAL_QUERY for questions and the
// configured output dimensionality, and a Generator that calls generateContent, or streamGenerateContent when
// the caller streams, with ragd's system instruction, the history as user/model turns, temperature 0.3, 2048
// output tokens and thinking off for flash models. Explain reads the SDK's errors for internal/provider.
//
// Only this package imports the Gemini SDK; internal/app registers it unless the build has the ragd_offline
// tag.
package gemini
