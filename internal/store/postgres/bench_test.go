package postgres

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// BenchmarkCandidates measures the store's candidate queries on a synthetic corpus built from the Cranfield
// abstracts (../shared/eval): chunks are 60–140-word windows of the abstracts, vectors are bag-of-words sums
// of random word vectors (so they cluster like text does), queries are the 225 Cranfield queries, and one
// document in twenty carries the tag "rare" (the 5% filter); one in a hundred is granted to user "one", who
// reads nothing else (the Grant1pct cases, whose top-k must stay full). It reports p50/p95 latency per query and, for
// the HNSW paths, recall@10 against exact search at the configured ef_search.
//
// It runs against any server, unchanged:
//
//	RAGD_DATABASE_URL       the server (falls back to RAGD_TEST_DATABASE_URL; skipped when neither is set)
//	RAGD_BENCH_CHUNKS       corpus size (default 2000; the issue asks for 100000 on a native server)
//	RAGD_BENCH_DIM          vector dimension (default 768)
//	RAGD_BENCH_EF           hnsw.ef_search (default: the hash embedder's DefaultEfSearch, 400)
//	RAGD_BENCH_EXACT_BELOW  the store's ExactBelow (default: the store's, 2000)
//	RAGD_BENCH_REBUILD=1    rebuild the corpus (it is kept in schema ragd_bench_<chunks>_<dim>_g1 between runs)
//	RAGD_BENCH_RECALL=0     skip the recall measurement (200 exact searches; the keyword cases do not need it)
//	RAGD_BENCH_EF_CURVE     e.g. "40,100,200,400,800": log recall@10 and p50/p95 of the unfiltered and 5% filtered
//	                        vector searches at each ef_search (exact results computed once)
//	RAGD_BENCH_KEYWORD_INDEX_MIN  the store's KeywordIndexMin (default: the store's, 10000; -1: the MaxScore
//	                        statement alone, to compare); the in-memory keyword index is built before the queries
//	RAGD_BENCH_READER_ROLE  the store's ReaderRole: row-level security on for user one's reads (default off,
//	                        to compare; ragd itself turns it on by default)
//
// e.g. RAGD_DATABASE_URL=postgres://… RAGD_BENCH_CHUNKS=100000 go test -run '^$' -bench Candidates -benchtime 200x ./internal/store/postgres/
func BenchmarkCandidates(b *testing.B) {
	f := benchSetup(b)
	ctx := context.Background()
	rare := rag.Filter{Tags: []string{"rare"}}
	const k = 10
	// hybrid is what one search asks of the store as p: both candidate lists (retrieval fetches 4·k of
	// each) and the hits.
	hybrid := func(p rag.Principal) func(q benchQuery, fl rag.Filter) error {
		return func(q benchQuery, fl rag.Filter) error {
			vc, err := f.s.VectorCandidates(ctx, p, rag.VectorQuery{Space: f.space, Vector: q.vec, Filter: fl, K: 4 * k})
			if err != nil {
				return err
			}
			kc, err := f.s.KeywordCandidates(ctx, p, rag.KeywordQuery{Terms: q.terms, Filter: fl, K: 4 * k})
			if err != nil {
				return err
			}
			ids := make([]int64, 0, 2*k)
			for i := 0; i < k && i < len(vc); i++ {
				ids = append(ids, vc[i].ChunkID)
			}
			for i := 0; i < k && i < len(kc); i++ {
				ids = append(ids, kc[i].ChunkID)
			}
			_, err = f.s.Hits(ctx, p, ids)
			return err
		}
	}
	cases := []struct {
		name   string
		filter rag.Filter
		run    func(q benchQuery, f rag.Filter) error
	}{
		{"Vector", rag.Filter{}, func(q benchQuery, fl rag.Filter) error {
			_, err := f.s.VectorCandidates(ctx, rag.LocalPrincipal, rag.VectorQuery{Space: f.space, Vector: q.vec, Filter: fl, K: k})
			return err
		}},
		{"VectorRare5pct", rare, nil},
		{"Keyword", rag.Filter{}, func(q benchQuery, fl rag.Filter) error {
			_, err := f.s.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: q.terms, Filter: fl, K: k})
			return err
		}},
		{"KeywordRare5pct", rare, nil},
		{"Hybrid", rag.Filter{}, hybrid(rag.LocalPrincipal)},
	}
	cases[1].run, cases[3].run = cases[0].run, cases[2].run
	// Under a 1% grant, top-k stays full: k candidates (the granted passages outnumber k from 2,000 chunks
	// on, and the Cranfield words recur).
	full := func(n int, err error) error {
		if err == nil && n != k && f.chunks >= 2000 {
			err = fmt.Errorf("%d candidates under a 1%% grant, want %d", n, k)
		}
		return err
	}
	cases = append(cases,
		struct {
			name   string
			filter rag.Filter
			run    func(q benchQuery, f rag.Filter) error
		}{"VectorGrant1pct", rag.Filter{}, func(q benchQuery, fl rag.Filter) error {
			c, err := f.s.VectorCandidates(ctx, benchOne, rag.VectorQuery{Space: f.space, Vector: q.vec, Filter: fl, K: k})
			return full(len(c), err)
		}},
		struct {
			name   string
			filter rag.Filter
			run    func(q benchQuery, f rag.Filter) error
		}{"KeywordGrant1pct", rag.Filter{}, func(q benchQuery, fl rag.Filter) error {
			_, err := f.s.KeywordCandidates(ctx, benchOne, rag.KeywordQuery{Terms: q.terms, Filter: fl, K: k})
			return err
		}},
		struct {
			name   string
			filter rag.Filter
			run    func(q benchQuery, f rag.Filter) error
		}{"HybridGrant1pct", rag.Filter{}, hybrid(benchOne)})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := f.queries[i%len(f.queries)]
				i++
				start := time.Now()
				if err := c.run(q, c.filter); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			p50, p95 := percentiles(lat)
			b.ReportMetric(p50, "p50_ms")
			b.ReportMetric(p95, "p95_ms")
			switch c.name {
			case "Vector":
				b.ReportMetric(f.recall, "recall@10")
			case "VectorRare5pct":
				b.ReportMetric(f.recallRare, "recall@10")
			}
		})
	}
}

