package hash

// The quality benchmarks measure the hash embedder in memory on the shared evaluation sets, with what
// `ragd eval` uses: the datasets and metrics of internal/eval, plain BM25 of internal/eval/bm25 with SQLite
// FTS5's parameters (k1 1.2, b 0.75) over textproc's IndexTerms/QueryTerms, the chunker's own chunks (size
// 1000, overlap 200), and weighted reciprocal-rank fusion w/(60+rank) over the top 100 of each list as
// internal/retrieve fuses; a document ranks by its best chunk. Each reports nDCG@10, Recall@5 and MRR@10 as
// benchmark metrics beside the time to embed the set. They are how the analyzer's rules and the default
// features were chosen; `ragd eval` measures the whole pipeline (docs/retrieval.md).
//
//	go test -run '^$' -bench 'Quality' -benchtime 1x ./internal/embed/hash/
//
// Knobs: RAGD_QUALITY_SET=cranfield|korquad, RAGD_QUALITY_TITLE=1 (the title before every chunk),
// RAGD_QUALITY_CHUNK (0: whole documents), RAGD_QUALITY_DIM, RAGD_QUALITY_VARIANTS ("all", names of
// featureVariants, or "key=value,…" feature settings separated by spaces).

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/chunk"
	"github.com/ragd/ragd/internal/eval"
	"github.com/ragd/ragd/internal/eval/bm25"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/testkit"
	"github.com/ragd/ragd/internal/textproc"
)

// qset is an evaluation set cut into chunks.
type qset struct {
	name     string
	ds       *eval.Dataset
	queries  []eval.Query // those with judgments
	chunks   []string
	chunkDoc []int // chunk → index in ds.Docs
}

func loadSets(b *testing.B) []*qset {
	paths := map[string]string{
		"cranfield": testkit.Shared("eval", "cranfield"),
		"korquad":   testkit.Shared("eval", "korquad", "KorQuAD_v1.0_dev.json"),
	}
	names := []string{"cranfield", "korquad"}
	if n := os.Getenv("RAGD_QUALITY_SET"); n != "" {
		names = []string{n}
	}
	size := 1000
	if v, err := strconv.Atoi(os.Getenv("RAGD_QUALITY_CHUNK")); err == nil {
		size = v
	}
	var out []*qset
	for _, n := range names {
		ds, err := eval.Load(paths[n])
		if err != nil {
			b.Fatal(err)
		}
		s := &qset{name: n, ds: ds}
		for _, q := range ds.Queries {
			if len(q.Relevant) > 0 {
				s.queries = append(s.queries, q)
			}
		}
		for d, doc := range ds.Docs {
			texts := []string{doc.Text}
			if size > 0 {
				texts = texts[:0]
				ex := &rag.Extracted{Blocks: []rag.Block{{Kind: rag.BlockParagraph, Text: doc.Text}}}
				for _, c := range chunk.Split(ex, chunk.Options{Size: size, Overlap: size / 5}) {
					texts = append(texts, c.Text)
				}
			}
			for _, c := range texts {
				if os.Getenv("RAGD_QUALITY_TITLE") != "" {
					c = doc.Title + "\n" + c
				}
				s.chunks = append(s.chunks, c)
				s.chunkDoc = append(s.chunkDoc, d)
			}
		}
		out = append(out, s)
	}
	return out
}

// report adds the mean nDCG@10, Recall@5 and MRR@10 of chunk rankings (one per query) to b.
func (s *qset) report(b *testing.B, ranked [][]int) {
	var ndcg, recall, mrr float64
	for i, q := range s.queries {
		ids := s.docRank(ranked[i])
		ndcg += eval.NDCG(ids, q.Relevant, 10)
		recall += eval.Recall(ids, q.Relevant, 5)
		mrr += eval.MRR(ids, q.Relevant, 10)
	}
	n := float64(len(s.queries))
	b.ReportMetric(ndcg/n, "nDCG@10")
	b.ReportMetric(recall/n, "R@5")
	b.ReportMetric(mrr/n, "MRR@10")
}

