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
	keywordTopK(t, openStore(t, Options{KeywordIndexMin: -1}), nil)
}

// TestKeywordIndexIsExact runs TestKeywordTopK's comparisons with keyword queries answered from the
// in-memory keyword index, under row security, with one connection (as on PGlite): built once a third of
// the corpus is in (the rest is its tail), then documents are replaced and deleted (dead rows), and the
// index answers are compared with the reference BM25 and with the MaxScore statement of a second store on
// the same schema, as the owner, as a user granted a few documents and as a user who sees none; then the
// index is built again (no tail, no dead rows) and compared once more.
func TestKeywordIndexIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("minutes under -race on PGlite; the full go test stage and the native PostgreSQL stage run it")
	}
	skipUntilNative(t)
	url := testURL(t)
	one := url + "&pool_max_conns=1"
	if !strings.Contains(url, "?") {
		one = url + "?pool_max_conns=1"
	}
	schema := testSchema(t, url)
	statement := openStore(t, Options{Schema: schema, KeywordIndexMin: -1, ReaderRole: testReaderRole})
	s, err := Open(t.Context(), one, Options{Schema: schema, KeywordIndexMin: 1, ReaderRole: testReaderRole})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.kw.inline = true
	keywordTopK(t, s, statement)
	if s.kw.answered.Load() == 0 {
		t.Fatal("the in-memory index answered no query")
	}
	if x := s.kw.cur.Load(); x == nil || x.bytes <= 0 {
		t.Fatalf("index %+v", x)
	}
}

