package qa_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/qa"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/testkit"
)

// pairDoc and pairQuestion are a board to measure: documents, and questions of which those sharing a
// group should find each other.
type pairDoc struct {
	name string
	data []byte
}

type pairQuestion struct {
	title, group string // group "" for a question without a partner
}

// pairFigures are how well a board's similar questions find the partners of the grouped questions.
type pairFigures struct {
	Groups, Found int     // groups; groups whose every question has its partners in its top 3
	Questions     int     // grouped questions
	Top1          int     // grouped questions whose best similar question is a partner
	MRR           float64 // mean reciprocal rank of the best partner (0 beyond qa.MaxSimilar)
}

func (f pairFigures) String() string {
	return fmt.Sprintf("pairs %d/%d in each other's top 3, partner first for %d/%d questions, MRR %.3f",
		f.Found, f.Groups, f.Top1, f.Questions, f.MRR)
}

// measurePairs posts the questions on a board over the documents (offline defaults: hash embedder,
// chunks of 1,000 characters) and scores GET /similar's ranking of the partners.
func measurePairs(t *testing.T, docs []pairDoc, qs []pairQuestion) pairFigures {
	t.Helper()
	ctx := t.Context()
	st := openSQLite(t)
	reqs := make([]ingest.Request, len(docs))
	for i, d := range docs {
		reqs[i] = ingest.Request{Collection: "board", Name: d.name, Data: d.data}
	}
	emb := ingestAll(t, st, 1000, reqs...)
	svc := qa.New(st, st, emb, st, nil, qa.Options{})
	ids := make([]string, len(qs))
	group := map[string]string{}
	for i, q := range qs {
		p, err := svc.Ask(ctx, rag.LocalPrincipal, qa.NewQuestion{Collection: "board", Title: q.title})
		if err != nil {
			t.Fatal(err)
		}
		ids[i], group[p.ID] = p.ID, q.group
	}
	var f pairFigures
	found := map[string]bool{}
	for i, q := range qs {
		if q.group == "" {
			continue
		}
		if _, seen := found[q.group]; !seen {
			f.Groups++
			found[q.group] = true
		}
		sim, err := svc.SimilarTo(ctx, nil, ids[i], qa.MaxSimilar)
		if err != nil {
			t.Fatal(err)
		}
		f.Questions++
		partners, inTop3 := 0, 0
		for r, s := range sim {
			if group[s.ID] != q.group {
				continue
			}
			if partners == 0 {
				f.MRR += 1 / float64(r+1)
				if r == 0 {
					f.Top1++
				}
			}
			partners++
			if r < 3 {
				inTop3++
			}
		}
		want := 0
		for _, o := range qs {
			if o.group == q.group {
				want++
			}
		}
		if inTop3 < want-1 {
			found[q.group] = false
		}
	}
	for _, ok := range found {
		if ok {
			f.Found++
		}
	}
	f.MRR /= float64(f.Questions)
	return f
}

// TestSimilarPairs measures the board's similar questions on the lecture sample's four near-duplicate
// pairs, and on KorQuAD as a board the sample did not tune: each paragraph a document, its first two
// questions a pair (they ask about one passage, mostly in words of their own). It logs the figures of
// docs/qa.md and fails below their floors.
func TestSimilarPairs(t *testing.T) {
	t.Run("Lectures", func(t *testing.T) {
		dir := testkit.Shared("samples", "lectures")
		var docs []pairDoc
		files, err := filepath.Glob(filepath.Join(dir, "*.md"))
		if err != nil || len(files) == 0 {
			t.Fatalf("lectures in %s: %v", dir, err)
		}
		for _, f := range files {
			if filepath.Base(f) == "README.md" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, pairDoc{filepath.Base(f), b})
		}
		var qs []pairQuestion
		for _, q := range testkit.ReadJSONL[struct {
			Question string  `json:"question"`
			DupGroup *string `json:"dup_group"`
		}](t, filepath.Join(dir, "questions.jsonl")) {
			pq := pairQuestion{title: q.Question}
			if q.DupGroup != nil {
				pq.group = *q.DupGroup
			}
			qs = append(qs, pq)
		}
		f := measurePairs(t, docs, qs)
		t.Logf("lectures: %v", f)
		if f.Groups != 4 || f.Found < 3 {
			t.Errorf("below the floor of 3 pairs")
		}
	})
	for _, tc := range []struct {
		first, n, floor int
	}{{0, 6, 20}, {10, 15, 48}} {
		t.Run(fmt.Sprintf("KorQuAD%d-%d", tc.first, tc.first+tc.n-1), func(t *testing.T) {
			docs, qs := korquadPairs(t, tc.first, tc.n)
			f := measurePairs(t, docs, qs)
			t.Logf("KorQuAD articles %d-%d (%d paragraphs): %v", tc.first, tc.first+tc.n-1, len(docs), f)
			if f.Found < tc.floor {
				t.Errorf("below the floor of %d pairs", tc.floor)
			}
		})
	}
}

// korquadPairs reads n articles of KorQuAD 1.0 dev from the first: each paragraph a document, its first two
// questions a pair.
func korquadPairs(t *testing.T, first, n int) ([]pairDoc, []pairQuestion) {
	t.Helper()
	b, err := os.ReadFile(testkit.Shared("eval", "korquad", "KorQuAD_v1.0_dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	var kq struct {
		Data []struct {
			Paragraphs []struct {
				Context string `json:"context"`
				Qas     []struct {
					Question string `json:"question"`
				} `json:"qas"`
			} `json:"paragraphs"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &kq); err != nil {
		t.Fatal(err)
	}
	var docs []pairDoc
	var qs []pairQuestion
	for a := first; a < first+n && a < len(kq.Data); a++ {
		for p, para := range kq.Data[a].Paragraphs {
			if len(para.Qas) < 2 {
				continue
			}
			id := fmt.Sprintf("%d-%d", a, p)
			docs = append(docs, pairDoc{id + ".txt", []byte(para.Context)})
			for _, q := range para.Qas[:2] {
				qs = append(qs, pairQuestion{title: strings.TrimSpace(q.Question), group: id})
			}
		}
	}
	return docs, qs
}
