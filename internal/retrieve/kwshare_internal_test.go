package retrieve

import (
	"math"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// The keyword feedback list weighs by the query's alphabet words with the hash embedder's default weights:
// an English question leans on the best matches' vocabulary, a Korean one keeps the light share.
func TestFeedbackShare(t *testing.T) {
	hash := &Retriever{opt: Options{}.WithDefaultsFor(rag.Space{Provider: "hash", Model: "v1", Dim: 768})}
	explicit := &Retriever{opt: Options{VectorWeight: 0.2, KeywordWeight: 0.8}.WithDefaultsFor(rag.Space{Provider: "hash", Model: "v1", Dim: 768})}
	for _, tt := range []struct {
		r     *Retriever
		query string
		want  float64
	}{
		{hash, "what is the effect of wing flutter at high speed", 0.8},
		{hash, "이 법의 시행일은 언제인가요?", 0.2},
		{hash, "플러터 wing flutter", 0.2/3 + 0.8*2/3},
		{explicit, "what is the effect of wing flutter at high speed", 0.2},
		{explicit, "이 법의 시행일은 언제인가요?", 0.2},
	} {
		if got := tt.r.feedbackShare(tt.query); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("feedbackShare(%q) = %g, want %g (scriptShare %v)", tt.query, got, tt.want, tt.r.opt.scriptShare)
		}
	}
	if err := (Options{KeywordFeedback: 10, KeywordFeedbackTerms: 20, KeywordFeedbackQuery: 0.5, KeywordFeedbackShare: 0.2,
		KeywordFeedbackAlphabetShare: 1.5, VectorWeight: 0.2, KeywordWeight: 0.8, RRFK: 60, Candidates: 100, DefaultK: 10, MaxK: 100}).validate(); err == nil {
		t.Error("validate accepted an alphabet share of 1.5")
	}
}
