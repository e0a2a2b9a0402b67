package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/answer"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/reembed"
)

const renderDoc = "md/ko_react_render-and-commit.md"

// exactBody returns a chat body of exactly n bytes: the question plus a history turn padded to fit.
func exactBody(t *testing.T, question string, n int) string {
	t.Helper()
	pad := func(k int) string {
		b, _ := json.Marshal(map[string]any{"question": question, "history": []rag.Turn{{Role: rag.RoleUser, Content: strings.Repeat("a", k)}}})
		return string(b)
	}
	base := len(pad(0))
	if n < base {
		t.Fatalf("body of %d bytes cannot hold the question", n)
	}
	s := pad(n - base)
	if len(s) != n {
		t.Fatalf("body is %d bytes, want %d", len(s), n)
	}
	return s
}

func turns(n int) []rag.Turn {
	out := make([]rag.Turn, n)
	for i := range out {
		out[i] = rag.Turn{Role: rag.RoleUser, Content: fmt.Sprintf("turn %d", i)}
		if i%2 == 1 {
			out[i].Role = rag.RoleAssistant
		}
	}
	return out
}

func TestChat(t *testing.T) {
	b := setup(t, nil)
	doc := b.ingestFile(t, renderDoc, nil)
	const q = "컴포넌트 렌더링이 일어나는 이유는 무엇인가요?"

	b.run(t, []scenario{
		{
			name: "OK", method: "POST", path: "/api/chat", status: 200,
			body:     jsonBody(map[string]any{"question": q}),
			contains: []string{`"answer"`, `"search_info"`, `"chunks_retrieved"`, `"latency_ms"`, `"retrieve_ms"`, `"generate_ms"`},
			check: func(t *testing.T, _ *http.Response, body []byte) {
				res := decode[rag.AnswerView](t, body)
				if res.Answer == "" || res.NotFound {
					t.Fatalf("no answer: %+v", res)
				}
				if len(res.Sources) == 0 || len(res.Passages) < len(res.Sources) {
					t.Fatalf("sources %d, passages %d", len(res.Sources), len(res.Passages))
				}
				s := res.Sources[0]
				if s.N < 1 || s.DocumentID != doc.ID || s.Title == "" || s.Passage == "" || s.ChunkID == 0 {
					t.Fatalf("source %+v", s)
				}
				if !strings.Contains(res.Answer, fmt.Sprintf("[%d]", s.N)) {
					t.Fatalf("answer %q does not cite [%d]", res.Answer, s.N)
				}
				if res.SearchInfo.ChunksRetrieved != len(res.Passages) || res.SearchInfo.Truncated || res.Truncated {
					t.Fatalf("search_info %+v", res.SearchInfo)
				}
			},
		},
		{
			name: "NotCovered", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(map[string]any{"question": "quantum chromodynamics lattice gauge"}),
			check: func(t *testing.T, _ *http.Response, body []byte) {
				res := decode[rag.AnswerView](t, body)
				if !res.NotFound || len(res.Sources) != 0 {
					t.Fatalf("want not_found without sources, got %+v", res)
				}
			},
		},
		{name: "ErrQuestionMissing", method: "POST", path: "/api/chat", status: 400, code: rag.CodeQuestionRequired,
			body: jsonBody(`{}`)},
		{name: "ErrQuestionBlank", method: "POST", path: "/api/chat", status: 400, code: rag.CodeQuestionRequired,
			body: jsonBody(map[string]any{"question": " \n\t "})},
		{name: "ErrQuestionBlankStreaming", method: "POST", path: "/api/chat", status: 400, code: rag.CodeQuestionRequired,
			headers: map[string]string{"Accept": "text/event-stream"}, body: jsonBody(map[string]any{"question": ""}),
			wantHeaders: map[string]string{"Content-Type": "application/json; charset=utf-8"}},
		{name: "ErrBodyEmpty", method: "POST", path: "/api/chat", status: 400, code: rag.CodeInvalid,
			body: jsonBody(``)},
		{name: "ErrNotJSON", method: "POST", path: "/api/chat", status: 400, code: rag.CodeInvalid,
			body: jsonBody(`{"question": `)},
		{name: "ErrTrailingData", method: "POST", path: "/api/chat", status: 400, code: rag.CodeInvalid,
			body: jsonBody(`{"question": "a"} {"question": "b"}`)},
		{name: "ErrKTooLarge", method: "POST", path: "/api/chat", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"question": q, "k": rag.MaxAnswerK + 1}), contains: []string{"between 1 and 20"}},
		{name: "ErrKNegative", method: "POST", path: "/api/chat", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"question": q, "k": -1})},
		{name: "K20", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(map[string]any{"question": q, "k": 20})},
		// drop_filters: at most rag.MaxDropFilters fields (a collection without a schema has none to drop).
		{name: "DropFilters20", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(map[string]any{"question": q, "drop_filters": dropFields(rag.MaxDropFilters)})},
		{name: "ErrDropFilters21", method: "POST", path: "/api/chat", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"question": q, "drop_filters": dropFields(rag.MaxDropFilters + 1)}), contains: []string{"drop_filters: at most 20"}},
		{
			name: "Question500NotTruncated", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(map[string]any{"question": q + strings.Repeat("가", 500-utf8.RuneCountInString(q))}),
			check: func(t *testing.T, _ *http.Response, body []byte) {
				res := decode[rag.AnswerView](t, body)
				if res.Truncated || res.SearchInfo.Truncated || utf8.RuneCountInString(res.Question) != 500 {
					t.Fatalf("truncated %v/%v, question %d chars", res.Truncated, res.SearchInfo.Truncated, utf8.RuneCountInString(res.Question))
				}
			},
		},
		{
			name: "Question501Truncated", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(map[string]any{"question": q + strings.Repeat("가", 501-utf8.RuneCountInString(q))}),
			check: func(t *testing.T, _ *http.Response, body []byte) {
				res := decode[rag.AnswerView](t, body)
				if !res.Truncated || !res.SearchInfo.Truncated || utf8.RuneCountInString(res.Question) != 500 {
					t.Fatalf("truncated %v/%v, question %d chars", res.Truncated, res.SearchInfo.Truncated, utf8.RuneCountInString(res.Question))
				}
				if res.Answer == "" {
					t.Fatal("a truncated question must still be answered")
				}
			},
		},
		{name: "Body10KB", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(exactBody(t, q, MaxJSONBody))},
		{name: "ErrBody10KBPlus1", method: "POST", path: "/api/chat", status: 413, code: rag.CodePayloadTooLarge,
			body: jsonBody(exactBody(t, q, MaxJSONBody+1))},
		{
			name: "History5Kept", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(map[string]any{"question": q, "history": turns(5)}),
			check: func(t *testing.T, _ *http.Response, body []byte) {
				if n := decode[rag.AnswerView](t, body).SearchInfo.HistoryTurns; n != 5 {
					t.Fatalf("history_turns %d, want 5", n)
				}
			},
		},
		{
			name: "History6DropsOldest", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(map[string]any{"question": q, "history": turns(6)}),
			check: func(t *testing.T, _ *http.Response, body []byte) {
				if n := decode[rag.AnswerView](t, body).SearchInfo.HistoryTurns; n != 5 {
					t.Fatalf("history_turns %d, want 5", n)
				}
			},
		},
		{
			name: "FilterOtherCollection", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(map[string]any{"question": q, "collection": "nothing-here"}),
			check: func(t *testing.T, _ *http.Response, body []byte) {
				if res := decode[rag.AnswerView](t, body); !res.NotFound || len(res.Passages) != 0 {
					t.Fatalf("a filter on an empty collection must find nothing: %+v", res)
				}
			},
		},
	})

	if got := recentTurns(turns(6), 5); got[0].Content != "turn 1" || len(got) != 5 {
		t.Fatalf("recentTurns kept %v, want turns 1..5", got)
	}
}

