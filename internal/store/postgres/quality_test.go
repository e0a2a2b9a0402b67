package postgres

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// TestKeywordQualityCranfield ranks the Cranfield set (../shared/eval) with KeywordCandidates alone and checks
// nDCG@10 against the figures of ../shared/eval/README.md: it must clearly beat PostgreSQL's ts_rank_cd
// (0.232), which is what this BM25 replaces. Each abstract is one chunk.
func TestKeywordQualityCranfield(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 1,400 documents")
	}
	s := openStore(t, Options{})
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "eval", "cranfield")
	type rec struct {
		ID   string `json:"_id"`
		Text string `json:"text"`
	}
	readJSONL := func(name string) []rec {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Skipf("the Cranfield set is not there: %v", err)
		}
		defer f.Close()
		var out []rec
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var r rec
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	corpus, queries := readJSONL("corpus.jsonl"), readJSONL("queries.jsonl")
	qrels := map[string]map[string]float64{}
	b, err := os.ReadFile(filepath.Join(dir, "qrels", "test.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 || len(f) != 3 {
			continue
		}
		g, _ := strconv.ParseFloat(f[2], 64)
		if g > 0 {
			if qrels[f[0]] == nil {
				qrels[f[0]] = map[string]float64{}
			}
			qrels[f[0]][f[1]] = g
		}
	}

	ctx := t.Context()
	coll, err := s.EnsureCollection(ctx, "cranfield", "local")
	if err != nil {
		t.Fatal(err)
	}
	space := rag.Space{Provider: "test", Model: "none", Dim: 1}
	docOf := map[int64]string{}
	for _, r := range corpus {
		d := &rag.Document{CollectionID: coll.ID, ExternalID: r.ID, Owner: "local"}
		if err := s.CreateDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: r.ID, Space: space,
			Chunks: []rag.Chunk{{Text: r.Text, Vector: []float32{1}}}}); err != nil {
			t.Fatal(err)
		}
		cs, err := s.ListChunks(ctx, rag.LocalPrincipal, d.ID)
		if err != nil || len(cs) != 1 {
			t.Fatalf("chunks of %s: %v, %v", r.ID, cs, err)
		}
		docOf[cs[0].ID] = r.ID
	}
	var sum float64
	n := 0
	for _, q := range queries {
		rel := qrels[q.ID]
		if len(rel) == 0 {
			continue
		}
		cands, err := s.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms(q.Text), K: 10})
		if err != nil {
			t.Fatal(err)
		}
		var dcg float64
		for i, c := range cands {
			dcg += rel[docOf[c.ChunkID]] / math.Log2(float64(i+2))
		}
		var gains []float64
		for _, g := range rel {
			gains = append(gains, g)
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(gains)))
		var idcg float64
		for i := 0; i < 10 && i < len(gains); i++ {
			idcg += gains[i] / math.Log2(float64(i+2))
		}
		sum += dcg / idcg
		n++
	}
	ndcg := sum / float64(n)
	t.Logf("Cranfield keyword-only nDCG@10 = %.3f over %d queries (README: FTS5 porter 0.350, ts_rank_cd 0.232)", ndcg, n)
	if ndcg < 0.30 {
		t.Errorf("nDCG@10 %.3f: keyword ranking is not of BM25 quality", ndcg)
	}
}
