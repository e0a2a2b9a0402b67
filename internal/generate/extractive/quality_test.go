package extractive

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/chunk"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
	"golang.org/x/text/unicode/norm"
)

// korquadPath is the KorQuAD 1.0 dev set, relative to this package's directory.
const korquadPath = "../../../../shared/eval/korquad/KorQuAD_v1.0_dev.json"

type squad struct {
	Data []struct {
		Title      string `json:"title"`
		Paragraphs []struct {
			Context string `json:"context"`
			QAs     []struct {
				ID       string `json:"id"`
				Question string `json:"question"`
				Answers  []struct {
					Text string `json:"text"`
				} `json:"answers"`
			} `json:"qas"`
		} `json:"paragraphs"`
	} `json:"data"`
}

type qaCase struct {
	question string
	answers  []string
	para     int // index of the question's own paragraph
}

// bm25 is a small in-memory BM25 (k1 0.9, b 0.4) over the analyzer's terms, standing in for retrieval.
type bm25 struct {
	docs  []map[string]int
	lens  []int
	avg   float64
	df    map[string]int
	k1, b float64
}

func newBM25(texts []string) *bm25 {
	ix := &bm25{df: map[string]int{}, k1: 0.9, b: 0.4}
	total := 0
	for _, t := range texts {
		tf := map[string]int{}
		terms := textproc.IndexTerms(t)
		for _, term := range terms {
			tf[term]++
		}
		for term := range tf {
			ix.df[term]++
		}
		ix.docs = append(ix.docs, tf)
		ix.lens = append(ix.lens, len(terms))
		total += len(terms)
	}
	ix.avg = float64(total) / float64(len(texts))
	return ix
}

type scored struct {
	doc   int
	score float64
}

func (ix *bm25) search(query string, k int) []scored {
	var out []scored
	n := float64(len(ix.docs))
	q := textproc.QueryTerms(query)
	for d, tf := range ix.docs {
		s := 0.0
		for _, t := range q {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(ix.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * f * (ix.k1 + 1) / (f + ix.k1*(1-ix.b+ix.b*float64(ix.lens[d])/ix.avg))
		}
		if s > 0 {
			out = append(out, scored{d, s})
		}
	}
	slices.SortFunc(out, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	return out[:min(k, len(out))]
}

func loadKorQuAD(t testing.TB) (paras, titles []string, cases []qaCase) {
	t.Helper()
	data, err := os.ReadFile(korquadPath)
	if err != nil {
		t.Fatalf("read KorQuAD: %v", err)
	}
	var ds squad
	if err := json.Unmarshal(data, &ds); err != nil {
		t.Fatalf("parse KorQuAD: %v", err)
	}
	for _, a := range ds.Data {
		for _, p := range a.Paragraphs {
			for _, qa := range p.QAs {
				c := qaCase{question: qa.Question, para: len(paras)}
				for _, ans := range qa.Answers {
					c.answers = append(c.answers, ans.Text)
				}
				cases = append(cases, c)
			}
			paras = append(paras, p.Context)
			titles = append(titles, a.Title)
		}
	}
	return paras, titles, cases
}

func percentile(xs []int, p float64) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(math.Ceil(p*float64(len(s))))-1)]
}

func containsAnswer(text string, answers []string) bool {
	t := norm.NFKC.String(text)
	for _, a := range answers {
		if a = strings.TrimSpace(norm.NFKC.String(a)); a != "" && strings.Contains(t, a) {
			return true
		}
	}
	return false
}

type qualityResult struct {
	contains, notFound float64
	p50, p95           int
}

