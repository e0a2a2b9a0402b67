//go:build race

package jobs

// raceEnabled: under the race detector the WebAssembly PDF engine is many times slower, so the tests that
// ingest many PDFs are skipped (they run in the normal suite).
const raceEnabled = true