func TestChatStream(t *testing.T) {
	b := setup(t, nil)
	b.ingestFile(t, renderDoc, nil)
	const q = "컴포넌트 렌더링이 일어나는 이유는 무엇인가요?"

	check := func(t *testing.T, resp *http.Response, body []byte) {
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Fatalf("content type %q", ct)
		}
		events := readEvents(t, strings.NewReader(string(body)))
		if len(events) < 3 || events[0].name != "sources" || events[len(events)-1].name != "done" {
			t.Fatalf("events %v", names(events))
		}
		var text strings.Builder
		for _, ev := range events[1 : len(events)-1] {
			if ev.name != "delta" {
				t.Fatalf("event %q between sources and done: %v", ev.name, names(events))
			}
			var d struct{ Text string }
			if err := json.Unmarshal(ev.data, &d); err != nil {
				t.Fatal(err)
			}
			text.WriteString(d.Text)
		}
		var src struct{ Sources []rag.SourceView }
		if err := json.Unmarshal(events[0].data, &src); err != nil || len(src.Sources) == 0 {
			t.Fatalf("sources event %s: %v", events[0].data, err)
		}
		var done rag.AnswerView
		if err := json.Unmarshal(events[len(events)-1].data, &done); err != nil {
			t.Fatal(err)
		}
		if done.Answer == "" || len(done.Sources) == 0 || done.SearchInfo.ChunksRetrieved != len(src.Sources) {
			t.Fatalf("done %+v", done)
		}
		if text.Len() == 0 {
			t.Fatal("no delta text")
		}
	}
	b.run(t, []scenario{
		{name: "AcceptHeader", method: "POST", path: "/api/chat", status: 200, check: check,
			headers: map[string]string{"Accept": "text/event-stream"}, body: jsonBody(map[string]any{"question": q})},
		{name: "StreamField", method: "POST", path: "/api/chat", status: 200, check: check,
			body: jsonBody(map[string]any{"question": q, "stream": true})},
		{name: "ErrBodyTooLarge", method: "POST", path: "/api/chat", status: 413, code: rag.CodePayloadTooLarge,
			headers: map[string]string{"Accept": "text/event-stream"}, body: jsonBody(exactBody(t, q, MaxJSONBody+1))},
	})
}

