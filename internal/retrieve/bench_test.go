package retrieve_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/retrieve"
	"github.com/ragd/ragd/internal/store/sqlite"
)

// The benchmark corpus: 1,000 documents × 100 chunks of ~120 Zipf-distributed synthetic words, embedded by
// the real hash embedder (768-d), so that both candidate lists and the threshold behave as on real text.
const (
	benchDocs   = 1000
	benchChunks = 100
	benchWords  = 120
	benchVocab  = 20000
)

func synthWord(r *rand.Rand) string {
	const cons, vows = "bcdfghjklmnprstvz", "aeiou"
	var b strings.Builder
	for range 2 + r.IntN(3) {
		b.WriteByte(cons[r.IntN(len(cons))])
		b.WriteByte(vows[r.IntN(len(vows))])
	}
	return b.String()
}

func vocabulary() []string {
	r := rand.New(rand.NewPCG(7, 8))
	seen := map[string]bool{}
	var out []string
	for len(out) < benchVocab {
		if w := synthWord(r); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// openBenchCorpus builds the corpus once per machine in $RAGD_BENCH_DIR (default: a folder in the temp dir,
// kept between runs because building it takes minutes) and opens it.
func openBenchCorpus(b *testing.B, emb rag.Embedder) *sqlite.Store {
	b.Helper()
	dir := os.Getenv("RAGD_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("ragd-retrieve-bench-%dx%d-%s", benchDocs*benchChunks, emb.Space().Dim, emb.Space().Model))
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if stats, err := st.SpaceStats(ctx); err == nil && stats.Spaces[emb.Space().ID()] == benchDocs*benchChunks {
		return st
	}
	b.Logf("building the %d-chunk corpus in %s", benchDocs*benchChunks, dir)
	vocab := vocabulary()
	zipf := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 1, benchVocab-1)
	coll, err := st.EnsureCollection(ctx, "bench", "local")
	if err != nil {
		b.Fatal(err)
	}
	for d := range benchDocs {
		doc := &rag.Document{CollectionID: coll.ID, ExternalID: fmt.Sprint("doc-", d), Title: fmt.Sprint("Document ", d),
			Status: rag.StatusQueued, Owner: "local", Readers: []string{rag.Everyone}}
		if err := st.CreateDocument(ctx, doc); err != nil {
			b.Fatal(err)
		}
		chunks := make([]rag.Chunk, benchChunks)
		texts := make([]string, benchChunks)
		for c := range chunks {
			words := make([]string, benchWords)
			for i := range words {
				words[i] = vocab[zipf.Uint64()]
			}
			texts[c] = strings.Join(words, " ")
			chunks[c] = rag.Chunk{Index: c, Kind: rag.KindText, Text: texts[c], PageStart: 1, PageEnd: 1}
		}
		vecs, err := emb.EmbedDocuments(ctx, texts)
		if err != nil {
			b.Fatal(err)
		}
		for c := range chunks {
			chunks[c].Vector = vecs[c]
		}
		if _, err := st.CommitVersion(ctx, &rag.VersionCommit{DocumentID: doc.ID, ContentHash: fmt.Sprint(d), Title: doc.Title,
			MediaType: "text/plain", Space: emb.Space(), Chunks: chunks}); err != nil {
			b.Fatal(err)
		}
	}
	return st
}

// BenchmarkHybridSearch100k measures Retriever.Search (query embedding, both candidate queries, fusion,
// feedback, threshold, hits) over 100,000 chunks with the offline defaults; it reports p50/p95 per query.
// Queries are 2–6 words drawn from the corpus vocabulary (the rarer half, as people search).
func BenchmarkHybridSearch100k(b *testing.B) {
	emb := hash.New(0)
	st := openBenchCorpus(b, emb)
	vocab := vocabulary()
	for _, tc := range []struct {
		name string
		opt  retrieve.Options
	}{
		{"Defaults", retrieve.Options{}},
		{"NoFeedback", retrieve.Options{Feedback: -1}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r, err := retrieve.New(st, emb, tc.opt)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(3, 4))
			// Warm the vector cache outside the measurement.
			if _, err := r.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: vocab[100], K: 10}); err != nil {
				b.Fatal(err)
			}
			var lat []time.Duration
			for b.Loop() {
				words := make([]string, 2+rng.IntN(5))
				for i := range words {
					words[i] = vocab[benchVocab/2+rng.IntN(benchVocab/2)]
				}
				t := time.Now()
				if _, err := r.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: strings.Join(words, " "), K: 10}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}
