// Package providers holds ragd's end-to-end tests with hosted models: a whole ragd (in this process, and the
// real binary) drives the official Gemini, OpenAI and Anthropic SDKs against the wire-format fakes of
// internal/fakeapi — ingestion, search, answers and streamed answers for each provider, faults at every
// step, and a change of embedder on a populated store. The Q&A board's tests are here too: the lecture
// course of the shared samples on the real binary (offline models), and its answer pass against the OpenAI
// fake's faults.
package providers
