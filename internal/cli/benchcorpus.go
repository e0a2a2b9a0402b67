package cli

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/retrieve"
	"github.com/ragd/ragd/internal/textproc"
	"github.com/ragd/ragd/internal/vindex"
)

// benchPool is how many candidates of each list the hybrid reference fuses (the retriever's default).
const benchPool = 100

// benchCorpus is `ragd bench search`'s generated corpus with its queries and the exact answers every
// system's recall@10 is measured against: the exact float32 top 10 (vector), the exact BM25 top 10 over
// the store's analyzer (keyword), and the weighted reciprocal-rank fusion of the exact top 100 of both
// (hybrid).
type benchCorpus struct {
	dim             int
	vecs, queries   []float32
	texts, qtexts   []string
	exactVec        [][]vindex.Hit // top benchPool
	exactKw         [][]vindex.Hit // top benchPool
	exactHybrid     [][]vindex.Hit // top 10
	vecTime, kwTime []time.Duration
	vecCPU, kwCPU   time.Duration
	bm25Bytes       int64
	peerQueries     int // queries the in-process peers time (0: all)
}

// peers is how many queries the in-process peers time.
func (c *benchCorpus) peers() int {
	if c.peerQueries > 0 {
		return c.peerQueries
	}
	return len(c.qtexts)
}

// newBenchCorpus generates n chunks and nq queries (seed 42) and computes the exact answers, timing the
// exact top-10 searches.
func newBenchCorpus(n, nq, dim int) *benchCorpus {
	c := &benchCorpus{dim: dim}
	c.vecs, c.queries = vindex.Clustered(n, nq, dim, 2, 42)
	c.texts = benchTexts(c.vecs, dim, benchTopicWords, benchTopicWords+benchFillerWords, 42)
	c.qtexts = benchTexts(c.queries, dim, benchQueryTopic, benchQueryWords, 43)
	seen := map[string]bool{}
	for i, q := range c.qtexts { // the bench embedder maps a query's text to its vector: texts must differ
		for w := benchFiller - 1; seen[q]; w-- {
			q += " " + benchWord(w)
		}
		c.qtexts[i], seen[q] = q, true
	}
	keyword := make([]string, n)
	for r := range n {
		keyword[r] = textproc.ContextText(benchTitle(r/10*10), "", c.texts[r])
	}
	ix := newBM25(keyword)
	c.bm25Bytes = ix.bytes()
	c.exactVec, c.exactKw, c.exactHybrid = make([][]vindex.Hit, nq), make([][]vindex.Hit, nq), make([][]vindex.Hit, nq)
	c.vecTime, c.kwTime = make([]time.Duration, nq), make([]time.Duration, nq)
	for i := range nq { // the exact rows: one query at a time
		t, cpu := time.Now(), processCPU()
		vindex.Exact(c.query(i), c.vecs, dim, 10)
		c.vecTime[i], c.vecCPU = time.Since(t), c.vecCPU+processCPU()-cpu
		terms := textproc.QueryTerms(c.qtexts[i])
		t, cpu = time.Now(), processCPU()
		ix.search(terms, 10)
		c.kwTime[i], c.kwCPU = time.Since(t), c.kwCPU+processCPU()-cpu
	}
	// The references, on every core (at 1,000,000 chunks they are minutes of scans).
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c.exactVec[i] = vindex.Exact(c.query(i), c.vecs, dim, benchPool)
				c.exactKw[i] = ix.search(textproc.QueryTerms(c.qtexts[i]), benchPool)
				c.exactHybrid[i] = rrf(c.exactVec[i], c.exactKw[i], 10)
			}
		}()
	}
	for i := range nq {
		next <- i
	}
	close(next)
	wg.Wait()
	return c
}

// benchTitle is the title of the document whose first chunk is row first.
func benchTitle(first int) string { return fmt.Sprint("bench ", first/10) }

func (c *benchCorpus) query(i int) []float32 { return c.queries[i*c.dim : (i+1)*c.dim] }

func top10(h []vindex.Hit) []vindex.Hit { return h[:min(10, len(h))] }

// recall is the mean recall@10 of got (per query) against want.
func recall(got, want [][]vindex.Hit) float64 {
	var sum float64
	for i := range got {
		sum += vindex.Recall(got[i], top10(want[i]))
	}
	return sum / float64(len(got))
}

func (c *benchCorpus) exactVectorRow() searchRow {
	return timed("exact float32", "vector", c.vecTime, c.vecCPU, 1, int64(len(c.vecs))*4, 0)
}

func (c *benchCorpus) exactKeywordRow() searchRow {
	return timed("exact BM25 (in memory)", "keyword", c.kwTime, c.kwCPU, 1, c.bm25Bytes, 0)
}

