package bm25

import (
	"slices"
	"testing"
)

func TestPlainTerms(t *testing.T) {
	got := PlainTerms("대표발의한 React, 2023년!")
	want := []string{"대표발의한", "대표", "표발", "발의", "의한", "react", "2023년"}
	if !slices.Equal(got, want) {
		t.Errorf("PlainTerms = %q, want %q", got, want)
	}
}

func TestSearch(t *testing.T) {
	docs := [][]string{{"a", "b"}, {"a", "a", "c", "d"}, {"c"}}
	ix := New(docs, 0.9, 0.4)
	if got := ix.Search([]string{"b"}, 10); !slices.Equal(got, []int{0}) {
		t.Fatalf("Search(b) = %v, want [0]", got)
	}
	// "a" is in 2 of 3: idf ln(1.5/2.5) < 0 is floored, so the ranking is by tf and length only.
	if got := ix.Search([]string{"a", "b"}, 10); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("Search(a b) = %v, want [0 1]", got)
	}
	if got := ix.Search([]string{"zzz"}, 10); len(got) != 0 {
		t.Errorf("Search(unknown) = %v, want nothing", got)
	}
	if got := ix.Search([]string{"c", "d"}, 1); !slices.Equal(got, []int{1}) {
		t.Errorf("Search(c d, k 1) = %v, want [1]", got)
	}
}

func TestTopK(t *testing.T) {
	got := TopK(map[int]float64{3: 1, 1: 2, 2: 1, 0: 0.5}, 3)
	if !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("TopK = %v, want [1 2 3] (ties by key)", got)
	}
}
