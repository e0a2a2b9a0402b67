package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ragd/ragd/internal/migration"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/storetest"
	"github.com/ragd/ragd/internal/textproc"
)

func TestMigrate(t *testing.T) {
	t.Run("Idempotent", func(t *testing.T) {
		url := testURL(t)
		opts := Options{Schema: testSchema(t, url)}
		applied, err := Migrate(t.Context(), url, opts)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{latestVersion}; len(applied) == 0 || applied[len(applied)-1] != latestVersion || applied[0] != 1 {
			t.Fatalf("first Migrate applied %v, want 1..%v", applied, want)
		}
		applied, err = Migrate(t.Context(), url, opts)
		if err != nil || len(applied) != 0 {
			t.Fatalf("second Migrate applied %v, %v; want nothing", applied, err)
		}
		s := openStore(t, Options{Schema: opts.Schema, NoMigrate: true})
		if err := s.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("NoMigrateOnEmptySchema", func(t *testing.T) {
		url := testURL(t)
		_, err := Open(t.Context(), url, Options{Schema: testSchema(t, url), NoMigrate: true})
		if rag.ErrorCode(err) != rag.CodeDBError || !strings.Contains(rag.ErrorMessage(err), "ragd migrate") {
			t.Fatalf("Open without migrations: %v; want db_error telling to run ragd migrate", err)
		}
	})
	t.Run("ConcurrentOpen", func(t *testing.T) {
		// On PGlite the processes share one session, so this checks that the migration transactions do not
		// interleave; the advisory lock itself is checked on a plain PostgreSQL below.
		url := testURL(t)
		schema := testSchema(t, url)
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range errs {
			wg.Go(func() {
				s, err := Open(context.Background(), url, Options{Schema: schema})
				if err == nil {
					s.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, Options{Schema: schema, NoMigrate: true})
		var n int
		// One row a migration file (versions may leave gaps, so not latestVersion).
		if want := len(embeddedMigrations()); s.pool.QueryRow(t.Context(), s.q("SELECT count(*) FROM {S}.schema_migrations")).Scan(&n) != nil || n != want {
			t.Fatalf("schema_migrations has %d rows; want %d", n, want)
		}
	})
	t.Run("ConcurrentLock", func(t *testing.T) {
		url := plainPostgresURL(t)
		ms, err := migration.Load(fstest.MapFS{
			"0001_a.sql": {Data: []byte("CREATE TABLE {S}.a (id int PRIMARY KEY); INSERT INTO {S}.a VALUES (1);")},
			"0002_b.sql": {Data: []byte("CREATE TABLE {S}.b (id int); SELECT pg_sleep(0.2); INSERT INTO {S}.b SELECT id FROM {S}.a;")},
		})
		if err != nil {
			t.Fatal(err)
		}
		schema := testSchema(t, url)
		const n = 4
		applied := make([][]int, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				pool, err := pgxpool.New(context.Background(), url)
				if err != nil {
					errs[i] = err
					return
				}
				defer pool.Close()
				applied[i], errs[i] = migrate(context.Background(), pool, schema, ms, false)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		var all []int
		for _, a := range applied {
			all = append(all, a...)
		}
		if !slices.Equal(all, []int{1, 2}) {
			t.Fatalf("migrations applied by the %d processes: %v; want 1 and 2 once", n, applied)
		}
	})
}

// TestQuestionPassagesUpgrade: a question embedded before migration 0011 (storetest.QuestionPassagesUpgrade).
func TestQuestionPassagesUpgrade(t *testing.T) {
	s := openStore(t, Options{Schema: testSchema(t, testURL(t))})
	storetest.QuestionPassagesUpgrade(t, s, func(t *testing.T) {
		if _, err := s.pool.Exec(t.Context(), s.q("UPDATE {S}.questions SET passages = NULL")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestVersionCheck(t *testing.T) {
	v := func(s string) *string { return &s }
	for _, tc := range []struct {
		available, installed *string
		ok                   bool
		msg                  string
	}{
		{nil, nil, false, "does not have the pgvector extension"},
		{v("0.6.2"), nil, false, "pgvector 0.6.2 but ragd needs 0.7.0"},
		{v("0.7.0"), nil, true, ""},
		{v("0.10.1"), nil, true, ""},
		{v("0.8.0"), v("0.5.1"), false, "run ALTER EXTENSION vector UPDATE"},
		{nil, v("0.6.0"), false, "upgrade pgvector on the server"},
		{v("0.8.0"), v("0.8.0"), true, ""},
	} {
		err := checkVector(tc.available, tc.installed)
		if tc.ok != (err == nil) || (err != nil && (!errors.Is(err, ErrVector) || !strings.Contains(rag.ErrorMessage(err), tc.msg))) {
			t.Errorf("checkVector(%v, %v) = %v; want ok=%v with %q", deref(tc.available), deref(tc.installed), err, tc.ok, tc.msg)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestMissingVector(t *testing.T) {
	url := plainPostgresURL(t)
	var available *string
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pool.QueryRow(t.Context(), "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'").Scan(&available); err == nil {
		t.Skip("this PostgreSQL has pgvector")
	}
	_, err = Open(t.Context(), url, Options{Schema: testSchema(t, url)})
	if !errors.Is(err, ErrVector) || rag.ErrorCode(err) != rag.CodeDBError || !strings.Contains(rag.ErrorMessage(err), "install pgvector 0.7.0 or newer") {
		t.Fatalf("Open on a server without pgvector: %v", err)
	}
	// Nothing was created: the migration ran in one transaction.
	var exists bool
	if err := pool.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname LIKE 't\\_%')").Scan(&exists); err != nil || exists {
		t.Fatalf("a schema was left behind: %v, %v", exists, err)
	}
}

// corpus makes n documents of chunks chunks each, with random unit vectors of dim dimensions, committed in
// space; docs[i] gets tag "rare" when rare(i).
type corpus struct {
	docs    []*rag.Document
	vectors map[int64][]float32 // chunk ID → vector
	docOf   map[int64]string    // chunk ID → document ID
}

func randomUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

func buildCorpus(t *testing.T, s *Store, space rag.Space, n, chunks int, rare func(int) bool) *corpus {
	t.Helper()
	ctx := t.Context()
	r := rand.New(rand.NewPCG(1, 2))
	coll, err := s.EnsureCollection(ctx, "bench", "user:alice")
	if err != nil {
		t.Fatal(err)
	}
	c := &corpus{vectors: map[int64][]float32{}, docOf: map[int64]string{}}
	for i := range n {
		d := &rag.Document{CollectionID: coll.ID, ExternalID: fmt.Sprintf("doc-%d", i), Title: fmt.Sprintf("doc %d", i), Owner: "user:alice"}
		if rare(i) {
			d.Tags = []string{"rare"}
		}
		if err := s.CreateDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
		cs := make([]rag.Chunk, chunks)
		for j := range cs {
			cs[j] = rag.Chunk{Index: j, Text: fmt.Sprintf("chunk %d of document %d", j, i), Vector: randomUnit(r, space.Dim)}
		}
		if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: d.ExternalID, Space: space, Chunks: cs}); err != nil {
			t.Fatal(err)
		}
		list, err := s.ListChunks(ctx, rag.LocalPrincipal, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		for j, ch := range list {
			c.vectors[ch.ID] = cs[j].Vector
			c.docOf[ch.ID] = d.ID
		}
		c.docs = append(c.docs, d)
	}
	return c
}

// exactTop returns the k chunks nearest to q among those keep accepts, by brute force.
func (c *corpus) exactTop(q []float32, k int, keep func(docID string) bool) []int64 {
	type sc struct {
		id  int64
		sim float64
	}
	var all []sc
	for id, v := range c.vectors {
		if !keep(c.docOf[id]) {
			continue
		}
		var dot float64
		for i := range v {
			dot += float64(v[i]) * float64(q[i])
		}
		all = append(all, sc{id, dot})
	}
	sort.Slice(all, func(i, j int) bool {
		return all[i].sim > all[j].sim || all[i].sim == all[j].sim && all[i].id < all[j].id
	})
	var out []int64
	for i := 0; i < k && i < len(all); i++ {
		out = append(out, all[i].id)
	}
	return out
}

func recall(got []rag.Candidate, want []int64) float64 {
	hit := 0
	for _, c := range got {
		if slices.Contains(want, c.ChunkID) {
			hit++
		}
	}
	return float64(hit) / float64(len(want))
}

// TestFilteredVectorSearch checks that a filter keeping 5% of the rows still yields k results through the
// HNSW index (iterative scan), that without the iterative scan it would not, and that the exact path for
// small filtered sets returns exactly the brute-force answer. 2000 vectors: PGlite builds HNSW slowly.
func TestFilteredVectorSearch(t *testing.T) {
	s := openStore(t, Options{EfSearch: 10, ExactBelow: 1})
	space := rag.Space{Provider: "test", Model: "filter", Dim: 32}
	isRare := func(i int) bool { return i%20 == 7 } // 5 of 100 documents
	c := buildCorpus(t, s, space, 100, 20, isRare)
	rareDocs := map[string]bool{}
	for i, d := range c.docs {
		if isRare(i) {
			rareDocs[d.ID] = true
		}
	}
	filter := rag.Filter{Tags: []string{"rare"}}
	r := rand.New(rand.NewPCG(3, 4))
	const k, queries = 10, 10
	qs := make([][]float32, queries)
	for i := range qs {
		qs[i] = randomUnit(r, space.Dim)
	}
	run := func(p rag.Principal, f rag.Filter) (minLen int, meanRecall float64) {
		minLen = k
		for _, q := range qs {
			got, err := s.VectorCandidates(t.Context(), p, rag.VectorQuery{Space: space, Vector: q, Filter: f, K: k})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range got {
				if !rareDocs[c.docOf[g.ChunkID]] {
					t.Fatalf("chunk %d of a document outside the filter", g.ChunkID)
				}
			}
			minLen = min(minLen, len(got))
			meanRecall += recall(got, c.exactTop(q, k, func(id string) bool { return rareDocs[id] })) / queries
		}
		return minLen, meanRecall
	}

	t.Run("IterativeScan", func(t *testing.T) {
		if !s.iterative {
			t.Skip("pgvector < 0.8 has no iterative index scans")
		}
		plan := s.explainVector(t, space, qs[0], filter, k)
		if !strings.Contains(plan, "vectors_") || !strings.Contains(plan, "hnsw") {
			t.Fatalf("filtered search does not use the HNSW index:\n%s", plan)
		}
		n, rec := run(rag.LocalPrincipal, filter)
		t.Logf("iterative scan, ef_search 10, 5%% filter: min %d results, recall@10 %.2f", n, rec)
		if n != k {
			t.Errorf("a query returned %d results, want %d", n, k)
		}
		if rec < 0.8 {
			t.Errorf("recall@10 %.2f against exact search, want ≥ 0.8", rec)
		}
		// The same query as a principal who can read only the rare documents (visibility, not a filter).
		if err := grantRare(t, s, c, rareDocs); err != nil {
			t.Fatal(err)
		}
		n, _ = run(rag.Principal{ID: "user:reader"}, rag.Filter{})
		if n != k {
			t.Errorf("permission-restricted query returned %d results, want %d", n, k)
		}
	})
	t.Run("WithoutIterativeScan", func(t *testing.T) {
		// Shows what the iterative scan is for: the index returns ef_search rows and the filter keeps ~5% of them.
		it := s.iterative
		s.iterative = false
		defer func() { s.iterative = it }()
		n, _ := run(rag.LocalPrincipal, filter)
		if n >= k {
			t.Errorf("without iterative scan every query still returned %d results: the test does not exercise the filter", n)
		}
	})
	t.Run("PerQueryEfSearch", func(t *testing.T) {
		// The same filtered queries without the iterative scan, each asking for ef_search 1000: the index
		// now returns half the corpus, of which the filter keeps ~50 rows, so every query gets k results.
		it := s.iterative
		s.iterative = false
		defer func() { s.iterative = it }()
		for _, q := range qs {
			got, err := s.VectorCandidates(t.Context(), rag.LocalPrincipal, rag.VectorQuery{Space: space, Vector: q, Filter: filter, K: k, EfSearch: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != k {
				t.Fatalf("ef_search 1000 for this query: %d results, want %d (the store's ef_search 10 was used?)", len(got), k)
			}
		}
	})
	t.Run("ExactBelowThreshold", func(t *testing.T) {
		s.opts.ExactBelow = 100 // the 5 rare documents have 100 chunks
		defer func() { s.opts.ExactBelow = 1 }()
		for _, q := range qs {
			got, err := s.VectorCandidates(t.Context(), rag.LocalPrincipal, rag.VectorQuery{Space: space, Vector: q, Filter: filter, K: k})
			if err != nil {
				t.Fatal(err)
			}
			want := c.exactTop(q, k, func(id string) bool { return rareDocs[id] })
			var ids []int64
			for _, g := range got {
				ids = append(ids, g.ChunkID)
			}
			if !slices.Equal(ids, want) {
				t.Fatalf("exact filtered search = %v, want %v", ids, want)
			}
		}
	})
}

// grantRare makes the rare documents readable by user:reader.
func grantRare(t *testing.T, s *Store, c *corpus, rare map[string]bool) error {
	for _, d := range c.docs {
		if rare[d.ID] {
			if _, err := s.UpdateDocument(t.Context(), rag.LocalPrincipal, d.ID, rag.DocumentUpdate{Readers: []string{"user:reader"}}); err != nil {
				return err
			}
		}
	}
	return nil
}

// explainVector returns the plan of the HNSW form of a filtered vector search.
func (s *Store) explainVector(t *testing.T, space rag.Space, q []float32, f rag.Filter, k int) string {
	t.Helper()
	sp, err := s.space(t.Context(), space, false)
	if err != nil || sp == nil {
		t.Fatalf("space: %v", err)
	}
	var a args
	vec := a.add(vectorParam(q))
	conds, err := docConditions(&a, rag.LocalPrincipal, f)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(t.Context())
	if _, err := tx.Exec(t.Context(), `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('enable_sort', 'off', true)`); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(t.Context(), "EXPLAIN "+s.q(s.vectorSQL(sp, vec, conds, k, false)), a...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	return strings.Join(plan, "\n")
}

// bm25Reference scores query terms over chunk texts exactly as FTS5's bm25() does.
func bm25Reference(texts map[int64]string, terms []string) map[int64]float64 {
	tf := map[int64]map[string]int{}
	dl := map[int64]int{}
	df := map[string]int{}
	total := 0
	for id, text := range texts {
		ts := textproc.IndexTerms(text)
		dl[id] = len(ts)
		total += len(ts)
		tf[id] = map[string]int{}
		for _, x := range ts {
			if tf[id][x] == 0 {
				df[x]++
			}
			tf[id][x]++
		}
	}
	n := float64(len(texts))
	avg := float64(total) / n
	out := map[int64]float64{}
	for id := range texts {
		var score float64
		for _, q := range terms {
			f := float64(tf[id][q])
			if f == 0 {
				continue
			}
			idf := math.Log((n - float64(df[q]) + 0.5) / (float64(df[q]) + 0.5))
			if idf <= 0 {
				idf = 1e-6
			}
			score += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(dl[id])/avg))
		}
		if score > 0 {
			out[id] = score
		}
	}
	return out
}

// TestBM25Statistics commits, re-commits and deletes documents from several goroutines and then checks that
// the corpus statistics equal a recount and that every keyword score equals a reference BM25 computed from
// the chunks that remain.
func TestBM25Statistics(t *testing.T) {
	s := openStore(t, Options{})
	ctx := t.Context()
	coll, err := s.EnsureCollection(ctx, "docs", "user:alice")
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields("river delta basin sediment flood plain levee channel meander erosion tide estuary marsh " +
		"dune glacier moraine valley canyon plateau ridge summit slope")
	space := rag.Space{Provider: "test", Model: "bm25", Dim: 4}
	text := func(r *rand.Rand) string {
		n := 3 + r.IntN(12)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[int(math.Abs(r.NormFloat64()*6))%len(words)] // skewed: a few frequent words
		}
		return strings.Join(ws, " ")
	}
	commit := func(r *rand.Rand, d *rag.Document) error {
		cs := make([]rag.Chunk, 1+r.IntN(4))
		for i := range cs {
			cs[i] = rag.Chunk{Index: i, Text: text(r), Vector: []float32{1, 0, 0, 0}}
		}
		_, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: fmt.Sprint(r.Uint64()), Space: space, Chunks: cs})
		return err
	}
	const workers, perWorker = 4, 12
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 99))
			for i := range perWorker {
				d := &rag.Document{CollectionID: coll.ID, ExternalID: fmt.Sprintf("w%d-%d", w, i), Owner: "user:alice"}
				if err := s.CreateDocument(ctx, d); err != nil {
					errs[w] = err
					return
				}
				if err := commit(r, d); err != nil {
					errs[w] = err
					return
				}
				switch i % 4 {
				case 1: // a new version
					errs[w] = commit(r, d)
				case 2: // deleted
					errs[w] = s.DeleteDocument(ctx, rag.LocalPrincipal, d.ID)
				}
				if errs[w] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}

	var statN, statTerms, realN, realTerms int64
	if err := s.pool.QueryRow(ctx, s.q(`SELECT (SELECT sum(chunks) FROM {S}.corpus_stats), (SELECT sum(terms) FROM {S}.corpus_stats),
		(SELECT count(*) FROM {S}.chunks), (SELECT COALESCE(sum(term_count), 0) FROM {S}.chunks)`)).Scan(&statN, &statTerms, &realN, &realTerms); err != nil {
		t.Fatal(err)
	}
	if statN != realN || statTerms != realTerms {
		t.Fatalf("corpus_stats say %d chunks / %d terms, the chunks are %d / %d", statN, statTerms, realN, realTerms)
	}
	var orphans int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM {S}.postings p WHERE NOT EXISTS (SELECT 1 FROM {S}.chunks c WHERE c.id = p.chunk_id)`)).Scan(&orphans); err != nil || orphans != 0 {
		t.Fatalf("%d postings of deleted chunks, %v", orphans, err)
	}
	if realN == 0 {
		t.Fatal("no chunks left")
	}

	texts := map[int64]string{}
	page, err := s.ListDocuments(ctx, rag.LocalPrincipal, rag.DocumentQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if want := workers * (perWorker - perWorker/4); page.Total != want {
		t.Fatalf("%d documents left, want %d", page.Total, want)
	}
	for _, d := range page.Documents {
		cs, err := s.ListChunks(ctx, rag.LocalPrincipal, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			texts[c.ID] = c.Text
		}
	}
	for _, q := range []string{"river", "flood delta", "glacier summit slope", "meander erosion tide marsh", "river river basin"} {
		terms := textproc.QueryTerms(q)
		ref := bm25Reference(texts, terms)
		got, err := s.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: terms, K: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(ref) {
			t.Errorf("%q: %d candidates, reference has %d", q, len(got), len(ref))
		}
		for _, g := range got {
			if want := ref[g.ChunkID]; math.Abs(g.Score-want) > 1e-9*math.Max(1, want) {
				t.Errorf("%q: chunk %d score %.12f, reference %.12f", q, g.ChunkID, g.Score, want)
			}
		}
	}
}
