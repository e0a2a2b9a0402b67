package extractive

import (
	"cmp"
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/chunk"
	"github.com/ragd/ragd/internal/eval"
	"github.com/ragd/ragd/internal/eval/bm25"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
	"golang.org/x/text/unicode/norm"
)

// korquadPath is the KorQuAD 1.0 dev set, relative to this package's directory.
const korquadPath = "../../../../shared/eval/korquad/KorQuAD_v1.0_dev.json"

type qaCase struct {
	question string
	answers  []string
	para     int // index of the question's own paragraph
}

// korquad is KorQuAD 1.0 dev read by internal/eval, with an in-memory BM25 (internal/eval/bm25, k1 0.9,
// b 0.4) over the analyzer's terms of its paragraphs standing in for retrieval.
type korquad struct {
	paras, titles []string
	cases         []qaCase
	ix            *bm25.Index
}

func loadKorQuAD(t testing.TB) *korquad {
	t.Helper()
	ds, err := eval.Load(korquadPath)
	if err != nil {
		t.Fatal(err)
	}
	kq := &korquad{}
	index := map[string]int{}
	terms := make([][]string, len(ds.Docs))
	for i, d := range ds.Docs {
		index[d.ID] = i
		kq.paras = append(kq.paras, d.Text)
		kq.titles = append(kq.titles, d.Title)
		terms[i] = textproc.IndexTerms(d.Text)
	}
	for _, q := range ds.Queries {
		c := qaCase{question: q.Text, answers: q.Answers}
		for id := range q.Relevant {
			c.para = index[id]
		}
		kq.cases = append(kq.cases, c)
	}
	kq.ix = bm25.New(terms, 0.9, 0.4)
	return kq
}

// passages returns the top k paragraphs for question as passages [1]..[k].
func (kq *korquad) passages(question string, k int) ([]rag.Passage, []int) {
	top := kq.ix.Search(textproc.QueryTerms(question), k)
	out := make([]rag.Passage, len(top))
	for r, d := range top {
		out[r] = rag.Passage{N: r + 1, Title: kq.titles[d], Text: kq.paras[d]}
	}
	return out, top
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

func measure(t testing.TB, g *Generator, cases []qaCase, passages [][]rag.Passage) qualityResult {
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

// BenchmarkQualityKorQuAD measures answer_contains and answer lengths on KorQuAD 1.0 dev: every question
// gets the top passages of an in-memory BM25 over the analyzer's terms (RAGD_QUALITY_K, default 3). It
// reports the figures as metrics and logs the MaxChars variants and the plain baseline of
// ../shared/eval/README.md under the same retrieval; `ragd eval … --answers` measures the whole pipeline.
//
//	go test -run '^$' -bench QualityKorQuAD -benchtime 1x -v ./internal/generate/extractive/
func BenchmarkQualityKorQuAD(b *testing.B) {
	k := 3
	if v, err := strconv.Atoi(os.Getenv("RAGD_QUALITY_K")); err == nil && v > 0 {
		k = v
	}
	kq := loadKorQuAD(b)
	passages := make([][]rag.Passage, len(kq.cases))
	found := 0
	for i, c := range kq.cases {
		var top []int
		passages[i], top = kq.passages(c.question, k)
		if slices.Contains(top, c.para) {
			found++
		}
	}
	b.Logf("KorQuAD dev: %d questions, %d paragraphs; BM25 recall@%d %.3f", len(kq.cases), len(kq.paras), k,
		float64(found)/float64(len(kq.cases)))
	for _, maxChars := range []int{200, 250, 350, 400} {
		r := measure(b, New(Options{MaxChars: maxChars}), kq.cases, passages)
		b.Logf("MaxChars %3d: answer_contains %.3f  answer_chars_p50 %d  p95 %d  not_found %.3f", maxChars,
			r.contains, r.p50, r.p95, r.notFound)
	}
	for _, limit := range []int{212, 281, 360} {
		var hits int
		var lens []int
		for i, c := range kq.cases {
			text := baseline(c.question, passages[i], limit)
			if containsAnswer(text, c.answers) {
				hits++
			}
			lens = append(lens, utf8.RuneCountInString(text))
		}
		b.Logf("baseline limit %d: answer_contains %.3f  answer_chars_p50 %d", limit,
			float64(hits)/float64(len(kq.cases)), percentile(lens, 0.5))
	}
	var r qualityResult
	for b.Loop() {
		r = measure(b, New(Options{}), kq.cases, passages)
	}
	b.ReportMetric(r.contains, "answer_contains")
	b.ReportMetric(float64(r.p50), "chars_p50")
	b.ReportMetric(float64(r.p95), "chars_p95")
	b.ReportMetric(r.notFound, "not_found")
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
	kq := loadKorQuAD(b)
	const n = 200
	reqs := make([]rag.GenerateRequest, n)
	for i := range reqs {
		c := kq.cases[i*len(kq.cases)/n]
		reqs[i] = rag.GenerateRequest{Question: c.question, Language: "ko"}
		reqs[i].Passages, _ = kq.passages(c.question, 5)
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
