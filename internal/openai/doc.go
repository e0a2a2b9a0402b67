// Package openai is ragd's OpenAI provider (github.com/openai/openai-go/v3), for OpenAI itself or a local
// OpenAI-compatible server reached through the base URL (Ollama, vLLM, llama.cpp server, TEI, LM Studio).
// Its Embedder calls /v1/embeddings (text-embedding-3-small/large are shortened with "dimensions"; local
// models have a fixed size and may ignore or reject it); its Generator calls chat completions, streaming as
// server-sent events when the caller streams. Explain reads the SDK's errors for internal/provider.
//
// Only this package imports the OpenAI SDK; internal/app registers it unless the build has the ragd_offline
// tag.
package openai
