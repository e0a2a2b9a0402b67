package sqlite_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/textproc"
)

// The benchmark corpus: 1,000 documents × 100 chunks of 768-d random normalised vectors and ~120 words of
// Zipf-distributed synthetic vocabulary each. 5% of the documents carry the tag "rare" and are readable by
// group "team", and another 1% are granted to user "one" (the others are read only by their owner), for the
// filtered and permission-restricted runs.
const (
	benchDocs      = 1000
	benchChunks    = 100
	benchDim       = 768
	benchWords     = 120
	benchVocab     = 20000
	benchRareEvery = 20
)

var benchSpace = rag.Space{Provider: "bench", Model: "random", Dim: benchDim}

var (
	benchOnce       sync.Once
	benchStore      *sqlite.Store
	benchVocabulary []string
	benchErr        error
)

func benchWord(r *rand.Rand) string {
	const cons, vows = "bcdfghjklmnprstvz", "aeiou"
	var b strings.Builder
	for range 2 + r.IntN(3) {
		b.WriteByte(cons[r.IntN(len(cons))])
		b.WriteByte(vows[r.IntN(len(vows))])
	}
	return b.String()
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

// openBenchStore builds the corpus once per machine in $RAGD_BENCH_DIR (default: a folder in the temp
// dir, kept between runs because building it takes minutes) and opens it.
func openBenchStore(b *testing.B) *sqlite.Store {
	benchOnce.Do(func() {
		r := rand.New(rand.NewPCG(1, 2))
		seen := map[string]bool{}
		for len(benchVocabulary) < benchVocab {
			w := benchWord(r)
			if !seen[w] {
				seen[w] = true
				benchVocabulary = append(benchVocabulary, w)
			}
		}
		dir := os.Getenv("RAGD_BENCH_DIR")
		if dir == "" {
			dir = filepath.Join(os.TempDir(), fmt.Sprintf("ragd-sqlite-bench-%dx%d-grants", benchDocs*benchChunks, benchDim))
		}
		ctx := context.Background()
		marker := filepath.Join(dir, "complete")
		if _, err := os.Stat(marker); err != nil {
			os.RemoveAll(dir)
			start := time.Now()
			if benchErr = buildBenchCorpus(ctx, dir, r); benchErr != nil {
				return
			}
			b.Logf("built %d chunks in %s", benchDocs*benchChunks, time.Since(start).Round(time.Second))
			os.WriteFile(marker, nil, 0o644)
		}
		benchStore, benchErr = sqlite.Open(ctx, dir, sqlite.Options{})
		if benchErr != nil {
			return
		}
		// Measure the keyword index as a running Store leaves it once writes pause (one segment), not
		// while its background merge runs.
		start := time.Now()
		if benchErr = benchStore.MergeKeywordIndex(ctx); benchErr != nil {
			return
		}
		b.Logf("keyword index merged in %s", time.Since(start).Round(time.Millisecond))
		// Load the vector cache (a one-time cost per process, reported separately).
		start = time.Now()
		_, benchErr = benchStore.VectorCandidates(ctx, rag.LocalPrincipal, rag.VectorQuery{Space: benchSpace, Vector: randomUnit(r, benchDim), K: 1})
		b.Logf("vector cache loaded in %s", time.Since(start).Round(time.Millisecond))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchStore
}

func buildBenchCorpus(ctx context.Context, dir string, r *rand.Rand) error {
	s, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	coll, err := s.EnsureCollection(ctx, "bench", "owner")
	if err != nil {
		return err
	}
	zipf := rand.NewZipf(r, 1.07, 2, benchVocab-1)
	for i := range benchDocs {
		d := &rag.Document{CollectionID: coll.ID, ExternalID: fmt.Sprintf("doc-%04d", i), Title: fmt.Sprintf("Document %d", i),
			MediaType: "text/plain", Owner: "owner"}
		if i%benchRareEvery == 0 {
			d.Tags, d.Readers = []string{"rare"}, []string{"group:team"}
		} else if i%100 == 50 {
			d.Readers = []string{benchOne.ID}
		}
		if err := s.CreateDocument(ctx, d); err != nil {
			return err
		}
		chunks := make([]rag.Chunk, benchChunks)
		for j := range chunks {
			words := make([]string, benchWords)
			for k := range words {
				words[k] = benchVocabulary[zipf.Uint64()]
			}
			chunks[j] = rag.Chunk{Index: j, Kind: rag.KindText, Text: strings.Join(words, " "), Vector: randomUnit(r, benchDim)}
		}
		if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: fmt.Sprint(i), Title: d.Title,
			MediaType: d.MediaType, Space: benchSpace, Chunks: chunks}); err != nil {
			return err
		}
	}
	return nil
}

// benchQuery is one synthetic search: a random vector and three words (one frequent, two of middling
// frequency) as the analyzer sees them.
type benchQuery struct {
	vec   []float32
	terms []string
}

func benchQueries(n int) []benchQuery {
	r := rand.New(rand.NewPCG(3, 4))
	out := make([]benchQuery, n)
	for i := range out {
		words := []string{benchVocabulary[2+r.IntN(20)], benchVocabulary[50+r.IntN(2000)], benchVocabulary[50+r.IntN(2000)]}
		out[i] = benchQuery{randomUnit(r, benchDim), textproc.QueryTerms(strings.Join(words, " "))}
	}
	return out
}

// reportLatency reports p50/p95 of per-query durations as custom metrics.
func reportLatency(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	pct := func(p float64) float64 {
		return float64(d[min(len(d)-1, int(math.Ceil(p*float64(len(d))))-1)].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

var (
	benchTeam = rag.Principal{ID: "user:member", Groups: []string{"team"}}
	// benchOne reads 1% of the corpus, by a read grant on 10 of its 1,000 documents.
	benchOne  = rag.Principal{ID: "user:one"}
	benchRare = rag.Filter{Tags: []string{"rare"}}
)

func BenchmarkVectorCandidates(b *testing.B) {
	s := openBenchStore(b)
	qs := benchQueries(200)
	for _, tc := range []struct {
		name string
		p    rag.Principal
		f    rag.Filter
	}{
		{"All", rag.LocalPrincipal, rag.Filter{}},
		{"Filter5pct", rag.LocalPrincipal, benchRare},
		{"Visibility5pct", benchTeam, rag.Filter{}},
		{"Grant1pct", benchOne, rag.Filter{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := qs[i%len(qs)]
				i++
				start := time.Now()
				c, err := s.VectorCandidates(b.Context(), tc.p, rag.VectorQuery{Space: benchSpace, Vector: q.vec, Filter: tc.f, K: 50})
				lat = append(lat, time.Since(start))
				if err != nil || len(c) != 50 {
					b.Fatalf("%d candidates, %v", len(c), err)
				}
			}
			reportLatency(b, lat)
		})
	}
}

func BenchmarkKeywordCandidates(b *testing.B) {
	s := openBenchStore(b)
	qs := benchQueries(200)
	// full[i] is how many candidates query i must get under the 1% grant: k, or every matching passage of
	// the granted documents when fewer match (terms in more than half of all passages have BM25's floor
	// IDF and do not count when others do). It is counted with the documents as a filter, as an admin.
	page, err := s.ListDocuments(b.Context(), benchOne, rag.DocumentQuery{Limit: 100})
	if err != nil || page.Total != benchDocs/100 {
		b.Fatalf("user one reads %v documents (%v), want %d", page, err, benchDocs/100)
	}
	var granted []string
	for _, d := range page.Documents {
		granted = append(granted, d.ID)
	}
	full := make([]int, len(qs))
	for i, q := range qs {
		c, err := s.KeywordCandidates(b.Context(), rag.LocalPrincipal, rag.KeywordQuery{Terms: q.terms, Filter: rag.Filter{DocumentIDs: granted}, K: benchChunks * len(granted)})
		if err != nil {
			b.Fatal(err)
		}
		full[i] = min(50, len(c))
	}
	for _, tc := range []struct {
		name string
		p    rag.Principal
		f    rag.Filter
	}{
		{"All", rag.LocalPrincipal, rag.Filter{}},
		{"Filter5pct", rag.LocalPrincipal, benchRare},
		{"Visibility5pct", benchTeam, rag.Filter{}},
		{"Grant1pct", benchOne, rag.Filter{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := qs[i%len(qs)]
				start := time.Now()
				c, err := s.KeywordCandidates(b.Context(), tc.p, rag.KeywordQuery{Terms: q.terms, Filter: tc.f, K: 50})
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				// Top-k stays full under the grant: k candidates whenever k permitted passages match.
				if tc.p.ID == benchOne.ID && len(c) != full[i%len(qs)] {
					b.Fatalf("query %d: %d keyword candidates under a 1%% grant, want %d", i%len(qs), len(c), full[i%len(qs)])
				}
				i++
			}
			reportLatency(b, lat)
		})
	}
}

// hybridSearch is the store's share of one hybrid search as internal/retrieve runs it: both candidate
// queries (k=50 each) at once, then the hits of the fused top 10.
func hybridSearch(ctx context.Context, s *sqlite.Store, p rag.Principal, f rag.Filter, q benchQuery) error {
	var vc, kc []rag.Candidate
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		vc, err = s.VectorCandidates(gctx, p, rag.VectorQuery{Space: benchSpace, Vector: q.vec, Filter: f, K: 50})
		return err
	})
	g.Go(func() (err error) {
		kc, err = s.KeywordCandidates(gctx, p, rag.KeywordQuery{Terms: q.terms, Filter: f, K: 50})
		return err
	})
	if err := g.Wait(); err != nil {
		return err
	}
	ids := make([]int64, 0, 10)
	for j := 0; len(ids) < 10 && j < max(len(vc), len(kc)); j++ {
		if j < len(vc) {
			ids = append(ids, vc[j].ChunkID)
		}
		if j < len(kc) && len(ids) < 10 {
			ids = append(ids, kc[j].ChunkID)
		}
	}
	_, err := s.Hits(ctx, rag.LocalPrincipal, ids)
	return err
}