func measure(t *testing.T, g *Generator, cases []qaCase, passages [][]rag.Passage) qualityResult {
	t.Helper()
	var hits, notFound int
	var lens []int
	for i, c := range cases {
		gen, err := g.Generate(context.Background(), rag.GenerateRequest{Question: c.question, Language: "ko",
			Passages: passages[i]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if containsAnswer(gen.Text, c.answers) {
			hits++
		}
		if strings.HasPrefix(gen.Text, "제공된 문서에서") {
			notFound++
		}
		lens = append(lens, utf8.RuneCountInString(gen.Text))
	}
	n := float64(len(cases))
	return qualityResult{float64(hits) / n, float64(notFound) / n, percentile(lens, 0.5), percentile(lens, 0.95)}
}

// TestQualityKorQuAD measures answer_contains and answer lengths on KorQuAD 1.0 dev: every question gets the
// top passages of an in-memory BM25 over the analyzer's terms (RAGD_QUALITY_K, default 3). Run with
//
//	RAGD_QUALITY=1 go test -run TestQualityKorQuAD -v ./internal/generate/extractive/
func TestQualityKorQuAD(t *testing.T) {
	if os.Getenv("RAGD_QUALITY") != "1" {
		t.Skip("set RAGD_QUALITY=1 to measure answer quality on KorQuAD")
	}
	k := 3
	if v, err := strconv.Atoi(os.Getenv("RAGD_QUALITY_K")); err == nil && v > 0 {
		k = v
	}
	paras, titles, cases := loadKorQuAD(t)
	ix := newBM25(paras)
	passages := make([][]rag.Passage, len(cases))
	found := 0
	for i, c := range cases {
		for r, h := range ix.search(c.question, k) {
			passages[i] = append(passages[i], rag.Passage{N: r + 1, Title: titles[h.doc], Text: paras[h.doc], Score: h.score})
			if h.doc == c.para {
				found++
			}
		}
	}
	t.Logf("KorQuAD dev: %d questions, %d paragraphs; BM25 recall@%d %.3f", len(cases), len(paras), k,
		float64(found)/float64(len(cases)))
	for _, maxChars := range []int{200, 250, DefaultMaxChars, 350, 400} {
		r := measure(t, New(Options{MaxChars: maxChars}), cases, passages)
		t.Logf("MaxChars %3d: answer_contains %.3f  answer_chars_p50 %d  p95 %d  not_found %.3f", maxChars,
			r.contains, r.p50, r.p95, r.notFound)
	}
	// The plain baseline of ../shared/eval/README.md under the same retrieval, to calibrate the harness.
	for _, limit := range []int{212, 281, 360} {
		var hits int
		var lens []int
		for i, c := range cases {
			text := baseline(c.question, passages[i], limit)
			if containsAnswer(text, c.answers) {
				hits++
			}
			lens = append(lens, utf8.RuneCountInString(text))
		}
		t.Logf("baseline limit %d: answer_contains %.3f  answer_chars_p50 %d", limit,
			float64(hits)/float64(len(cases)), percentile(lens, 0.5))
	}
	r := measure(t, New(Options{}), cases, passages)
	fmt.Printf("answer_contains %.3f answer_chars_p50 %d answer_chars_p95 %d\n", r.contains, r.p50, r.p95)
	if r.contains < 0.90 || r.p50 > 300 {
		t.Errorf("answer_contains %.3f at a %d-character median; want ≥ 0.90 at ≤ 300", r.contains, r.p50)
	}
}

// baseline ranks the passages' sentences by how many distinct question terms they share and keeps them,
// best first, while they fit in limit characters (at least one).
func baseline(question string, passages []rag.Passage, limit int) string {
	q := map[string]bool{}
	for _, t := range textproc.IndexTerms(question) {
		q[t] = true
	}
	type cand struct {
		text string
		hits int
	}
	var cs []cand
	for _, p := range passages {
		for _, sp := range chunk.Sentences(p.Text) {
			text := p.Text[sp.Start:sp.End]
			hits := 0
			for t := range termSet(text) {
				if q[t] {
					hits++
				}
			}
			cs = append(cs, cand{text, hits})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(b.hits, a.hits) })
	var out []string
	used := 0
	for _, c := range cs {
		l := utf8.RuneCountInString(c.text) + 1
		if len(out) > 0 && used+l > limit {
			break
		}
		out = append(out, c.text)
		used += l
	}
	return strings.Join(out, " ")
}

// BenchmarkGenerate answers KorQuAD questions from five retrieved paragraphs each.
func BenchmarkGenerate(b *testing.B) {
	paras, titles, cases := loadKorQuAD(b)
	ix := newBM25(paras)
	const n = 200
	reqs := make([]rag.GenerateRequest, n)
	for i := range reqs {
		c := cases[i*len(cases)/n]
		reqs[i] = rag.GenerateRequest{Question: c.question, Language: "ko"}
		for r, h := range ix.search(c.question, 5) {
			reqs[i].Passages = append(reqs[i].Passages, rag.Passage{N: r + 1, Title: titles[h.doc], Text: paras[h.doc]})
		}
	}
	g := New(Options{})
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, err := g.Generate(context.Background(), reqs[i%n], nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
