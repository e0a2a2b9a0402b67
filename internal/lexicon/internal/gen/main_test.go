package main

import (
	"bytes"
	"os"
	"testing"

	ko "github.com/ikawaha/kagome-dict-ko"
)

// TestUpToDate regenerates the word list from the dictionary in go.mod and compares it with the one
// internal/lexicon embeds: a change of dictionary, tags or format needs `go generate ./internal/lexicon`.
func TestUpToDate(t *testing.T) {
	want, err := os.ReadFile("../../ko_words.gz")
	if err != nil {
		t.Fatal(err)
	}
	got, err := encode(words(ko.Dict()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("internal/lexicon/ko_words.gz is stale (%d bytes, regenerated %d): run go generate ./internal/lexicon", len(want), len(got))
	}
}
