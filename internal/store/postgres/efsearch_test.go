package postgres

import (
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestEfSearchDefaults: without a configured ef_search each embedder's space gets its own default (the hash
// embedder's bags of words need a longer candidate list); a configured one applies to every space; 0 is
// valid (per embedder), 1001 is not.
func TestEfSearchDefaults(t *testing.T) {
	hash, openai := rag.Space{Provider: "hash", Model: "v1", Dim: 768}, rag.Space{Provider: "openai", Model: "text-embedding-3-small", Dim: 1536}
	s := &Store{opts: Options{}.WithDefaults()}
	if got := s.efSearch(hash); got != 400 {
		t.Errorf("hash: ef_search %d, want 400", got)
	}
	if got := s.efSearch(openai); got != 100 {
		t.Errorf("openai: ef_search %d, want 100", got)
	}
	s = &Store{opts: Options{EfSearch: 64}.WithDefaults()}
	if s.efSearch(hash) != 64 || s.efSearch(openai) != 64 {
		t.Errorf("configured 64: hash %d, openai %d", s.efSearch(hash), s.efSearch(openai))
	}
	for ef, ok := range map[int]bool{0: true, 1: true, 1000: true, 1001: false, -1: false} {
		if err := (Options{EfSearch: ef}).WithDefaults().validate(); (err == nil) != ok {
			t.Errorf("EfSearch %d: validate %v", ef, err)
		}
	}
}
