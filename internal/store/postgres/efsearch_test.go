package postgres

import (
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestEfSearchDefaults: without a configured ef_search each embedder's space gets its own default (the hash
// embedder's bags of words need a longer candidate list, longer still with a filter); a configured one applies to every space; 0 is
// valid (per embedder), 1001 is not.
func TestEfSearchDefaults(t *testing.T) {
	hash, openai := rag.Space{Provider: "hash", Model: "v1", Dim: 768}, rag.Space{Provider: "openai", Model: "text-embedding-3-small", Dim: 1536}
	s := &Store{opts: Options{}.WithDefaults()}
	for _, c := range []struct {
		space    rag.Space
		filtered bool
		want     int
	}{{hash, false, 400}, {hash, true, 800}, {openai, false, 100}, {openai, true, 100}} {
		if got := s.efSearch(c.space, c.filtered); got != c.want {
			t.Errorf("%s filtered %v: ef_search %d, want %d", c.space.Provider, c.filtered, got, c.want)
		}
	}
	s = &Store{opts: Options{EfSearch: 64}.WithDefaults()}
	if s.efSearch(hash, true) != 64 || s.efSearch(openai, false) != 64 {
		t.Errorf("configured 64: hash %d, openai %d", s.efSearch(hash, true), s.efSearch(openai, false))
	}
	for ef, ok := range map[int]bool{0: true, 1: true, 1000: true, 1001: false, -1: false} {
		if err := (Options{EfSearch: ef}).WithDefaults().validate(); (err == nil) != ok {
			t.Errorf("EfSearch %d: validate %v", ef, err)
		}
	}
}
