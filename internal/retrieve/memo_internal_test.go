package retrieve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// TestMemoAgreesWithAnalysis: the memoised term set, word frequencies and query words are those computed
// afresh, under concurrent use.
func TestMemoAgreesWithAnalysis(t *testing.T) {
	texts := []string{
		"Boundary layer transition on a heated flat plate at supersonic speeds.",
		"국회법 일부개정법률안(이수진의원 대표발의) 발의연월일 : 2023. 11. 9.",
		"React는 UI를 요청하고 제공하는 세 가지 단계를 거칩니다: 촉발, 렌더링, 커밋.",
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, text := range texts {
				want := map[string]struct{}{}
				for _, term := range textproc.IndexTerms(text) {
					want[term] = struct{}{}
				}
				if got := termSet(text); !maps.Equal(got, want) {
					t.Errorf("termSet(%q) differs from IndexTerms", text)
				}
				if got, want := wordFrequencies(text), analyseWordFreq(text); !maps.Equal(got.tf, want.tf) || got.words != want.words {
					t.Errorf("wordFrequencies(%q) = %v, want %v", text, got, want)
				}
				if got, want := fmt.Sprint(queryWords(text)), fmt.Sprint(analyseQueryWords(text)); got != want {
					t.Errorf("queryWords(%q) = %s, want %s", text, got, want)
				}
			}
		}()
	}
	wg.Wait()
}

// countingEmbedder embeds a text as its length and counts the texts it was asked for; fail makes it err.
type countingEmbedder struct {
	texts int
	fail  bool
}

func (e *countingEmbedder) Space() rag.Space {
	return rag.Space{Provider: "test", Model: "len", Dim: 1}
}
func (e *countingEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	return []float32{float32(len(text))}, nil
}
func (e *countingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if e.fail {
		return nil, errors.New("provider down")
	}
	e.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t))}
	}
	return out, nil
}

// TestEmbedPassagesMemo: feedback's passage embeddings are asked of the embedder once per text; a failed
// call is not remembered.
func TestEmbedPassagesMemo(t *testing.T) {
	e := &countingEmbedder{}
	r := &Retriever{embedder: e, vectors: newVectorMemo()}
	got, err := r.embedPassages(t.Context(), []string{"a", "bb", "ccc"})
	if err != nil || e.texts != 3 || got[2][0] != 3 {
		t.Fatalf("first call: %v, %v after %d texts", got, err, e.texts)
	}
	got, err = r.embedPassages(t.Context(), []string{"bb", "dddd", "a"})
	if err != nil || e.texts != 4 || got[0][0] != 2 || got[1][0] != 4 || got[2][0] != 1 {
		t.Fatalf("second call: %v, %v after %d texts, want only dddd embedded and the order kept", got, err, e.texts)
	}
	e.fail = true
	if _, err := r.embedPassages(t.Context(), []string{"eeeee"}); err == nil {
		t.Fatal("a failing embedder's error was not returned")
	}
	e.fail = false
	if _, err := r.embedPassages(t.Context(), []string{"eeeee"}); err != nil || e.texts != 5 {
		t.Fatalf("after the failure: %v, %d texts; want eeeee embedded now", err, e.texts)
	}
}