// keywordTopK builds TestKeywordTopK's corpus in s and compares its keyword candidates with a reference
// BM25 and, when statement is not nil (a store on the same schema answering by the MaxScore statement),
// with the statement's, and runs the in-memory index's phases when s has one.
func keywordTopK(t *testing.T, s, statement *Store) {
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
	tagged, granted := map[string]bool{}, map[string]bool{}
	var docs []*rag.Document
	commit := func(doc *rag.Document) {
		cs := make([]rag.Chunk, 1+r.IntN(8))
		for i := range cs {
			cs[i] = rag.Chunk{Index: i, Text: text(), Vector: []float32{1, 0}}
		}
		if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: doc.ID, ContentHash: fmt.Sprint(r.Uint64()), Space: space, Chunks: cs}); err != nil {
			t.Fatal(err)
		}
	}
	for d := range 60 {
		if d == 20 && statement != nil {
			// The index's snapshot: the chunks committed from here on are its tail.
			if rows, _, err := s.WaitKeywordIndex(ctx); err != nil || rows == 0 {
				t.Fatalf("keyword index: %d rows, %v", rows, err)
			}
		}
		doc := &rag.Document{CollectionID: coll.ID, ExternalID: fmt.Sprintf("d%02d", d), Owner: "user:alice"}
		if d%3 == 0 {
			doc.Tags = []string{"third"}
		}
		if d%7 == 0 {
			doc.Readers = []string{"user:bob"}
		}
		if err := s.CreateDocument(ctx, doc); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
		for range 1 + d%3 { // some documents get a second and third version (their old postings are deleted)
			commit(doc)
		}
		tagged[doc.ID], granted[doc.ID] = d%3 == 0, d%7 == 0
	}
	if statement != nil {
		// Replaced documents of the index's snapshot: their old chunks are its dead rows.
		for _, d := range docs[:3] {
			commit(d)
		}
	}
	gone := docs[50:]
	if statement != nil {
		gone = append(gone, docs[18:22]...) // in the snapshot and past it
	}
	deleted := map[string]bool{}
	for _, d := range gone {
		if err := s.DeleteDocument(ctx, rag.LocalPrincipal, d.ID); err != nil {
			t.Fatal(err)
		}
		deleted[d.ID] = true
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

	texts, inTagged, inGranted := map[int64]string{}, map[int64]bool{}, map[int64]bool{}
	for _, d := range docs {
		if deleted[d.ID] {
			continue
		}
		cs, err := s.ListChunks(ctx, rag.LocalPrincipal, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			texts[c.ID] = c.Text
			inTagged[c.ID], inGranted[c.ID] = tagged[d.ID], granted[d.ID]
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
	readers := []struct {
		p    rag.Principal
		keep func(int64) bool
	}{
		{rag.LocalPrincipal, all},
		{rag.Principal{ID: "user:alice"}, all},
		{rag.Principal{ID: "user:bob"}, func(id int64) bool { return inGranted[id] }},
		{rag.Principal{ID: "user:nobody"}, func(int64) bool { return false }},
	}
	check := func(phase string) {
		for _, q := range queries {
			terms := textproc.QueryTerms(q)
			ref := bm25Reference(texts, terms)
			for _, k := range []int{1, 3, 10, 40} {
				for _, f := range []struct {
					filter rag.Filter
					keep   func(int64) bool
				}{{rag.Filter{}, all}, {rag.Filter{Tags: []string{"third"}}, func(id int64) bool { return inTagged[id] }}} {
					for _, rd := range readers {
						want := top(ref, func(id int64) bool { return f.keep(id) && rd.keep(id) }, k)
						kq := rag.KeywordQuery{Terms: terms, Filter: f.filter, K: k}
						got, err := s.KeywordCandidates(ctx, rd.p, kq)
						if err != nil {
							t.Fatal(err)
						}
						what := fmt.Sprintf("%s: %q k=%d tags=%v as %s", phase, q, k, f.filter.Tags, rd.p.ID)
						if len(got) != len(want) {
							t.Fatalf("%s: %d candidates, reference has %d", what, len(got), len(want))
						}
						for i, g := range got {
							w := want[i]
							// A different chunk is right only when it ties with the reference's at that rank.
							if math.Abs(g.Score-w.score) > 1e-9*math.Max(1, w.score) || (g.ChunkID != w.id && math.Abs(ref[g.ChunkID]-w.score) > 1e-9) {
								t.Fatalf("%s rank %d: chunk %d score %.12f; reference chunk %d score %.12f",
									what, i+1, g.ChunkID, g.Score, w.id, w.score)
							}
						}
						if statement == nil {
							continue
						}
						sql, err := statement.KeywordCandidates(ctx, rd.p, kq)
						if err != nil {
							t.Fatal(err)
						}
						if len(sql) != len(got) {
							t.Fatalf("%s: %d candidates, the statement %d", what, len(got), len(sql))
						}
						for i, g := range got {
							w := sql[i]
							if g.Rank != w.Rank || math.Abs(g.Score-w.Score) > 1e-12*math.Max(1, w.Score) ||
								(g.ChunkID != w.ChunkID && math.Abs(ref[g.ChunkID]-ref[w.ChunkID]) > 1e-9) {
								t.Fatalf("%s rank %d: chunk %d score %.15f; the statement's chunk %d score %.15f",
									what, i+1, g.ChunkID, g.Score, w.ChunkID, w.Score)
							}
						}
					}
				}
			}
		}
	}
	if statement == nil {
		check("statement")
		return
	}
	before := s.kw.answered.Load()
	x := s.kw.cur.Load()
	if x == nil || x.nDead.Load() != 0 {
		t.Fatalf("keyword index %v before the queries", x)
	}
	check("with tail and dead rows")
	if s.kw.answered.Load() == before {
		t.Fatal("the in-memory index answered no query")
	}
	if s.kw.cur.Load() != x || x.nDead.Load() == 0 {
		t.Fatalf("the index was rebuilt or found no dead rows (%d)", x.nDead.Load())
	}
	t.Logf("%d queries answered from the index; %d of its %d rows found dead; tail after chunk %d",
		s.kw.answered.Load()-before, x.nDead.Load(), len(x.ids), x.seq)
	s.kw.cur.Store(nil)
	if rows, _, err := s.WaitKeywordIndex(ctx); err != nil || rows != len(texts) {
		t.Fatalf("keyword index rebuilt with %d rows (%v); the store has %d chunks", rows, err, len(texts))
	}
	check("rebuilt")
}

// TestKeywordIndexConcurrentWriters: copies of the postings built while another store (another process)
// commits and deletes documents miss no chunk and keep none that is gone — every build's snapshot is
// followed by its tail — so once the writers stop, the index's answer for every matching chunk (k above the
// corpus size) is the MaxScore statement's.
func TestKeywordIndexConcurrentWriters(t *testing.T) {
	url := testURL(t)
	schema := testSchema(t, url)
	writer := openStore(t, Options{Schema: schema, KeywordIndexMin: -1})
	s := openStore(t, Options{Schema: schema, KeywordIndexMin: 1})
	ctx := t.Context()
	coll, err := writer.EnsureCollection(ctx, "docs", "user:alice")
	if err != nil {
		t.Fatal(err)
	}
	vocab := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	space := rag.Space{Provider: "test", Model: "conc", Dim: 2}
	commit := func(r *rand.Rand, id string) error {
		cs := make([]rag.Chunk, 1+r.IntN(5))
		for i := range cs {
			ws := make([]string, 3+r.IntN(12))
			for j := range ws {
				ws[j] = vocab[r.IntN(len(vocab))]
			}
			cs[i] = rag.Chunk{Index: i, Text: strings.Join(ws, " "), Vector: []float32{1, 0}}
		}
		_, err := writer.CommitVersion(ctx, &rag.VersionCommit{DocumentID: id, ContentHash: fmt.Sprint(r.Uint64()), Space: space, Chunks: cs})
		return err
	}
	newDoc := func(r *rand.Rand) (string, error) {
		d := &rag.Document{CollectionID: coll.ID, Owner: "user:alice"}
		if err := writer.CreateDocument(ctx, d); err != nil {
			return "", err
		}
		return d.ID, commit(r, d.ID)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		if _, err := newDoc(r); err != nil {
			t.Fatal(err)
		}
	}
	if rows, _, err := s.WaitKeywordIndex(ctx); err != nil || rows == 0 {
		t.Fatalf("keyword index: %d rows, %v", rows, err)
	}
	terms := textproc.QueryTerms("alpha bravo charlie delta echo foxtrot golf hotel")
	done, stop := make(chan struct{}), make(chan struct{})
	builds := 0
	errs := make(chan error, 3)
	for w := range 2 {
		go func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			var mine []string
			var err error
			for i := 0; i < 40 && err == nil; i++ {
				switch {
				case len(mine) > 3 && i%5 == 4:
					err = writer.DeleteDocument(ctx, rag.LocalPrincipal, mine[0])
					mine = mine[1:]
				case len(mine) > 0 && i%2 == 1:
					err = commit(r, mine[r.IntN(len(mine))])
				default:
					var id string
					id, err = newDoc(r)
					mine = append(mine, id)
				}
			}
			errs <- err
		}()
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			s.kw.cur.Store(nil)
			if _, _, err := s.WaitKeywordIndex(ctx); err != nil {
				errs <- err
				return
			}
			builds++
			if _, err := s.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: terms, K: 10}); err != nil {
				errs <- err
				return
			}
		}
	}()
	var werr error
	for range 2 {
		if err := <-errs; err != nil && werr == nil {
			werr = err
		}
	}
	close(stop)
	<-done
	if werr != nil {
		t.Fatal(werr)
	}
	t.Logf("%d builds while the writers ran", builds)
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	before := s.kw.answered.Load()
	for _, q := range []string{"alpha", "bravo charlie", "hotel golf alpha delta", "echo"} {
		kq := rag.KeywordQuery{Terms: textproc.QueryTerms(q), K: 5000}
		got, err := s.KeywordCandidates(ctx, rag.LocalPrincipal, kq)
		if err != nil {
			t.Fatal(err)
		}
		want, err := writer.KeywordCandidates(ctx, rag.LocalPrincipal, kq)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d candidates from the index, %d from the statement", q, len(got), len(want))
		}
		// The same chunks with the same scores; chunks of equal scores may trade places by a rounding of the
		// statement's sums.
		byID := map[int64]float64{}
		for _, w := range want {
			byID[w.ChunkID] = w.Score
		}
		for i := range got {
			w, found := byID[got[i].ChunkID]
			if !found || math.Abs(got[i].Score-w) > 1e-12*math.Max(1, w) || math.Abs(got[i].Score-want[i].Score) > 1e-12*math.Max(1, w) {
				t.Fatalf("%q rank %d: chunk %d score %.15f from the index, chunk %d score %.15f from the statement",
					q, i+1, got[i].ChunkID, got[i].Score, want[i].ChunkID, want[i].Score)
			}
		}
	}
	if s.kw.answered.Load() == before {
		t.Fatal("the in-memory index answered no query")
	}
}