// benchOne reads 1% of the corpus through read grants.
var benchOne = rag.Principal{ID: "user:one"}

type benchQuery struct {
	text  string
	terms []string
	vec   []float32
}

type benchFixture struct {
	s                  *Store
	space              rag.Space
	queries            []benchQuery
	recall, recallRare float64
	chunks             int
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// benchSetup opens the store in the benchmark's schema, building the corpus when it is not there, and
// measures recall once.
func benchSetup(b *testing.B) *benchFixture {
	b.Helper()
	url := os.Getenv("RAGD_DATABASE_URL")
	if url == "" {
		url = os.Getenv("RAGD_TEST_DATABASE_URL")
	}
	if url == "" {
		b.Skip("set RAGD_DATABASE_URL (or RAGD_TEST_DATABASE_URL) to a PostgreSQL with pgvector")
	}
	chunks, dim := envInt("RAGD_BENCH_CHUNKS", 2000), envInt("RAGD_BENCH_DIM", 768)
	ctx := context.Background()
	schema := fmt.Sprintf("ragd_bench_%d_%d_g1", chunks, dim)
	if os.Getenv("RAGD_BENCH_REBUILD") == "1" {
		dropSchema(b, url, schema)
	}
	// The corpus's vectors are bags of words, as the hash embedder's are: searched with its default ef_search.
	s, err := Open(ctx, url, Options{Schema: schema, EfSearch: envInt("RAGD_BENCH_EF", DefaultEfSearch(rag.Space{Provider: "hash"})),
		ExactBelow: envInt("RAGD_BENCH_EXACT_BELOW", 0), ReaderRole: os.Getenv("RAGD_BENCH_READER_ROLE"),
		KeywordIndexMin: keywordIndexMin()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	f := &benchFixture{s: s, space: rag.Space{Provider: "bench", Model: "bow", Dim: dim}, chunks: chunks}
	docs, queries := cranfield(b)
	wv := wordVectors(dim)
	for _, q := range queries {
		f.queries = append(f.queries, benchQuery{text: q, terms: textproc.QueryTerms(q), vec: wv.embed(q)})
	}
	st, err := s.SpaceStats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if st.Spaces[f.space.ID()] < chunks {
		if st.Chunks > 0 {
			b.Fatalf("schema %s holds a partial corpus (%d chunks): rerun with RAGD_BENCH_REBUILD=1", schema, st.Chunks)
		}
		buildBenchCorpus(b, s, f.space, docs, wv, chunks)
	}
	start := time.Now()
	rows, bytes, err := s.WaitKeywordIndex(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if rows > 0 {
		b.Logf("in-memory keyword index: %d chunks, %.1f MiB, built in %v", rows, float64(bytes)/(1<<20), time.Since(start).Round(time.Millisecond))
	}
	if os.Getenv("RAGD_BENCH_RECALL") == "0" {
		return f
	}
	f.recall = benchRecall(b, f, rag.Filter{})
	f.recallRare = benchRecall(b, f, rag.Filter{Tags: []string{"rare"}})
	if curve := os.Getenv("RAGD_BENCH_EF_CURVE"); curve != "" {
		benchEfCurve(b, f, curve)
	}
	b.Logf("%d chunks × %d dims on %s: recall@10 at ef_search %d: %.3f unfiltered, %.3f with the 5%% filter (%s)",
		chunks, dim, serverName(b, s), s.opts.EfSearch, f.recall, f.recallRare, rarePath(chunks, s.opts.ExactBelow))
	return f
}

// keywordIndexMin is RAGD_BENCH_KEYWORD_INDEX_MIN (0, the store's default, when unset).
func keywordIndexMin() int {
	n, _ := strconv.Atoi(os.Getenv("RAGD_BENCH_KEYWORD_INDEX_MIN"))
	return n
}

func serverName(b *testing.B, s *Store) string {
	var v string
	if err := s.pool.QueryRow(context.Background(), "SELECT version()").Scan(&v); err != nil {
		b.Fatal(err)
	}
	if i := strings.Index(v, " on "); i > 0 {
		v = v[:i]
	}
	return v
}

func dropSchema(b *testing.B, url, schema string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		b.Fatal(err)
	}
}

// cranfield reads the abstracts and queries of ../shared/eval/cranfield.
func cranfield(b *testing.B) (docs, queries []string) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "eval", "cranfield")
	read := func(name string) []string {
		fh, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			b.Skipf("the Cranfield set is not there: %v", err)
		}
		defer fh.Close()
		var out []string
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var rec struct{ Text string }
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				b.Fatal(err)
			}
			out = append(out, rec.Text)
		}
		return out
	}
	return read("corpus.jsonl"), read("queries.jsonl")
}