// BenchmarkHybrid measures one hybrid search at a time (hybridSearch).
func BenchmarkHybrid(b *testing.B) {
	s := openBenchStore(b)
	qs := benchQueries(200)
	for _, tc := range []struct {
		name string
		p    rag.Principal
		f    rag.Filter
	}{
		{"All", rag.LocalPrincipal, rag.Filter{}},
		{"Filter5pct", rag.LocalPrincipal, benchRare},
		{"Grant1pct", benchOne, rag.Filter{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := qs[i%len(qs)]
				i++
				start := time.Now()
				if err := hybridSearch(b.Context(), s, tc.p, tc.f, q); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkHybridConcurrent runs hybrid searches from 50 goroutines at once, as 50 HTTP clients do, and
// reports the latency of each search and the searches per second of all of them together. Searches
// that wait for each other show here, not in BenchmarkHybrid.
func BenchmarkHybridConcurrent(b *testing.B) {
	s := openBenchStore(b)
	qs := benchQueries(200)
	const clients = 50
	var (
		mu   sync.Mutex
		lat  []time.Duration
		next atomic.Int64
	)
	b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			q := qs[int(next.Add(1))%len(qs)]
			t := time.Now()
			if err := hybridSearch(b.Context(), s, rag.LocalPrincipal, rag.Filter{}, q); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(t))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	b.ReportMetric(float64(len(lat))/time.Since(start).Seconds(), "searches/s")
	reportLatency(b, lat)
}
