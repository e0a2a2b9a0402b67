// Package e2e tests the real ragd binary end to end on the embedded store with the offline defaults: ingest of
// every shared fixture, search with the right page numbers, cited answers, rejection of bad input without
// damage to what is stored, and the quality gates of `ragd eval` on the shared evaluation sets.
package e2e
