package hash

// The quality harness: it mirrors `ragd eval`'s retrieval in memory — BM25 as SQLite FTS5 computes it
// (k1=1.2, b=0.75) over textproc's IndexTerms/QueryTerms, exact cosine over hash vectors, weighted
// reciprocal-rank fusion w/(60+rank) over the top 100 candidates of each — on the shared Cranfield and
// KorQuAD sets, with documents cut into ~1000-character chunks (200 overlap) and a document ranked by its
// best chunk. It reports nDCG@10 / Recall@5 / MRR@10 for BM25 alone, vectors alone and fusions with several
// weights. It is how the analyzer's rules and the default features were chosen:
//
//	RAGD_QUALITY=1 go test -run 'Quality$' -v ./internal/embed/hash/
//
// Knobs: RAGD_QUALITY=bm25 (keyword only), RAGD_QUALITY_SET=cranfield|korquad|cranfield+title|korquad+title
// (+title: the title prepended to every chunk), RAGD_QUALITY_CHUNK=0 (whole documents) or a size,
// RAGD_QUALITY_DIM, RAGD_QUALITY_VARIANTS="all" or names of featureVariants or "key=value,…" feature
// settings separated by spaces (RAGD_QUALITY=full runs all variants).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/eval/bm25"
	"github.com/ragd/ragd/internal/textproc"
)

const evalDir = "../../../../shared/eval"

type qdoc struct {
	id, title, text string
}

type qquery struct {
	id, text string
}

type qset struct {
	name string
	docs []qdoc
	// chunks are the passages that are indexed and searched; chunkDoc maps each to its document. Without
	// chunking each document is one chunk.
	chunks   []string
	chunkDoc []int
	// titled prepends each document's title to each of its chunks.
	titled  bool
	queries []qquery
	qrels   map[string]map[string]int // query id → doc id → grade (> 0 relevant)
}

func loadCranfield(t testing.TB) *qset {
	dir := filepath.Join(evalDir, "cranfield")
	s := &qset{name: "cranfield", qrels: map[string]map[string]int{}}
	readJSONL(t, filepath.Join(dir, "corpus.jsonl"), func(m map[string]any) {
		s.docs = append(s.docs, qdoc{id: m["_id"].(string), title: m["title"].(string), text: m["text"].(string)})
	})
	readJSONL(t, filepath.Join(dir, "queries.jsonl"), func(m map[string]any) {
		s.queries = append(s.queries, qquery{id: m["_id"].(string), text: m["text"].(string)})
	})
	f, err := os.Open(filepath.Join(dir, "qrels", "test.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) != 3 || fs[0] == "query-id" {
			continue
		}
		g, err := strconv.Atoi(fs[2])
		if err != nil {
			t.Fatal(err)
		}
		if g <= 0 {
			continue
		}
		if s.qrels[fs[0]] == nil {
			s.qrels[fs[0]] = map[string]int{}
		}
		s.qrels[fs[0]][fs[1]] = g
	}
	// only queries with judgments count
	s.queries = slices.DeleteFunc(s.queries, func(q qquery) bool { return len(s.qrels[q.id]) == 0 })
	return s
}

func readJSONL(t testing.TB, path string, fn func(map[string]any)) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		fn(m)
	}
}

