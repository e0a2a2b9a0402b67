package sqlite

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// evalDir is the shared evaluation data, beside the repository.
const evalDir = "../../../../shared/eval"

type evalSet struct {
	docs    map[string]string         // external id → text
	queries []evalQuery               // in file order
	qrels   map[string]map[string]int // query id → external id → grade
}

type evalQuery struct{ id, text string }

func loadCranfield(t *testing.T) evalSet {
	t.Helper()
	dir := filepath.Join(evalDir, "cranfield")
	set := evalSet{docs: map[string]string{}, qrels: map[string]map[string]int{}}
	readJSONL(t, filepath.Join(dir, "corpus.jsonl"), func(line []byte) error {
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			return err
		}
		set.docs[d.ID] = d.Title + "\n" + d.Text
		return nil
	})
	readJSONL(t, filepath.Join(dir, "queries.jsonl"), func(line []byte) error {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(line, &q); err != nil {
			return err
		}
		set.queries = append(set.queries, evalQuery{q.ID, q.Text})
		return nil
	})
	f, err := os.Open(filepath.Join(dir, "qrels", "test.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		grade, err := strconv.Atoi(parts[2])
		if err != nil || grade <= 0 {
			continue
		}
		if set.qrels[parts[0]] == nil {
			set.qrels[parts[0]] = map[string]int{}
		}
		set.qrels[parts[0]][parts[1]] = grade
	}
	return set
}

func readJSONL(t *testing.T, path string, fn func([]byte) error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if err := fn(sc.Bytes()); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}

// loadKorQuAD reads the SQuAD file: paragraph "<article>-<paragraph>" is each of its questions' answer.
func loadKorQuAD(t *testing.T, maxQueries int) evalSet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(evalDir, "korquad", "KorQuAD_v1.0_dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Data []struct {
			Paragraphs []struct {
				Context string
				Qas     []struct{ ID, Question string }
			}
		}
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	set := evalSet{docs: map[string]string{}, qrels: map[string]map[string]int{}}
	for a, art := range raw.Data {
		for p, par := range art.Paragraphs {
			ext := fmt.Sprintf("%d-%d", a, p)
			set.docs[ext] = par.Context
			for _, q := range par.Qas {
				set.queries = append(set.queries, evalQuery{q.ID, q.Question})
				set.qrels[q.ID] = map[string]int{ext: 1}
			}
		}
	}
	// Every n-th question, so that all articles are represented.
	step := max(1, len(set.queries)/maxQueries)
	var sample []evalQuery
	for i := 0; i < len(set.queries) && len(sample) < maxQueries; i += step {
		sample = append(sample, set.queries[i])
	}
	set.queries = sample
	return set
}

func ndcg10(ranked []string, rel map[string]int) float64 {
	var dcg float64
	for i, ext := range ranked {
		if i == 10 {
			break
		}
		dcg += float64(rel[ext]) / math.Log2(float64(i+2))
	}
	var grades []int
	for _, g := range rel {
		grades = append(grades, g)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	var ideal float64
	for i, g := range grades {
		if i == 10 {
			break
		}
		ideal += float64(g) / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

// TestKeywordQuality indexes the shared evaluation sets (one chunk per corpus entry) and checks that keyword
// candidates alone reach the quality of FTS5 BM25 in ../shared/eval/README.md, and that the pruned query
// ranks exactly as the plain one on real data.
func TestKeywordQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes the evaluation sets")
	}
	for _, tc := range []struct {
		name string
		load func(t *testing.T) evalSet
		min  float64
	}{
		{"Cranfield", loadCranfield, 0.33},
		{"KorQuAD", func(t *testing.T) evalSet { return loadKorQuAD(t, 600) }, 0.88},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := tc.load(t)
			ctx := context.Background()
			s, err := Open(ctx, t.TempDir(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			coll, _ := s.EnsureCollection(ctx, "eval", "local")
			sp := rag.Space{Provider: "t", Model: "m", Dim: 2}
			byChunk := map[int64]string{}
			for ext, text := range set.docs {
				d := &rag.Document{CollectionID: coll.ID, ExternalID: ext, Owner: "local"}
				if err := s.CreateDocument(ctx, d); err != nil {
					t.Fatal(err)
				}
				if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, Space: sp,
					Chunks: []rag.Chunk{{Text: text, Vector: []float32{1, 0}}}}); err != nil {
					t.Fatal(err)
				}
				chunks, _ := s.ListChunks(ctx, rag.LocalPrincipal, d.ID)
				byChunk[chunks[0].ID] = ext
			}
			var sum float64
			for _, q := range set.queries {
				terms := textproc.QueryTerms(q.text)
				got, err := s.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: terms, K: 10})
				if err != nil {
					t.Fatal(err)
				}
				compareRankings(t, q.text, got, referenceKeyword(t, s, rag.LocalPrincipal, terms, rag.Filter{}, 60), 10)
				var ranked []string
				for _, c := range got {
					ranked = append(ranked, byChunk[c.ChunkID])
				}
				sum += ndcg10(ranked, set.qrels[q.id])
			}
			score := sum / float64(len(set.queries))
			pruned, full := s.terms.pruned.Load(), s.terms.full.Load()
			t.Logf("%s keyword-only nDCG@10 = %.3f over %d queries (%d answered by the pruned round, %d in full)",
				tc.name, score, len(set.queries), pruned, full)
			if score < tc.min {
				t.Errorf("nDCG@10 %.3f < %.2f", score, tc.min)
			}
		})
	}
}