// benchRun times f for every query and returns the rows it found, the times and the process's CPU time
// over them.
func (c *benchCorpus) benchRun(f func(i int) ([]vindex.Hit, error)) ([][]vindex.Hit, []time.Duration, time.Duration, error) {
	return c.benchRunN(len(c.qtexts), f)
}

// benchRunN is benchRun of the first n queries.
func (c *benchCorpus) benchRunN(n int, f func(i int) ([]vindex.Hit, error)) ([][]vindex.Hit, []time.Duration, time.Duration, error) {
	got, times := make([][]vindex.Hit, n), make([]time.Duration, n)
	cpu := processCPU()
	for i := range n {
		t := time.Now()
		h, err := f(i)
		times[i] = time.Since(t)
		if err != nil {
			return nil, nil, 0, err
		}
		got[i] = h
	}
	return got, times, processCPU() - cpu, nil
}

// measureRagd times a store's vector and keyword candidates and the retriever's hybrid search over it (the
// one behind /api/search, with the relevance threshold off so that every query returns 10); its rows are
// named system. mem is the vector and hybrid rows' memory, kwMem the keyword row's (the embedded store's
// database file, which FTS5 reads as it needs; PostgreSQL's postings with their indexes).
func (c *benchCorpus) measureRagd(ctx context.Context, st rag.Store, system string, rowOf map[int64]int32, mem, kwMem int64, build float64) ([]searchRow, error) {
	hitsOf := func(ids []int64) []vindex.Hit {
		out := make([]vindex.Hit, len(ids))
		for j, id := range ids {
			out[j] = vindex.Hit{Row: rowOf[id]}
		}
		return out
	}
	candidates := func(cs []rag.Candidate, err error) ([]vindex.Hit, error) {
		ids := make([]int64, len(cs))
		for j, c := range cs {
			ids[j] = c.ChunkID
		}
		return hitsOf(ids), err
	}
	var rows []searchRow
	got, times, cpu, err := c.benchRun(func(i int) ([]vindex.Hit, error) {
		return candidates(st.VectorCandidates(ctx, rag.LocalPrincipal, rag.VectorQuery{Space: benchSpace, Vector: c.query(i), K: 10}))
	})
	if err != nil {
		return nil, err
	}
	rows = append(rows, timed(system, "vector", times, cpu, recall(got, c.exactVec), mem, build))
	if got, times, cpu, err = c.benchRun(func(i int) ([]vindex.Hit, error) {
		return candidates(st.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms(c.qtexts[i]), K: 10}))
	}); err != nil {
		return nil, err
	}
	rows = append(rows, timed(system, "keyword", times, cpu, recall(got, c.exactKw), kwMem, build))
	hybrid, err := benchHybrid(st, c.qtexts, c.query)
	if err != nil {
		return nil, err
	}
	if got, times, cpu, err = c.benchRun(func(i int) ([]vindex.Hit, error) {
		ids, err := hybrid(ctx, i)
		return hitsOf(ids), err
	}); err != nil {
		return nil, err
	}
	rows = append(rows, timed(system, "hybrid", times, cpu, recall(got, c.exactHybrid), mem, build))
	return rows, nil
}

// benchHybrid returns the hybrid search of `ragd bench search` over st: the retriever behind /api/search
// with an embedder that gives query i (texts[i]) the vector vec(i) and the relevance threshold off, so
// that every query returns 10 hits; it returns their chunk IDs.
func benchHybrid(st rag.Store, texts []string, vec func(i int) []float32) (func(ctx context.Context, i int) ([]int64, error), error) {
	emb := benchEmbedder{vecs: map[string][]float32{}}
	for i, q := range texts {
		emb.vecs[q], emb.vecs[textproc.Normalize(q)] = vec(i), vec(i)
	}
	r, err := retrieve.New(st, emb, retrieve.Options{MinSimilarity: -1}.WithDefaultsFor(benchSpace))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, i int) ([]int64, error) {
		res, err := r.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: texts[i], K: 10})
		if err != nil {
			return nil, err
		}
		ids := make([]int64, len(res.Hits))
		for j, h := range res.Hits {
			ids[j] = h.ID
		}
		return ids, nil
	}, nil
}

// fileBytes is the size of a SQLite database file with its write-ahead log.
func fileBytes(path string) int64 {
	var n int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(path + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// benchEmbedder gives the generated vector of each benchmark query (the corpus has no real embedder).
type benchEmbedder struct{ vecs map[string][]float32 }

func (benchEmbedder) Space() rag.Space { return benchSpace }

func (benchEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, rag.Errorf(rag.CodeEmbeddingFailed, "the benchmark embeds no documents")
}

func (e benchEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	if v, ok := e.vecs[text]; ok {
		return v, nil
	}
	return nil, rag.Errorf(rag.CodeEmbeddingFailed, "not a benchmark query: %q", text)
}