// docRank maps a ranking of chunks to the IDs of their documents (first occurrence).
func (s *qset) docRank(chunks []int) []string {
	seen := map[int]bool{}
	var out []string
	for _, c := range chunks {
		if d := s.chunkDoc[c]; !seen[d] {
			seen[d] = true
			out = append(out, s.ds.Docs[d].ID)
		}
	}
	return out
}

func (s *qset) keywordRuns() [][]int {
	terms := make([][]string, len(s.chunks))
	for i, c := range s.chunks {
		terms[i] = textproc.IndexTerms(c)
	}
	ix := bm25.New(terms, 1.2, 0.75)
	out := make([][]int, len(s.queries))
	for i, q := range s.queries {
		out[i] = ix.Search(textproc.QueryTerms(q.Text), 100)
	}
	return out
}

// vectorRuns embeds the chunks and queries with e and ranks the chunks by exact cosine, top 100.
func (s *qset) vectorRuns(b *testing.B, e *Embedder) [][]int {
	ctx := context.Background()
	dv, err := e.EmbedDocuments(ctx, s.chunks)
	if err != nil {
		b.Fatal(err)
	}
	out := make([][]int, len(s.queries))
	for i, q := range s.queries {
		qv, err := e.EmbedQuery(ctx, q.Text)
		if err != nil {
			b.Fatal(err)
		}
		scores := make(map[int]float64, len(dv))
		for d, v := range dv {
			if sim := dot(v, qv); sim > 0 {
				scores[d] = sim
			}
		}
		out[i] = bm25.TopK(scores, 100)
	}
	return out
}

// fuse is internal/retrieve's weighted reciprocal-rank fusion over two ranked lists.
func fuse(vec, kw []int, wv, wk float64) []int {
	scores := map[int]float64{}
	for r, d := range vec {
		scores[d] += wv / float64(60+r+1)
	}
	for r, d := range kw {
		scores[d] += wk / float64(60+r+1)
	}
	return bm25.TopK(scores, 100)
}

var weightGrid = [][2]float64{{0.7, 0.3}, {0.5, 0.5}, {0.3, 0.7}, {0.25, 0.75}, {0.2, 0.8}, {0.15, 0.85}, {0.1, 0.9}}

// BenchmarkQuality reports, per set: BM25 alone; per feature variant, vectors alone and fused with each
// weight pair of weightGrid (vector/keyword). The time is that of embedding the set's chunks and queries.
func BenchmarkQuality(b *testing.B) {
	variants := []struct {
		name string
		f    features
	}{{"default", defaultFeatures}}
	if v := os.Getenv("RAGD_QUALITY_VARIANTS"); v != "" {
		variants = append(variants, featureVariants(v)...)
	}
	dim := DefaultDim
	if d, err := strconv.Atoi(os.Getenv("RAGD_QUALITY_DIM")); err == nil {
		dim = d
	}
	for _, s := range loadSets(b) {
		kw := s.keywordRuns()
		b.Run(s.name+"/bm25", func(b *testing.B) {
			for range b.N {
				kw = s.keywordRuns()
			}
			s.report(b, kw)
		})
		for _, v := range variants {
			var vec [][]int
			b.Run(s.name+"/vec/"+v.name, func(b *testing.B) {
				for range b.N {
					vec = s.vectorRuns(b, &Embedder{dim: dim, f: v.f})
				}
				s.report(b, vec)
			})
			for _, w := range weightGrid {
				b.Run(fmt.Sprintf("%s/fused/%s/%.2g-%.2g", s.name, v.name, w[0], w[1]), func(b *testing.B) {
					fused := make([][]int, len(s.queries))
					for range b.N {
						for i := range s.queries {
							fused[i] = fuse(vec[i], kw[i], w[0], w[1])
						}
					}
					s.report(b, fused)
				})
			}
		}
	}
}

