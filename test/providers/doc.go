// Package providers holds ragd's end-to-end tests with hosted models: a whole ragd (in this process, and the
// real binary) drives the official Gemini, OpenAI and Anthropic SDKs against the wire-format fakes of
// internal/fakeapi — ingestion, search, answers and streamed answers for each provider, faults at every
// step, and a change of embedder on a populated store.
package providers