func loadKorQuAD(t testing.TB, withTitle bool) *qset {
	b, err := os.ReadFile(filepath.Join(evalDir, "korquad", "KorQuAD_v1.0_dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Data []struct {
			Title      string `json:"title"`
			Paragraphs []struct {
				Context string `json:"context"`
				QAs     []struct {
					ID       string `json:"id"`
					Question string `json:"question"`
				} `json:"qas"`
			} `json:"paragraphs"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	s := &qset{name: "korquad", qrels: map[string]map[string]int{}, titled: withTitle}
	if withTitle {
		s.name = "korquad+title"
	}
	for ai, a := range v.Data {
		for pi, p := range a.Paragraphs {
			id := fmt.Sprintf("%d-%d", ai, pi)
			s.docs = append(s.docs, qdoc{id: id, title: a.Title, text: p.Context})
			for _, q := range p.QAs {
				s.queries = append(s.queries, qquery{id: q.ID, text: q.Question})
				s.qrels[q.ID] = map[string]int{id: 1}
			}
		}
	}
	return s
}

func vectorSearch(docs [][]float32, q []float32, k int) []int {
	scores := make(map[int]float64, len(docs))
	for d, v := range docs {
		var s float32
		for i, x := range v {
			s += x * q[i]
		}
		if s > 0 {
			scores[d] = float64(s)
		}
	}
	return bm25.TopK(scores, k)
}

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

type metrics struct{ ndcg, recall, mrr float64 }

func (m metrics) String() string { return fmt.Sprintf("%.3f / %.3f / %.3f", m.ndcg, m.recall, m.mrr) }

func evaluate(s *qset, ranked [][]int) metrics {
	var m metrics
	for qi, q := range s.queries {
		rel := s.qrels[q.id]
		r := s.docRank(ranked[qi])
		var dcg, idcg float64
		var found int
		rr := 0.0
		for i, d := range r {
			if i >= 10 {
				break
			}
			g := rel[s.docs[d].id]
			if g > 0 {
				dcg += float64(g) / math.Log2(float64(i+2))
				if rr == 0 {
					rr = 1 / float64(i+1)
				}
				if i < 5 {
					found++
				}
			}
		}
		grades := make([]int, 0, len(rel))
		for _, g := range rel {
			grades = append(grades, g)
		}
		sort.Sort(sort.Reverse(sort.IntSlice(grades)))
		for i, g := range grades {
			if i >= 10 {
				break
			}
			idcg += float64(g) / math.Log2(float64(i+2))
		}
		m.ndcg += dcg / idcg
		m.recall += float64(found) / float64(len(rel))
		m.mrr += rr
	}
	n := float64(len(s.queries))
	return metrics{m.ndcg / n, m.recall / n, m.mrr / n}
}

func keywordRuns(s *qset) [][]int {
	terms := make([][]string, len(s.chunks))
	for i, c := range s.chunks {
		terms[i] = textproc.IndexTerms(c)
	}
	// FTS5's bm25() parameters.
	ix := bm25.New(terms, 1.2, 0.75)
	out := make([][]int, len(s.queries))
	for i, q := range s.queries {
		out[i] = ix.Search(textproc.QueryTerms(q.text), 100)
	}
	return out
}

// chunkText cuts text as the chunker does by default: whole sentences up to size runes, the last sentences
// of up to overlap runes repeated at the start of the next chunk (a sentence longer than size is cut).
func chunkText(text string, size, overlap int) []string {
	var sents []string
	start := 0
	rs := []rune(text)
	for i, r := range rs {
		if (r == '.' || r == '?' || r == '!' || r == '\n') && (i+1 == len(rs) || rs[i+1] == ' ' || rs[i+1] == '\n') {
			sents = append(sents, string(rs[start:i+1]))
			start = i + 1
		}
	}
	if start < len(rs) {
		sents = append(sents, string(rs[start:]))
	}
	var out []string
	var cur []string
	n := 0
	for _, sent := range sents {
		l := len([]rune(sent))
		for l > size {
			r := []rune(sent)
			out = append(out, string(r[:size]))
			sent = string(r[size:])
			l -= size
		}
		if n+l > size && len(cur) > 0 {
			out = append(out, strings.Join(cur, ""))
			keep, m := 0, 0
			for k := len(cur) - 1; k >= 0 && m+len([]rune(cur[k])) <= overlap; k-- {
				m += len([]rune(cur[k]))
				keep++
			}
			cur = append([]string(nil), cur[len(cur)-keep:]...)
			n = m
		}
		cur = append(cur, sent)
		n += l
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, ""))
	}
	return out
}

// chunk sets s.chunks: whole documents, or chunks of size runes when size > 0.
func (s *qset) chunk(size int) {
	s.chunks, s.chunkDoc = s.chunks[:0], s.chunkDoc[:0]
	for d, doc := range s.docs {
		cs := []string{doc.text}
		if size > 0 {
			cs = chunkText(doc.text, size, size/5)
		}
		for _, c := range cs {
			if s.titled {
				c = doc.title + "\n" + c
			}
			s.chunks = append(s.chunks, c)
			s.chunkDoc = append(s.chunkDoc, d)
		}
	}
}

// docRank maps a ranking of chunks to a ranking of their documents (first occurrence).
func (s *qset) docRank(chunks []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, c := range chunks {
		if d := s.chunkDoc[c]; !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

func vectorRuns(t testing.TB, s *qset, e *Embedder) [][]int {
	ctx := context.Background()
	dv, err := e.EmbedDocuments(ctx, s.chunks)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]int, len(s.queries))
	for i, q := range s.queries {
		qv, err := e.EmbedQuery(ctx, q.text)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = vectorSearch(dv, qv, 100)
	}
	return out
}

var weightGrid = [][2]float64{{0.7, 0.3}, {0.5, 0.5}, {0.3, 0.7}, {0.25, 0.75}, {0.2, 0.8}, {0.15, 0.85}, {0.1, 0.9}}

func TestQuality(t *testing.T) {
	mode := os.Getenv("RAGD_QUALITY")
	if mode == "" {
		t.Skip("set RAGD_QUALITY=1 to measure retrieval quality on ../shared/eval")
	}
	// RAGD_QUALITY_SET picks one set: cranfield, korquad, or either with "+title" (the title prepended to
	// each document's text, as a store that indexes titles with the text would see it).
	var sets []*qset
	switch os.Getenv("RAGD_QUALITY_SET") {
	case "cranfield":
		sets = append(sets, loadCranfield(t))
	case "cranfield+title":
		s := loadCranfield(t)
		s.name, s.titled = s.name+"+title", true
		sets = append(sets, s)
	case "korquad":
		sets = append(sets, loadKorQuAD(t, false))
	case "korquad+title":
		sets = append(sets, loadKorQuAD(t, true))
	default:
		sets = append(sets, loadCranfield(t), loadKorQuAD(t, false))
	}
	variants := []struct {
		name string
		f    features
	}{{"default", defaultFeatures}}
	if v := os.Getenv("RAGD_QUALITY_VARIANTS"); v != "" || mode == "full" {
		variants = append(variants, featureVariants(v)...)
	}
	size := 1000
	if v, err := strconv.Atoi(os.Getenv("RAGD_QUALITY_CHUNK")); err == nil {
		size = v
	}
	for _, s := range sets {
		s.chunk(size)
		start := time.Now()
		kw := keywordRuns(s)
		t.Logf("%s: %d docs, %d chunks, %d queries; BM25 (k1=1.2 b=0.75) nDCG@10 / R@5 / MRR@10 = %s  (%.1fs)",
			s.name, len(s.docs), len(s.chunks), len(s.queries), evaluate(s, kw), time.Since(start).Seconds())
		for _, v := range variants {
			dim := DefaultDim
			if d, err := strconv.Atoi(os.Getenv("RAGD_QUALITY_DIM")); err == nil {
				dim = d
			}
			e := &Embedder{dim: dim, f: v.f}
			vec := vectorRuns(t, s, e)
			line := fmt.Sprintf("%-30s vec %s", v.name, evaluate(s, vec))
			for _, w := range weightGrid {
				fused := make([][]int, len(s.queries))
				for i := range s.queries {
					fused[i] = fuse(vec[i], kw[i], w[0], w[1])
				}
				line += fmt.Sprintf(" | %.2g/%.2g %s", w[0], w[1], evaluate(s, fused))
			}
			t.Logf("%s: %s", s.name, line)
		}
	}
}

// featureVariants returns the variants named in a comma-separated list ("" or "all": every variant).
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

// TestQualityCosine reports the cosine similarity of queries to their relevant chunks (the best chunk of a
// relevant document) and to the best irrelevant chunk, which a similarity threshold must separate.
func TestQualityCosine(t *testing.T) {
	if os.Getenv("RAGD_QUALITY") == "" {
		t.Skip("set RAGD_QUALITY=1 to measure retrieval quality on ../shared/eval")
	}
	ctx := context.Background()
	e := New(0)
	for _, s := range []*qset{loadCranfield(t), loadKorQuAD(t, false)} {
		s.chunk(1000)
		dv, err := e.EmbedDocuments(ctx, s.chunks)
		if err != nil {
			t.Fatal(err)
		}
		var rel, irr []float64
		for _, q := range s.queries {
			qv, err := e.EmbedQuery(ctx, q.text)
			if err != nil {
				t.Fatal(err)
			}
			best := map[bool]float64{}
			for c, v := range dv {
				var sim float64
				for i := range v {
					sim += float64(v[i] * qv[i])
				}
				r := s.qrels[q.id][s.docs[s.chunkDoc[c]].id] > 0
				best[r] = max(best[r], sim)
			}
			rel, irr = append(rel, best[true]), append(irr, best[false])
		}
		slices.Sort(rel)
		slices.Sort(irr)
		pct := func(xs []float64, p float64) float64 { return xs[int(p*float64(len(xs)-1))] }
		t.Logf("%s: cosine of the best relevant chunk p10/p50/p90 = %.3f / %.3f / %.3f; best irrelevant chunk p10/p50/p90 = %.3f / %.3f / %.3f",
			s.name, pct(rel, 0.1), pct(rel, 0.5), pct(rel, 0.9), pct(irr, 0.1), pct(irr, 0.5), pct(irr, 0.9))
	}
}