// BenchmarkQualityCosine reports the cosine similarity of queries to their best relevant chunk and to the
// best irrelevant one (10th, 50th and 90th percentiles), which a similarity threshold must separate.
func BenchmarkQualityCosine(b *testing.B) {
	ctx := context.Background()
	e := New(0)
	for _, s := range loadSets(b) {
		b.Run(s.name, func(b *testing.B) {
			var rel, irr []float64
			for range b.N {
				dv, err := e.EmbedDocuments(ctx, s.chunks)
				if err != nil {
					b.Fatal(err)
				}
				rel, irr = rel[:0], irr[:0]
				for _, q := range s.queries {
					qv, err := e.EmbedQuery(ctx, q.Text)
					if err != nil {
						b.Fatal(err)
					}
					best := map[bool]float64{}
					for c, v := range dv {
						r := q.Relevant[s.ds.Docs[s.chunkDoc[c]].ID] > 0
						best[r] = max(best[r], dot(v, qv))
					}
					rel, irr = append(rel, best[true]), append(irr, best[false])
				}
			}
			slices.Sort(rel)
			slices.Sort(irr)
			pct := func(xs []float64, p float64) float64 { return xs[int(p*float64(len(xs)-1))] }
			for _, p := range []float64{0.1, 0.5, 0.9} {
				b.ReportMetric(pct(rel, p), fmt.Sprintf("rel-p%d", int(p*100)))
				b.ReportMetric(pct(irr, p), fmt.Sprintf("irr-p%d", int(p*100)))
			}
		})
	}
}

// featureVariants returns the variants named in a space-separated list ("all": every variant; a name it does not know is read as "key=value,…" feature settings).
func featureVariants(names string) []struct {
	name string
	f    features
} {
	type variant = struct {
		name string
		f    features
	}
	d := defaultFeatures
	with := func(name string, fn func(*features)) variant {
		f := d
		fn(&f)
		return variant{name, f}
	}
	all := []variant{
		with("no-char", func(f *features) { f.char = 0 }),
		with("char0.2", func(f *features) { f.char = 0.2 }),
		with("char4-5", func(f *features) { f.charMin = 4 }),
		with("no-wordbigram", func(f *features) { f.wordBigram = 0 }),
		with("wordbigram1", func(f *features) { f.wordBigram = 1 }),
		with("wordbigram-nostopskip", func(f *features) { f.bigramSkipStops = false }),
		with("hangul2-0.5", func(f *features) { f.hangul2 = 0.5 }),
		with("hangul3-0.5", func(f *features) { f.hangul3 = 0.5 }),
		with("hangulsurf-0.5", func(f *features) { f.hangulSurf = 0.5 }),
		with("hangulword0.5", func(f *features) { f.hangulWord = 0.5 }),
		with("part0.5", func(f *features) { f.part = 0.5 }),
	}
	if names == "" || names == "all" {
		return all
	}
	var out []variant
	for _, n := range strings.Fields(names) {
		found := false
		for _, v := range all {
			if v.name == n {
				out = append(out, v)
				found = true
			}
		}
		if !found {
			out = append(out, with(n, func(f *features) { setFeatures(f, n) }))
		}
	}
	return out
}

// setFeatures applies "key=value,key=value" to f (keys are the field names).
func setFeatures(f *features, spec string) {
	for _, kv := range strings.Split(spec, ",") {
		k, v, _ := strings.Cut(kv, "=")
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			panic("bad variant " + spec)
		}
		switch k {
		case "word":
			f.word = x
		case "wordBigram":
			f.wordBigram = x
		case "char":
			f.char = x
		case "charMin":
			f.charMin = int(x)
		case "charMax":
			f.charMax = int(x)
		case "hangulWord":
			f.hangulWord = x
		case "hangulSurf":
			f.hangulSurf = x
		case "hangul2":
			f.hangul2 = x
		case "hangul3":
			f.hangul3 = x
		case "number":
			f.number = x
		case "part":
			f.part = x
		case "skip":
			f.bigramSkipStops = x != 0
		default:
			panic("bad variant key " + k)
		}
	}
}
