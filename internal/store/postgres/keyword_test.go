package postgres

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// TestKeywordTopK: the keyword query, which reads the postings of common terms only for chunks that can still
// reach the top k, returns exactly the top k of a reference BM25 over every chunk — same chunks, same order
// (ties to the lower chunk ID), same scores — for k from 1 to 40, with and without a filter, over a Zipf-like
// corpus where some query terms are in most chunks and others in a few; and term_stats matches a recount of
// the postings after new versions and deletions.
func TestKeywordTopK(t *testing.T) {
	s := openStore(t, Options{})
	ctx := t.Context()
	coll, err := s.EnsureCollection(ctx, "docs", "user:alice")
	if err != nil {
		t.Fatal(err)
	}
	vocab := make([]string, 300)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%03dx", i)
	}
	r := rand.New(rand.NewPCG(3, 5))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(4, 6)), 1.1, 2, uint64(len(vocab)-1))
	text := func() string {
		ws := make([]string, 5+r.IntN(40))
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	space := rag.Space{Provider: "test", Model: "topk", Dim: 2}
	tagged := map[string]bool{}
	var docs []*rag.Document
	for d := range 60 {
		doc := &rag.Document{CollectionID: coll.ID, ExternalID: fmt.Sprintf("d%02d", d), Owner: "user:alice"}
		if d%3 == 0 {
			doc.Tags = []string{"third"}
		}
		if err := s.CreateDocument(ctx, doc); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
		for range 1 + d%3 { // some documents get a second and third version (their old postings are deleted)
			cs := make([]rag.Chunk, 1+r.IntN(8))
			for i := range cs {
				cs[i] = rag.Chunk{Index: i, Text: text(), Vector: []float32{1, 0}}
			}
			if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: doc.ID, ContentHash: fmt.Sprint(r.Uint64()), Space: space, Chunks: cs}); err != nil {
				t.Fatal(err)
			}
		}
		tagged[doc.ID] = d%3 == 0
	}
	for _, d := range docs[50:] {
		if err := s.DeleteDocument(ctx, rag.LocalPrincipal, d.ID); err != nil {
			t.Fatal(err)
		}
	}

	var wrong int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM (SELECT term, count(*) AS df, max(tf) AS max_tf, min(dl) AS min_dl
			FROM {S}.postings GROUP BY term) p
		FULL JOIN (SELECT term, df, max_tf, min_dl FROM {S}.term_stats_for(ARRAY(SELECT DISTINCT term FROM {S}.term_stats))) f USING (term)
		WHERE p.df IS DISTINCT FROM f.df::bigint OR f.max_tf < p.max_tf OR f.min_dl > p.min_dl`)).Scan(&wrong); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Fatalf("term_stats disagrees with a recount of the postings on %d terms", wrong)
	}

	texts, inTagged := map[int64]string{}, map[int64]bool{}
	for _, d := range docs[:50] {
		cs, err := s.ListChunks(ctx, rag.LocalPrincipal, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			texts[c.ID] = c.Text
			inTagged[c.ID] = tagged[d.ID]
		}
	}
	type scored struct {
		id    int64
		score float64
	}
	top := func(ref map[int64]float64, keep func(int64) bool, k int) []scored {
		var all []scored
		for id, sc := range ref {
			if keep(id) {
				all = append(all, scored{id, sc})
			}
		}
		slices.SortFunc(all, func(a, b scored) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		return all[:min(k, len(all))]
	}
	queries := []string{vocab[0], vocab[0] + " " + vocab[1], vocab[200] + " " + vocab[0] + " " + vocab[2], vocab[299] + " " + vocab[1]}
	for range 40 {
		ws := make([]string, 1+r.IntN(6))
		for i := range ws {
			if r.IntN(2) == 0 {
				ws[i] = vocab[zipf.Uint64()]
			} else {
				ws[i] = vocab[r.IntN(len(vocab))]
			}
		}
		queries = append(queries, strings.Join(ws, " "))
	}
	all := func(int64) bool { return true }
	for _, q := range queries {
		terms := textproc.QueryTerms(q)
		ref := bm25Reference(texts, terms)
		for _, k := range []int{1, 3, 10, 40} {
			for _, f := range []struct {
				filter rag.Filter
				keep   func(int64) bool
			}{{rag.Filter{}, all}, {rag.Filter{Tags: []string{"third"}}, func(id int64) bool { return inTagged[id] }}} {
				want := top(ref, f.keep, k)
				got, err := s.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: terms, Filter: f.filter, K: k})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%q k=%d tags=%v: %d candidates, reference has %d", q, k, f.filter.Tags, len(got), len(want))
				}
				for i, g := range got {
					w := want[i]
					// A different chunk is right only when it ties with the reference's at that rank.
					if math.Abs(g.Score-w.score) > 1e-9*math.Max(1, w.score) || (g.ChunkID != w.id && math.Abs(ref[g.ChunkID]-w.score) > 1e-9) {
						t.Fatalf("%q k=%d tags=%v rank %d: chunk %d score %.12f; reference chunk %d score %.12f",
							q, k, f.filter.Tags, i+1, g.ChunkID, g.Score, w.id, w.score)
					}
				}
			}
		}
	}
}
