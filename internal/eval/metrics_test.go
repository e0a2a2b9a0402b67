package eval

import (
	"math"
	"strings"
	"testing"
)

func TestMetrics(t *testing.T) {
	rel := map[string]int{"a": 2, "b": 1, "z": 0}
	tests := []struct {
		name                  string
		ranked                []string
		ndcg, recall, p5, mrr float64
	}{
		{"Ideal", []string{"a", "b", "x"}, 1, 1, 0.4, 1},
		{"Swapped", []string{"b", "a"}, (1 + 3/math.Log2(3)) / (3 + 1/math.Log2(3)), 1, 0.4, 1},
		{"NoneRelevant", []string{"x", "y", "z"}, 0, 0, 0, 0},
		{"SecondPlace", []string{"x", "a"}, (3 / math.Log2(3)) / (3 + 1/math.Log2(3)), 0.5, 0.2, 0.5},
		{"Empty", nil, 0, 0, 0, 0},
		{"RelevantBeyondCutoff", []string{"1", "2", "3", "4", "5", "a"}, 3 / math.Log2(7) / (3 + 1/math.Log2(3)), 0, 0, 1.0 / 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(what string, got, want float64) {
				t.Helper()
				if math.Abs(got-want) > 1e-9 {
					t.Errorf("%s = %.6f, want %.6f", what, got, want)
				}
			}
			check("nDCG@10", NDCG(tt.ranked, rel, 10), tt.ndcg)
			check("Recall@5", Recall(tt.ranked, rel, 5), tt.recall)
			check("P@5", Precision(tt.ranked, rel, 5), tt.p5)
			check("MRR@10", MRR(tt.ranked, rel, 10), tt.mrr)
		})
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	if got := percentile(xs, 50); got != 5 {
		t.Errorf("p50 = %v, want 5", got)
	}
	if got := percentile(xs, 95); got != 10 {
		t.Errorf("p95 = %v, want 10", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %v, want 0", got)
	}
}

func TestContainsAnswer(t *testing.T) {
	tests := []struct {
		answer string
		gold   []string
		want   bool
	}{
		{"1989년 2월 15일 [1]에 발표되었다.", []string{"1989년 2월 15일"}, true},
		{"교향곡은 1839년에 [2] 완성되었다.", []string{"1839년에 완성"}, true},
		{"Ｆｕｌｌwidth ABC", []string{"Fullwidth"}, true},
		{"nothing here", []string{"absent", ""}, false},
		{"| 01/15/2016 | Walmart | Oakland | 397 | Closure |", []string{"Walmart Oakland 397"}, true},
		{"| Walmart | Oakland | 59 |", []string{"Walmart Oakland 397"}, false},
	}
	for _, tt := range tests {
		if got := ContainsAnswer(tt.answer, tt.gold); got != tt.want {
			t.Errorf("ContainsAnswer(%q, %q) = %v, want %v", tt.answer, tt.gold, got, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Run("BEIR", func(t *testing.T) {
		ds, err := Load("../../../shared/eval/cranfield")
		if err != nil {
			t.Fatal(err)
		}
		if len(ds.Docs) != 1400 || len(ds.Queries) != 225 {
			t.Fatalf("cranfield: %d docs, %d queries; want 1400, 225", len(ds.Docs), len(ds.Queries))
		}
		if ds.Queries[0].Relevant["184"] != 3 {
			t.Errorf("query 1 → doc 184 grade = %d, want 3", ds.Queries[0].Relevant["184"])
		}
	})
	t.Run("SQuAD", func(t *testing.T) {
		ds, err := Load("../../../shared/eval/korquad/KorQuAD_v1.0_dev.json")
		if err != nil {
			t.Fatal(err)
		}
		if len(ds.Docs) != 964 || len(ds.Queries) != 5774 {
			t.Fatalf("korquad: %d paragraphs, %d questions; want 964, 5774", len(ds.Docs), len(ds.Queries))
		}
		q := ds.Queries[0]
		if q.Relevant["0-0"] != 1 || len(q.Answers) == 0 {
			t.Errorf("first question: relevant %v answers %v", q.Relevant, q.Answers)
		}
	})
	t.Run("Missing", func(t *testing.T) {
		if _, err := Load("does-not-exist"); err == nil {
			t.Error("want an error for a missing dataset")
		}
	})
}

func TestRankedPagesAndHit(t *testing.T) {
	hits := []hitRef{{"a.pdf", 2, 3}, {"b.md", 0, 0}, {"a.pdf", 3, 3}, {"a.pdf", 1, 1}}
	got := rankedPages(hits, 10)
	want := []string{"a.pdf#2", "a.pdf#3", "b.md#0", "a.pdf#1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("rankedPages = %v, want %v", got, want)
	}
	if got := rankedPages(hits, 2); len(got) != 2 {
		t.Errorf("rankedPages k=2 gave %d", len(got))
	}
	if got := rankedDocs(hits, 10); strings.Join(got, " ") != "a.pdf b.md" {
		t.Errorf("rankedDocs = %v", got)
	}
	var r Retrieval
	r.accumulate([]string{"x", "a.pdf#1"}, map[string]int{"a.pdf#1": 1})                     // hit at rank 2
	r.accumulate([]string{"1", "2", "3", "4", "5", "a.pdf#1"}, map[string]int{"a.pdf#1": 1}) // rank 6: no hit@5
	r.mean()
	if r.Queries != 2 || r.Hit5 != 0.5 || math.Abs(r.MRR10-(0.5+1.0/6)/2) > 1e-9 || r.Recall5 != 0.5 {
		t.Errorf("figures = %+v", r)
	}
}
