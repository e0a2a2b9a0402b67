package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// referenceKeyword is the plain form of the keyword query: every term, filter and visibility joined per
// row, bm25() over all matches. The pruned implementation must return the same ranking.
func referenceKeyword(t *testing.T, s *Store, p rag.Principal, terms []string, f rag.Filter, k int) []rag.Candidate {
	t.Helper()
	var w where
	w.visible(p)
	if err := w.filter(f); err != nil {
		t.Fatal(err)
	}
	var out []rag.Candidate
	err := s.read(t.Context(), func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(t.Context(), `SELECT chunks_fts.rowid, -bm25(chunks_fts) FROM chunks_fts
			JOIN chunks c ON c.id = chunks_fts.rowid JOIN documents d ON d.seq = c.doc_seq
			WHERE chunks_fts MATCH ? AND `+w.sql()+` ORDER BY bm25(chunks_fts), chunks_fts.rowid LIMIT ?`,
			append(append([]any{ftsQuery(distinctTerms(terms))}, w.args...), k)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c := rag.Candidate{Rank: len(out) + 1}
			if err := rows.Scan(&c.ChunkID, &c.Score); err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKeywordPruningIsExact compares KeywordCandidates with the plain query on a Zipf corpus large enough
// for the pruning rules to apply, with and without filters.
func TestKeywordPruningIsExact(t *testing.T) {
	s, err := Open(context.Background(), t.TempDir(), Options{KeywordIndexMin: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.keywordBudget = 300
	keywordExactness(t, s, false)
	pruned, full := s.terms.pruned.Load(), s.terms.full.Load()
	t.Logf("%d queries answered by the pruned round, %d in full", pruned, full)
	if pruned == 0 || full == 0 {
		t.Errorf("both paths must be exercised: pruned %d, full %d", pruned, full)
	}
}

// TestKeywordIndexIsExact compares the in-memory keyword index's answers with the plain FTS5 query on the
// same corpus: first over the chunks of its snapshot, then after documents were replaced (their old
// chunks deleted, the new ones past the snapshot) and deleted, and again once it was rebuilt.
func TestKeywordIndexIsExact(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{KeywordIndexMin: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.kw.inline = true
	keywordExactness(t, s, true)
	if s.kw.answered.Load() == 0 {
		t.Fatal("the in-memory index answered no query")
	}
	if x := s.kw.cur.Load(); x == nil || x.bytes <= 0 {
		t.Fatalf("index %+v", x)
	}
}

// keywordExactness loads a Zipf corpus into s and compares KeywordCandidates with referenceKeyword; with
// changes, it replaces and deletes documents and compares again, then rebuilds s's in-memory keyword
// index and compares a third time.
func keywordExactness(t *testing.T, s *Store, changes bool) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 7))
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx", i) // one analyzer term each, whatever the stemmer does
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	coll, _ := s.EnsureCollection(ctx, "c", "owner")
	sp := rag.Space{Provider: "t", Model: "m", Dim: 2}
	const docs, perDoc = 60, 100
	commit := func(id string, nchunks int) {
		chunks := make([]rag.Chunk, nchunks)
		for j := range chunks {
			words := make([]string, 30+r.IntN(60))
			for k := range words {
				words[k] = vocab[zipf.Uint64()]
			}
			if j%10 == 0 {
				// Short chunks that repeat a middling word score close to the bound of that word alone.
				words = words[:2+r.IntN(4)]
				for range 3 + r.IntN(5) {
					words = append(words, vocab[10+r.IntN(390)])
				}
				w := vocab[10+r.IntN(390)]
				for range 4 + r.IntN(6) {
					words = append(words, w)
				}
			}
			chunks[j] = rag.Chunk{Index: j, Text: strings.Join(words, " "), Vector: []float32{1, 0}}
		}
		if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: id, Space: sp, Chunks: chunks}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for i := range docs {
		d := &rag.Document{CollectionID: coll.ID, Owner: "owner"}
		if i%6 == 0 {
			d.Tags = []string{"sixth"}
		}
		if err := s.CreateDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
		commit(d.ID, perDoc)
		ids = append(ids, d.ID)
	}
	n := int64(docs * perDoc)
	member := rag.Principal{ID: "user:x"}
	pick := func(lo, hi int) string { return vocab[lo+r.IntN(hi-lo)] }
	// The reference query scans every posting; under -short (the race run) fewer queries keep it to seconds.
	queries := 80
	if testing.Short() {
		queries = 24
	}
	var qs [][]string
	for i := range queries {
		// One frequent word (often above half the chunks), one or two middling, sometimes a rare one.
		words := []string{pick(0, 3), pick(10, 120), pick(30, 400)}
		if i%3 == 0 {
			words = append(words, pick(400, 3000))
		}
		qs = append(qs, textproc.QueryTerms(strings.Join(words, " ")))
	}
	compare := func(phase string) {
		for _, terms := range qs {
			for _, tc := range []struct {
				p rag.Principal
				f rag.Filter
				k int
			}{
				{rag.LocalPrincipal, rag.Filter{}, 10},
				{rag.LocalPrincipal, rag.Filter{}, 50},
				{rag.LocalPrincipal, rag.Filter{}, 100},
				{rag.LocalPrincipal, rag.Filter{Tags: []string{"sixth"}}, 20},
				{member, rag.Filter{}, 10}, // sees nothing
			} {
				got, err := s.KeywordCandidates(ctx, tc.p, rag.KeywordQuery{Terms: terms, Filter: tc.f, K: tc.k})
				if err != nil {
					t.Fatal(err)
				}
				ref := referenceKeyword(t, s, tc.p, terms, tc.f, tc.k+200)
				compareRankings(t, fmt.Sprintf("%s: %v %+v k=%d", phase, terms, tc.f, tc.k), got, ref, tc.k)
			}
		}
	}
	compare("loaded")
	t.Logf("%d chunks", n)
	if !changes {
		return
	}
	// Replace every twelfth document (its old chunks are deleted, the new ones come after the index's
	// snapshot) and delete every ninth: fewer changes than make the index rebuild.
	for i, id := range ids {
		switch {
		case i%12 == 0:
			commit(id, 40)
		case i%9 == 0:
			if err := s.DeleteDocument(ctx, rag.LocalPrincipal, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	x := s.kw.cur.Load()
	compare("changed")
	if s.kw.cur.Load() != x {
		t.Fatal("the index was rebuilt before the changed corpus was compared")
	}
	s.kw.cur.Store(nil)
	if _, _, err := s.WaitKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	compare("rebuilt")
}

// compareRankings checks that got is ref's top k: same scores (within 1e-5, the weight of left-out
// floor-IDF terms), same chunks except for the order inside ties, and only ref's floor-IDF tail (scores
// near zero) may be missing.
func compareRankings(t *testing.T, what string, got, ref []rag.Candidate, k int) {
	t.Helper()
	const eps = 1e-5
	for i, c := range got {
		if c.Rank != i+1 {
			t.Fatalf("%s: rank %d at %d", what, c.Rank, i)
		}
	}
	for i := 0; i < k && i < len(ref); i++ {
		if i >= len(got) {
			if ref[i].Score > eps {
				t.Fatalf("%s: %d candidates, reference has %d with score %v", what, len(got), i+1, ref[i].Score)
			}
			return
		}
		if math.Abs(got[i].Score-ref[i].Score) > eps {
			t.Fatalf("%s: candidate %d score %v, reference %v", what, i, got[i].Score, ref[i].Score)
		}
		if got[i].ChunkID == ref[i].ChunkID {
			continue
		}
		// A different chunk is only right if it has the same score in the reference (a tie).
		tied := false
		for _, x := range ref {
			if x.ChunkID == got[i].ChunkID && math.Abs(x.Score-got[i].Score) <= eps {
				tied = true
			}
		}
		if !tied {
			t.Fatalf("%s: candidate %d is chunk %d (%v), reference has %d (%v)", what, i, got[i].ChunkID, got[i].Score, ref[i].ChunkID, ref[i].Score)
		}
	}
	if len(got) > min(k, len(ref)) {
		t.Fatalf("%s: %d candidates, reference %d", what, len(got), len(ref))
	}
}

// TestKeywordPruningBound: a short chunk that repeats a non-essential word must still win over the chunks
// of the rarer, essential word, which only the bound of the non-essential word guarantees.
func TestKeywordPruningBound(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.keywordBudget = 30
	coll, _ := s.EnsureCollection(ctx, "c", "owner")
	d := &rag.Document{CollectionID: coll.ID, Owner: "owner"}
	if err := s.CreateDocument(ctx, d); err != nil {
		t.Fatal(err)
	}
	filler := strings.Repeat("lorem ipsum dolor sit amet consectetur adipiscing elit ", 5)
	var chunks []rag.Chunk
	add := func(text string) {
		chunks = append(chunks, rag.Chunk{Index: len(chunks), Text: text, Vector: []float32{1, 0}})
	}
	for i := range 400 {
		switch {
		case i < 20:
			add("alphaword " + filler)
		case i < 80:
			add("betaword " + filler)
		default:
			add(fmt.Sprintf("gamma%d %s", i, filler))
		}
	}
	add(strings.Repeat("betaword ", 8))
	sp := rag.Space{Provider: "t", Model: "m", Dim: 2}
	if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, Space: sp, Chunks: chunks}); err != nil {
		t.Fatal(err)
	}
	terms := textproc.QueryTerms("alphaword betaword")
	got, err := s.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: terms, K: 1})
	if err != nil {
		t.Fatal(err)
	}
	ref := referenceKeyword(t, s, rag.LocalPrincipal, terms, rag.Filter{}, 5)
	if len(got) != 1 || got[0].ChunkID != ref[0].ChunkID || ref[0].ChunkID != 401 {
		t.Fatalf("got %+v, reference %+v (want the short chunk, ID 401, first)", got, ref)
	}
}

// TestKeywordIndexMin checks Options.KeywordIndexMin at its boundary: one chunk below it keyword queries
// go to FTS5 alone, at it they are answered from the in-memory index; negative never builds one.
func TestKeywordIndexMin(t *testing.T) {
	ctx := context.Background()
	for _, least := range []int{20, -1} {
		s, err := Open(ctx, t.TempDir(), Options{KeywordIndexMin: least})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		coll, _ := s.EnsureCollection(ctx, "c", "owner")
		sp := rag.Space{Provider: "t", Model: "m", Dim: 2}
		commit := func(n int) {
			d := &rag.Document{CollectionID: coll.ID, Owner: "owner"}
			if err := s.CreateDocument(ctx, d); err != nil {
				t.Fatal(err)
			}
			chunks := make([]rag.Chunk, n)
			for j := range chunks {
				chunks[j] = rag.Chunk{Index: j, Text: fmt.Sprintf("common word%d", j), Vector: []float32{1, 0}}
			}
			if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, Space: sp, Chunks: chunks}); err != nil {
				t.Fatal(err)
			}
		}
		search := func() int {
			t.Helper()
			got, err := s.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms("common"), K: 50})
			if err != nil {
				t.Fatal(err)
			}
			return len(got)
		}
		commit(19)
		if rows, _, err := s.WaitKeywordIndex(ctx); err != nil || rows != 0 {
			t.Fatalf("least %d, 19 chunks: index of %d rows (%v), want none", least, rows, err)
		}
		if n := search(); n != 19 || s.kw.answered.Load() != 0 {
			t.Fatalf("least %d, 19 chunks: %d candidates, %d answered from the index", least, n, s.kw.answered.Load())
		}
		commit(1)
		rows, bytes, err := s.WaitKeywordIndex(ctx)
		want := 20
		if least < 0 {
			want = 0
		}
		if err != nil || rows != want || (rows > 0) != (bytes > 0) {
			t.Fatalf("least %d, 20 chunks: index of %d rows, %d bytes (%v), want %d rows", least, rows, bytes, err, want)
		}
		if n := search(); n != 20 || (s.kw.answered.Load() == 1) != (least > 0) {
			t.Fatalf("least %d, 20 chunks: %d candidates, %d answered from the index", least, n, s.kw.answered.Load())
		}
	}
}