// wordVecs gives every word a fixed random direction; a text's vector is the normalised sum of its words'.
type wordVecs struct {
	dim   int
	cache map[string][]float32
}

func wordVectors(dim int) *wordVecs { return &wordVecs{dim: dim, cache: map[string][]float32{}} }

func (w *wordVecs) embed(text string) []float32 {
	sum := make([]float64, w.dim)
	for _, t := range textproc.IndexTerms(text) {
		v, ok := w.cache[t]
		if !ok {
			var seed uint64
			for _, c := range []byte(t) {
				seed = seed*131 + uint64(c)
			}
			r := rand.New(rand.NewPCG(seed, 7))
			v = make([]float32, w.dim)
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
			w.cache[t] = v
		}
		for i, x := range v {
			sum[i] += float64(x)
		}
	}
	var n float64
	for _, x := range sum {
		n += x * x
	}
	n = math.Sqrt(n)
	out := make([]float32, w.dim)
	for i := range sum {
		if n > 0 {
			out[i] = float32(sum[i] / n)
		}
	}
	return out
}

// buildBenchCorpus commits documents of ten chunks each through CommitVersion (the real write path) until
// the corpus has n chunks, and logs the load rate and the HNSW index size.
func buildBenchCorpus(b *testing.B, s *Store, space rag.Space, abstracts []string, wv *wordVecs, n int) {
	ctx := context.Background()
	var words []string
	for _, a := range abstracts {
		words = append(words, strings.Fields(a)...)
	}
	r := rand.New(rand.NewPCG(11, 13))
	coll, err := s.EnsureCollection(ctx, "bench", "user:bench")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	const perDoc = 10
	for d := 0; d*perDoc < n; d++ {
		doc := &rag.Document{CollectionID: coll.ID, ExternalID: fmt.Sprintf("doc-%06d", d), Title: fmt.Sprintf("bench %d", d),
			MediaType: "text/plain", Owner: "user:bench"}
		if d%20 == 7 {
			doc.Tags = []string{"rare"}
		} else if d%100 == 50 {
			doc.Readers = []string{benchOne.ID} // 1% of the corpus, read only by user one (and its owner)
		}
		if err := s.CreateDocument(ctx, doc); err != nil {
			b.Fatal(err)
		}
		cs := make([]rag.Chunk, min(perDoc, n-d*perDoc))
		for i := range cs {
			w := 60 + r.IntN(81)
			at := r.IntN(len(words) - w)
			text := strings.Join(words[at:at+w], " ")
			cs[i] = rag.Chunk{Index: i, Kind: rag.KindText, Text: text, Vector: wv.embed(text)}
		}
		if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: doc.ID, ContentHash: doc.ExternalID, Space: space, Chunks: cs}); err != nil {
			b.Fatal(err)
		}
	}
	took := time.Since(start)
	sp, err := s.space(ctx, space, false)
	if err != nil {
		b.Fatal(err)
	}
	var idx, table, postings int64
	if err := s.pool.QueryRow(ctx, s.q(fmt.Sprintf(`SELECT pg_relation_size('%[1]s.vectors_%[2]d_hnsw'), pg_total_relation_size('%[1]s.vectors_%[2]d'),
		pg_total_relation_size('%[1]s.postings')`, pgx.Identifier{s.opts.Schema}.Sanitize(), sp.id))).Scan(&idx, &table, &postings); err != nil {
		b.Fatal(err)
	}
	// The state autovacuum leaves a native server in (PGlite has no autovacuum): statistics, and the
	// visibility map that lets the postings be read by index-only scans.
	for _, table := range []string{"documents", "chunks", "postings", fmt.Sprintf("vectors_%d", sp.id)} {
		if _, err := s.pool.Exec(ctx, s.q("VACUUM ANALYZE {S}."+table)); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("loaded %d chunks in %v (%.0f chunks/s, bulk mode %s); HNSW index %.1f MiB, vector table with index %.1f MiB, postings %.1f MiB",
		n, took.Round(time.Second), float64(n)/took.Seconds(), s.bulk, float64(idx)/(1<<20), float64(table)/(1<<20), float64(postings)/(1<<20))
}

