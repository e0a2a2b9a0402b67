package scale

import (
	"bytes"
	"encoding/json"
	"math"
	"os/exec"
	"testing"

	"github.com/ragd/ragd/internal/testkit"
)

// evalReport is the part of `ragd eval --json` compared between the stores.
type evalReport struct {
	Dataset    string  `json:"dataset"`
	Documents  int     `json:"documents"`
	Queries    int     `json:"queries"`
	NDCG10     float64 `json:"ndcg@10"`
	Recall5    float64 `json:"recall@5"`
	Precision5 float64 `json:"precision@5"`
	MRR10      float64 `json:"mrr@10"`
}

func runEval(t *testing.T, b backend, dataset string) evalReport {
	t.Helper()
	cmd := exec.Command(testkit.Binary(t), "eval", "--json", dataset)
	cmd.Env = b.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ragd eval on %s: %v\n%s", b.name, err, tail(stderr.String(), 4000))
	}
	var r evalReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("ragd eval on %s: %v\n%s", b.name, err, out)
	}
	return r
}

// TestEvalParity runs `ragd eval` on the Cranfield set against the embedded store and against PostgreSQL:
// every figure must be within 0.01 of the other store's (docs/scaling.md has both stores' figures on both
// shared sets).
func TestEvalParity(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes and evaluates Cranfield twice")
	}
	pg := pgBackend(t)
	const dataset = "../../../shared/eval/cranfield"
	lite := runEval(t, backend{name: "sqlite", dataDir: t.TempDir()}, dataset)
	post := runEval(t, pg, dataset)
	t.Logf("sqlite:   %+v", lite)
	t.Logf("postgres: %+v", post)
	if lite.Documents != post.Documents || lite.Queries != post.Queries || lite.Queries == 0 {
		t.Fatalf("different runs: %d/%d documents, %d/%d queries", lite.Documents, post.Documents, lite.Queries, post.Queries)
	}
	for _, m := range []struct {
		name       string
		lite, post float64
	}{
		{"nDCG@10", lite.NDCG10, post.NDCG10}, {"Recall@5", lite.Recall5, post.Recall5},
		{"Precision@5", lite.Precision5, post.Precision5}, {"MRR@10", lite.MRR10, post.MRR10},
	} {
		if math.Abs(m.lite-m.post) > 0.01 {
			t.Errorf("%s: sqlite %.4f, postgres %.4f: more than 0.01 apart", m.name, m.lite, m.post)
		}
	}
}
