package e2e

import (
	"path/filepath"
	"testing"
)

// report is what `ragd eval --json` prints.
type report struct {
	NDCG10         float64  `json:"ndcg@10"`
	Recall5        float64  `json:"recall@5"`
	Precision5     float64  `json:"precision@5"`
	MRR10          float64  `json:"mrr@10"`
	Queries        int      `json:"queries"`
	LatencyP50     float64  `json:"latency_ms_p50"`
	LatencyP95     float64  `json:"latency_ms_p95"`
	IndexSeconds   float64  `json:"index_seconds"`
	AnswerContains *float64 `json:"answer_contains"`
	AnswerCharsP50 *float64 `json:"answer_chars_p50"`
	AnswerMSP95    *float64 `json:"answer_ms_p95"`
}

// TestEvalQuality is the retrieval and answer quality gate of issue 2: the offline defaults must beat every
// reference row of shared/eval/README.md. A retrieval change that falls below fails here.
func TestEvalQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes and queries the shared evaluation sets (minutes)")
	}
	t.Run("Cranfield", func(t *testing.T) {
		var rep report
		mustJSON(t, ragd(t, nil, "eval", "--json", filepath.Join(shared, "eval", "cranfield")), &rep)
		t.Logf("cranfield: %+v", rep)
		if rep.Queries != 225 || rep.NDCG10 < 0.37 {
			t.Errorf("Cranfield nDCG@10 = %.4f over %d queries, want ≥ 0.37 over 225", rep.NDCG10, rep.Queries)
		}
		if rep.Recall5 < 0.297 || rep.MRR10 < 0.515 {
			t.Errorf("Cranfield Recall@5 %.4f / MRR@10 %.4f below FTS5 porter BM25 (0.297 / 0.515)", rep.Recall5, rep.MRR10)
		}
	})
	t.Run("KorQuAD", func(t *testing.T) {
		var rep report
		mustJSON(t, ragd(t, nil, "eval", "--json", "--answers", filepath.Join(shared, "eval", "korquad", "KorQuAD_v1.0_dev.json")), &rep)
		t.Logf("korquad: %+v answers %.4f / %.0f chars / %.1f ms", rep, deref(rep.AnswerContains), deref(rep.AnswerCharsP50), deref(rep.AnswerMSP95))
		if rep.Queries != 5774 || rep.NDCG10 < 0.95 || rep.Recall5 < 0.98 {
			t.Errorf("KorQuAD nDCG@10 %.4f, Recall@5 %.4f over %d queries; want ≥ 0.95 and ≥ 0.98 over 5774", rep.NDCG10, rep.Recall5, rep.Queries)
		}
		if rep.AnswerContains == nil || *rep.AnswerContains < 0.90 || *rep.AnswerCharsP50 > 300 {
			t.Errorf("answers: contains %.4f at a %.0f-character median; want ≥ 0.90 at ≤ 300", deref(rep.AnswerContains), deref(rep.AnswerCharsP50))
		}
	})
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}
