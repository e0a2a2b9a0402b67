package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// fragmentedStore commits docs documents one transaction each, which leaves the keyword index in many
// segments, and returns the store with the queries to compare.
func fragmentedStore(t *testing.T, opts Options, docs int) (*Store, [][]string) {
	t.Helper()
	ctx := t.Context()
	s, err := Open(ctx, t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r := rand.New(rand.NewPCG(3, 3))
	vocab := make([]string, 400)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx", i)
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	coll, err := s.EnsureCollection(ctx, "c", "owner")
	if err != nil {
		t.Fatal(err)
	}
	sp := rag.Space{Provider: "t", Model: "m", Dim: 2}
	for i := range docs {
		d := &rag.Document{CollectionID: coll.ID, Owner: "owner"}
		if err := s.CreateDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
		chunks := make([]rag.Chunk, 5)
		for j := range chunks {
			words := make([]string, 20+r.IntN(40))
			for k := range words {
				words[k] = vocab[zipf.Uint64()]
			}
			chunks[j] = rag.Chunk{Index: j, Kind: rag.KindText, Text: strings.Join(words, " "), Vector: []float32{1, 0}}
		}
		if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: fmt.Sprint(i), Space: sp, Chunks: chunks}); err != nil {
			t.Fatal(err)
		}
	}
	var queries [][]string
	for range 20 {
		queries = append(queries, textproc.QueryTerms(strings.Join([]string{vocab[r.IntN(20)], vocab[20+r.IntN(300)], vocab[r.IntN(400)]}, " ")))
	}
	return s, queries
}

func keywordResults(t *testing.T, s *Store, queries [][]string) [][]rag.Candidate {
	t.Helper()
	var out [][]rag.Candidate
	for _, q := range queries {
		c, err := s.KeywordCandidates(t.Context(), rag.LocalPrincipal, rag.KeywordQuery{Terms: q, K: 20})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func segments(t *testing.T, s *Store) int {
	t.Helper()
	n, err := s.keywordSegments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOneSegmentPerCommit: a version's chunks enter the keyword index as one segment, however many.
func TestOneSegmentPerCommit(t *testing.T) {
	for _, docs := range []int{1, 2} {
		s, _ := fragmentedStore(t, Options{KeywordMergeDelay: -1}, docs)
		if n := segments(t, s); n != docs {
			t.Fatalf("%d commits of 5 chunks made %d segments", docs, n)
		}
	}
}

func TestMergeKeywordIndex(t *testing.T) {
	t.Run("Explicit", func(t *testing.T) {
		s, queries := fragmentedStore(t, Options{KeywordMergeDelay: -1}, 60)
		if n := segments(t, s); n < mergeMinSegments {
			t.Fatalf("%d segments after 60 commits; the test needs at least %d", n, mergeMinSegments)
		}
		before := keywordResults(t, s, queries)
		if err := s.MergeKeywordIndex(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := segments(t, s); n != 1 {
			t.Fatalf("%d segments after the merge", n)
		}
		if after := keywordResults(t, s, queries); !reflect.DeepEqual(before, after) {
			t.Fatalf("results changed by the merge:\n%v\n%v", before, after)
		}
		// Nothing left to merge: no write at all.
		if err := s.MergeKeywordIndex(t.Context()); err != nil || s.merger.merged.Load() != 1 {
			t.Fatalf("second merge: %v, %d merges", err, s.merger.merged.Load())
		}
	})
	t.Run("BelowThreshold", func(t *testing.T) {
		s, _ := fragmentedStore(t, Options{KeywordMergeDelay: -1}, 3)
		n := segments(t, s)
		if err := s.mergeKeywordIndex(t.Context(), mergeMinSegments, false); err != nil {
			t.Fatal(err)
		}
		if got := segments(t, s); got != n || n >= mergeMinSegments {
			t.Fatalf("%d segments became %d", n, got)
		}
	})
	t.Run("BackgroundAfterWritesPause", func(t *testing.T) {
		s, queries := fragmentedStore(t, Options{KeywordMergeDelay: 50 * time.Millisecond}, 60)
		before := keywordResults(t, s, queries)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		// Merges may also have run between commits that happened to be slow; what must hold is that one
		// ran and that the index did not stay at the threshold.
		for s.merger.merged.Load() == 0 || segments(t, s) >= mergeMinSegments {
			select {
			case <-ctx.Done():
				t.Fatalf("still %d segments (%d merges)", segments(t, s), s.merger.merged.Load())
			case <-time.After(20 * time.Millisecond):
			}
		}
		if after := keywordResults(t, s, queries); !reflect.DeepEqual(before, after) {
			t.Fatalf("results changed by the merge:\n%v\n%v", before, after)
		}
	})
	t.Run("YieldsToWrites", func(t *testing.T) {
		s, _ := fragmentedStore(t, Options{KeywordMergeDelay: -1}, 60)
		n := segments(t, s)
		s.kickMerge() // a write arrives before the first step
		if err := s.mergeKeywordIndex(t.Context(), mergeMinSegments, true); err != nil {
			t.Fatal(err)
		}
		if got := segments(t, s); got != n {
			t.Fatalf("%d segments became %d although writes were going on", n, got)
		}
		select {
		case <-s.merger.kick: // kicked again, so the merge is retried after the next pause
		default:
			t.Fatal("the yielded merge was not rescheduled")
		}
	})
}