func names(events []sseEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.name
	}
	return out
}

// failingGenerator stands in for a hosted LLM that fails after it started answering (its API broke off).
type failingGenerator struct{}

func (failingGenerator) Name() string { return "hosted/failing" }

func (failingGenerator) Generate(_ context.Context, _ rag.GenerateRequest, onDelta func(string) error) (*rag.Generation, error) {
	if onDelta != nil {
		if err := onDelta("부분 답변 "); err != nil {
			return nil, err
		}
	}
	return nil, rag.WrapError(rag.CodeLLMFailed, errors.New("upstream 503 from https://llm.example/v1 key=sk-secret"), "the language model failed")
}

// failingEmbedder stands in for a hosted embedding API that is down.
type failingEmbedder struct{ space rag.Space }

func (e failingEmbedder) Space() rag.Space { return e.space }

func (e failingEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, rag.Errorf(rag.CodeEmbeddingFailed, "embedding service unavailable")
}

func (e failingEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return nil, rag.WrapError(rag.CodeEmbeddingFailed, errors.New("dial tcp: connection refused"), "embedding service unavailable")
}

func TestChatProviderErrors(t *testing.T) {
	b := setup(t, nil)
	b.ingestFile(t, renderDoc, nil)
	const q = "컴포넌트 렌더링이 일어나는 이유는 무엇인가요?"
	b.deps.Answers = answer.New(b.spaces, failingGenerator{}, answer.Options{})
	b.serve(t)

	b.run(t, []scenario{
		{name: "LLMFailedJSON", method: "POST", path: "/api/chat", status: 502, code: rag.CodeLLMFailed,
			body: jsonBody(map[string]any{"question": q}), notContains: []string{"sk-secret", "llm.example"}},
		{
			name: "LLMFailedMidStream", method: "POST", path: "/api/chat", status: 200,
			headers: map[string]string{"Accept": "text/event-stream"}, body: jsonBody(map[string]any{"question": q}),
			notContains: []string{"sk-secret", "llm.example"},
			check: func(t *testing.T, _ *http.Response, body []byte) {
				events := readEvents(t, strings.NewReader(string(body)))
				got := strings.Join(names(events), ",")
				if got != "sources,delta,error" {
					t.Fatalf("events %s, want sources,delta,error", got)
				}
				var e errorBody
				if err := json.Unmarshal(events[2].data, &e); err != nil || e.Error != rag.CodeLLMFailed || e.Message == "" {
					t.Fatalf("error event %s", events[2].data)
				}
			},
		},
	})
	if !strings.Contains(b.logs.String(), "llm_failed") {
		t.Error("a 502 must be logged with its cause")
	}

	spaces, err := reembed.New(context.Background(), b.store, failingEmbedder{space: b.emb.Space()}, nil, reembed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.deps.Search = spaces
	b.deps.Answers = answer.New(spaces, b.gen, answer.Options{})
	b.serve(t)
	b.run(t, []scenario{
		{name: "EmbeddingFailedChat", method: "POST", path: "/api/chat", status: 502, code: rag.CodeEmbeddingFailed,
			body: jsonBody(map[string]any{"question": q}), notContains: []string{"connection refused"}},
		{name: "EmbeddingFailedBeforeStream", method: "POST", path: "/api/chat", status: 502, code: rag.CodeEmbeddingFailed,
			headers: map[string]string{"Accept": "text/event-stream"}, body: jsonBody(map[string]any{"question": q}),
			wantHeaders: map[string]string{"Content-Type": "application/json; charset=utf-8"}},
		{name: "EmbeddingFailedSearch", method: "POST", path: "/api/search", status: 502, code: rag.CodeEmbeddingFailed,
			body: jsonBody(map[string]any{"query": q})},
	})
}

// TestChatDocuments: document_ids restricts the answer to those documents, inside the store's query: a
// question about one document asked over another is answered from the other only (or not found), never from
// the document it is about; an unknown id in the list finds nothing.
func TestChatDocuments(t *testing.T) {
	b := setup(t, nil)
	render := b.ingestFile(t, renderDoc, nil)
	other := b.ingestFile(t, "md/ko_react_importing-and-exporting-components.md", nil)
	const q = "컴포넌트 렌더링이 일어나는 이유는 무엇인가요?"
	only := func(ids ...string) func(t *testing.T, _ *http.Response, body []byte) {
		return func(t *testing.T, _ *http.Response, body []byte) {
			res := decode[rag.AnswerView](t, body)
			for _, p := range res.Passages {
				if !slices.Contains(ids, p.DocumentID) {
					t.Fatalf("passage of %s, want only %v", p.DocumentID, ids)
				}
			}
			if len(ids) > 0 && ids[0] == render.ID && len(res.Passages) == 0 {
				t.Fatalf("nothing retrieved from %s", render.ID)
			}
		}
	}
	b.run(t, []scenario{
		{name: "Both", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(map[string]any{"question": q, "document_ids": []string{render.ID, other.ID}}), check: only(render.ID, other.ID)},
		{name: "TheOther", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(map[string]any{"question": q, "document_ids": []string{other.ID}}), check: only(other.ID)},
		{name: "WithFilters", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(map[string]any{"question": q, "document_ids": []string{render.ID}, "filters": map[string]any{"media_types": []string{"md"}}}), check: only(render.ID)},
		{name: "Unknown", method: "POST", path: "/api/chat", status: 200,
			body: jsonBody(map[string]any{"question": q, "document_ids": []string{"no-such-document"}}), contains: []string{`"not_found":true`}, check: only()},
	})
}

// dropFields is n field names for drop_filters.
func dropFields(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("field%d", i)
	}
	return out
}
