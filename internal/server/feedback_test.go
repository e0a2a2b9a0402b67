package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/feedback"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// TestFeedback: ratings of answers and sources through the API, each limit at its boundary, one rating per
// API key (principal) and passage, deletion of one's own only, and the export as eval items.
func TestFeedback(t *testing.T) {
	b := setup(t, func(c *Settings) { c.APIKeys = []string{keyA, keyB} })
	asA := map[string]string{"Authorization": "Bearer " + keyA}
	asB := map[string]string{"Authorization": "Bearer " + keyB}
	b.ingest(t, ingest.Request{Name: "lease.md", Source: "docs/lease.md",
		Data: []byte("# Lease\n\nThe deposit is returned within 30 days of the end of the lease.\n")})
	b.ingest(t, ingest.Request{Name: "rent.md", Source: "docs/rent.md",
		Data: []byte("# Rent\n\nRent is due on the first day of every month, by bank transfer.\n")})
	r, ctype := jsonBody(map[string]any{"query": "deposit returned, rent due", "k": 5})(t)
	resp, body := b.do(t, request{method: "POST", path: "/api/search", ctype: ctype, body: r, headers: asA})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("search: %d %s", resp.StatusCode, trim(body))
	}
	hits := decode[rag.SearchResult](t, body).Hits
	if len(hits) < 2 {
		t.Fatalf("%d hits", len(hits))
	}
	var lease, rent int64
	for _, h := range hits {
		switch h.Source {
		case "docs/lease.md":
			lease = h.ID
		case "docs/rent.md":
			rent = h.ID
		}
	}
	if lease == 0 || rent == 0 {
		t.Fatalf("hits %+v", hits)
	}
	q := "when is the deposit returned?"
	rate := func(f map[string]any) func(t *testing.T) (io.Reader, string) {
		base := map[string]any{"target": "source", "rating": -1, "question": q, "chunk_id": rent}
		for k, v := range f {
			if v == nil {
				delete(base, k)
			} else {
				base[k] = v
			}
		}
		return jsonBody(base)
	}
	b.run(t, []scenario{
		{name: "Source", method: "POST", path: "/api/feedback", headers: asA, status: 201, body: rate(map[string]any{"comment": "about rent, not the deposit"}),
			contains: []string{`"target":"source"`, `"rating":-1`, `"file":"docs/rent.md"`, `"principal":"key:`}},
		{name: "Answer", method: "POST", path: "/api/feedback", headers: asA, status: 201,
			body: rate(map[string]any{"target": "answer", "rating": 1, "chunk_id": nil, "chunk_ids": []int64{lease, lease}, "answer": "Within 30 days [1]."})},
		{name: "Comment2000", method: "POST", path: "/api/feedback", headers: asB, status: 201,
			body: rate(map[string]any{"comment": strings.Repeat("가", rag.MaxFeedbackComment)})},
		{name: "ErrComment2001", method: "POST", path: "/api/feedback", headers: asB, status: 400, code: rag.CodeInvalid,
			body: rate(map[string]any{"comment": strings.Repeat("가", rag.MaxFeedbackComment+1)})},
		{name: "Answer20000", method: "POST", path: "/api/feedback", headers: asB, status: 201,
			body: rate(map[string]any{"target": "answer", "chunk_id": nil, "answer": strings.Repeat("가", rag.MaxFeedbackAnswer)})},
		{name: "ErrAnswer20001", method: "POST", path: "/api/feedback", headers: asB, status: 400, code: rag.CodeInvalid,
			body: rate(map[string]any{"target": "answer", "chunk_id": nil, "answer": strings.Repeat("가", rag.MaxFeedbackAnswer+1)})},
		{name: "ChunkIDs50", method: "POST", path: "/api/feedback", headers: asB, status: 201,
			body: rate(map[string]any{"target": "answer", "chunk_id": nil, "chunk_ids": repeatID(lease, rag.MaxFeedbackPassages)})},
		{name: "ErrChunkIDs51", method: "POST", path: "/api/feedback", headers: asB, status: 400, code: rag.CodeInvalid,
			body: rate(map[string]any{"target": "answer", "chunk_id": nil, "chunk_ids": repeatID(lease, rag.MaxFeedbackPassages+1)})},
		{name: "Question500", method: "POST", path: "/api/feedback", headers: asB, status: 201,
			body: rate(map[string]any{"question": strings.Repeat("가", rag.MaxQuestionChars)})},
		{name: "ErrQuestion501", method: "POST", path: "/api/feedback", headers: asB, status: 400, code: rag.CodeInvalid,
			body: rate(map[string]any{"question": strings.Repeat("가", rag.MaxQuestionChars+1)})},
		{name: "ErrNoQuestion", method: "POST", path: "/api/feedback", headers: asB, status: 400, code: rag.CodeQuestionRequired,
			body: rate(map[string]any{"question": " "})},
		{name: "ErrRating0", method: "POST", path: "/api/feedback", headers: asB, status: 400, code: rag.CodeInvalid,
			body: rate(map[string]any{"rating": 0})},
		{name: "ErrTarget", method: "POST", path: "/api/feedback", headers: asB, status: 400, code: rag.CodeInvalid,
			body: rate(map[string]any{"target": "page"})},
		{name: "ErrSourceWithoutChunk", method: "POST", path: "/api/feedback", headers: asB, status: 400, code: rag.CodeInvalid,
			body: rate(map[string]any{"chunk_id": nil})},
		{name: "ErrUnknownChunk", method: "POST", path: "/api/feedback", headers: asB, status: 400, code: rag.CodeInvalid,
			body: rate(map[string]any{"chunk_id": 999999})},
		{name: "ErrTooLarge", method: "POST", path: "/api/feedback", headers: asB, status: 413, code: rag.CodePayloadTooLarge,
			body: rate(map[string]any{"answer": strings.Repeat("a", MaxFeedbackJSON)})},
		{name: "ErrNoKey", method: "POST", path: "/api/feedback", status: 401, code: rag.CodeUnauthorized, body: rate(nil)},
		{name: "ErrListTarget", method: "GET", path: "/api/feedback?target=page", headers: asA, status: 400, code: rag.CodeInvalid},
		{name: "ErrListRating", method: "GET", path: "/api/feedback?rating=2", headers: asA, status: 400, code: rag.CodeInvalid},
	})

	list := func(t *testing.T, hdr map[string]string, query string) []*rag.Feedback {
		t.Helper()
		resp, body := b.do(t, request{method: "GET", path: "/api/feedback" + query, headers: hdr})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("list: %d %s", resp.StatusCode, trim(body))
		}
		return decode[struct{ Feedback []*rag.Feedback }](t, body).Feedback
	}
	mine := list(t, asA, "")
	if len(mine) != 2 {
		t.Fatalf("key A has %d ratings, want 2", len(mine))
	}
	var src, ans *rag.Feedback
	for _, f := range mine {
		if f.Target == rag.FeedbackSource {
			src = f
		} else {
			ans = f
		}
	}
	if src == nil || ans == nil || src.Comment != "about rent, not the deposit" || len(src.Passages) != 1 ||
		src.Passages[0].ChunkID != rent || src.Passages[0].Hash == "" || !strings.Contains(src.Passages[0].Text, "Rent is due") {
		t.Fatalf("key A's ratings %+v", mine)
	}
	if len(ans.Passages) != 1 || ans.Passages[0].ChunkID != lease || ans.Answer != "Within 30 days [1]." {
		t.Errorf("answer rating %+v: the repeated chunk id is one passage", ans)
	}
	// Rating the same source again replaces the rating.
	r, ctype = rate(map[string]any{"rating": 1})(t)
	if resp, body := b.do(t, request{method: "POST", path: "/api/feedback", ctype: ctype, body: r, headers: asA}); resp.StatusCode != 201 ||
		decode[rag.Feedback](t, body).ID != src.ID {
		t.Fatalf("re-rating: %d %s", resp.StatusCode, trim(body))
	}
	if got := list(t, asA, "?target=source"); len(got) != 1 || got[0].Rating != 1 {
		t.Errorf("after re-rating: %+v", got)
	}
	if got := list(t, asA, "?all=true&limit=100"); len(got) != 5 {
		// Key B: a source and an answer (the second answer rating replaced the first) of q, a source of
		// the 500-character question.
		t.Errorf("everyone's ratings: %d, want 5", len(got))
	}
	b.run(t, []scenario{
		{name: "ErrDeleteOthers", method: "DELETE", path: "/api/feedback/" + src.ID, headers: asB, status: 404, code: rag.CodeNotFound},
		{name: "Delete", method: "DELETE", path: "/api/feedback/" + ans.ID, headers: asA, status: 204},
		{name: "ErrDeleteAgain", method: "DELETE", path: "/api/feedback/" + ans.ID, headers: asA, status: 404, code: rag.CodeNotFound},
	})
	resp, body = b.do(t, request{method: "GET", path: "/api/feedback/export?name=mine", headers: asA})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %d %s", resp.StatusCode, trim(body))
	}
	ex := decode[feedback.Exported](t, body)
	if ex.Set.Name != "mine" || ex.Ratings != 4 || len(ex.Items) != 2 {
		t.Fatalf("export: set %+v, %d ratings, %d items", ex.Set, ex.Ratings, len(ex.Items))
	}
	// q: key A rated the rent passage up, key B down: the rating up wins, so the item is answerable there.
	if it := ex.Items[0]; it.Question != q || it.File != "docs/rent.md" || it.Answer != "Rent is due on the first day of every month, by bank transfer." || len(it.Avoid) != 0 {
		t.Errorf("item %+v", it)
	}
}

func repeatID(id int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = id
	}
	return out
}