// benchEfCurve logs, for each ef_search of the comma-separated list, the recall@10 and latency of the first
// 100 queries' vector searches, unfiltered and with the 5% filter.
func benchEfCurve(b *testing.B, f *benchFixture, list string) {
	ctx := context.Background()
	qs := f.queries[:min(100, len(f.queries))]
	for _, filter := range []rag.Filter{{}, {Tags: []string{"rare"}}} {
		exact := make([][]int64, len(qs))
		for i, q := range qs {
			want, err := f.s.vectorCandidates(ctx, rag.LocalPrincipal, rag.VectorQuery{Space: f.space, Vector: q.vec, Filter: filter, K: 10}, true)
			if err != nil {
				b.Fatal(err)
			}
			for _, w := range want {
				exact[i] = append(exact[i], w.ChunkID)
			}
		}
		for _, e := range strings.Split(list, ",") {
			ef, err := strconv.Atoi(strings.TrimSpace(e))
			if err != nil {
				b.Fatal(err)
			}
			var sum float64
			var lat []time.Duration
			for i, q := range qs {
				start := time.Now()
				got, err := f.s.VectorCandidates(ctx, rag.LocalPrincipal, rag.VectorQuery{Space: f.space, Vector: q.vec, Filter: filter, K: 10, EfSearch: ef})
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				if len(exact[i]) > 0 {
					sum += recall(got, exact[i])
				}
			}
			p50, p95 := percentiles(lat)
			b.Logf("ef_search %d, filter %v: recall@10 %.3f, p50 %.2f ms, p95 %.2f ms", ef, filter.Tags, sum/float64(len(qs)), p50, p95)
		}
	}
}

// benchRecall is the mean recall@10 of the index path against exact search over the benchmark queries.
func benchRecall(b *testing.B, f *benchFixture, filter rag.Filter) float64 {
	ctx := context.Background()
	var sum float64
	qs := f.queries
	if len(qs) > 100 {
		qs = qs[:100]
	}
	for _, q := range qs {
		vq := rag.VectorQuery{Space: f.space, Vector: q.vec, Filter: filter, K: 10}
		got, err := f.s.vectorCandidates(ctx, rag.LocalPrincipal, vq, false)
		if err != nil {
			b.Fatal(err)
		}
		want, err := f.s.vectorCandidates(ctx, rag.LocalPrincipal, vq, true)
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]int64, len(want))
		for i, w := range want {
			ids[i] = w.ChunkID
		}
		if len(ids) > 0 {
			sum += recall(got, ids)
		}
	}
	return sum / float64(len(qs))
}

// percentiles returns the 50th and 95th percentiles of ds in milliseconds.
func percentiles(ds []time.Duration) (p50, p95 float64) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) float64 {
		return float64(s[min(len(s)-1, int(p*float64(len(s))))]) / float64(time.Millisecond)
	}
	return at(0.50), at(0.95)
}

// rarePath says which path the 5% filter takes: exact below ExactBelow chunks, the iterative index scan above.
func rarePath(chunks, exactBelow int) string {
	if chunks/20 <= exactBelow {
		return fmt.Sprintf("exact: %d matching chunks ≤ ExactBelow %d", chunks/20, exactBelow)
	}
	return fmt.Sprintf("HNSW iterative scan: %d matching chunks > ExactBelow %d", chunks/20, exactBelow)
}
