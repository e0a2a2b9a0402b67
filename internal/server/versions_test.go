package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestVersions lists a document's versions, reads an old one's text and original file, and restores it as
// the current version (a new version number, searchable again).
func TestVersions(t *testing.T) {
	b := setup(t, nil)
	v1 := "# Fees\n\nFirst edition: the ferry fee is 3 coins."
	docs := b.upload(t, []file{{"fees.md", []byte(v1)}}, nil)
	id := docs[0].ID
	b.waitDocument(t, id)
	b.run(t, []scenario{{name: "PutV2", method: "PUT", path: "/api/documents/" + id, status: 202,
		body: multipartBody([]file{{"fees.md", []byte("# Fees\n\nSecond edition: the ferry fee is 5 coins.")}}, nil)}})
	if d := b.waitDocument(t, id); d.Version != 2 {
		t.Fatalf("%+v", d)
	}
	base := "/api/documents/" + id + "/versions"
	b.run(t, []scenario{
		{name: "List", method: "GET", path: base, status: 200, contains: []string{`"version":2`, `"version":1`, `"text_hash":"`}},
		{name: "GetOld", method: "GET", path: base + "/1", status: 200,
			contains: []string{`"version":1`, `"current":false`, "First edition: the ferry fee is 3 coins."}, notContains: []string{"Second edition"}},
		{name: "GetCurrent", method: "GET", path: base + "/2", status: 200, contains: []string{`"current":true`, "Second edition"}},
		{name: "File", method: "GET", path: base + "/1/file", status: 200,
			wantHeaders: map[string]string{"Content-Type": "text/markdown", "Content-Disposition": `attachment; filename="fees.md"`,
				"Content-Security-Policy": "default-src 'none'; sandbox", "X-Content-Type-Options": "nosniff"},
			check: func(t *testing.T, _ *http.Response, body []byte) {
				if string(body) != v1 {
					t.Errorf("file of version 1 = %q, want the original %q", body, v1)
				}
			}},
		{name: "ErrUnknownVersion", method: "GET", path: base + "/9", status: 404, code: rag.CodeNotFound},
		{name: "ErrUnknownVersionFile", method: "GET", path: base + "/9/file", status: 404, code: rag.CodeNotFound},
		{name: "ErrVersionNotNumber", method: "GET", path: base + "/x", status: 400, code: rag.CodeInvalid},
		{name: "ErrVersionZero", method: "GET", path: base + "/0/file", status: 400, code: rag.CodeInvalid},
		{name: "ErrUnknownDocument", method: "GET", path: "/api/documents/nope/versions/1", status: 404, code: rag.CodeNotFound},
		{name: "RestoreCurrentUnchanged", method: "POST", path: base + "/2/restore", status: 200, contains: []string{`"outcome":"unchanged"`}},
		{name: "ErrRestoreUnknown", method: "POST", path: base + "/7/restore", status: 404, code: rag.CodeNotFound},
		{name: "RestoreOld", method: "POST", path: base + "/1/restore", status: 202, contains: []string{`"outcome":"queued"`, `"pending":true`}},
	})
	if d := b.waitDocument(t, id); d.Version != 3 || len(d.Versions) != 3 || d.Versions[0].ContentHash != d.Versions[2].ContentHash {
		t.Fatalf("after restoring version 1: %+v", d)
	}
	b.run(t, []scenario{
		{name: "SearchFindsRestored", method: "POST", path: "/api/search", body: jsonBody(map[string]any{"query": "ferry fee first edition"}),
			status: 200, contains: []string{"First edition"}, notContains: []string{"Second edition"}},
		{name: "Delete", method: "DELETE", path: "/api/documents/" + id, status: 204},
		{name: "ErrVersionsOfDeleted", method: "GET", path: base, status: 404, code: rag.CodeNotFound},
		{name: "ErrFileOfDeleted", method: "GET", path: base + "/1/file", status: 404, code: rag.CodeNotFound},
	})
}

// TestDocumentHistory reads a document's status history: its first version from queued through the
// ingestion stages to ready, then a second version, oldest first; limit at its bounds.
func TestDocumentHistory(t *testing.T) {
	b := setup(t, nil)
	docs := b.upload(t, []file{{"ferry.md", []byte("# Ferry\n\nThe ferry leaves at nine.")}}, nil)
	id := docs[0].ID
	b.waitDocument(t, id)
	b.run(t, []scenario{{name: "PutV2", method: "PUT", path: "/api/documents/" + id, status: 202,
		body: multipartBody([]file{{"ferry.md", []byte("# Ferry\n\nThe ferry leaves at ten.")}}, nil)}})
	b.waitDocument(t, id)
	base := "/api/documents/" + id + "/history"
	b.run(t, []scenario{
		{name: "OK", method: "GET", path: base, status: 200, check: func(t *testing.T, _ *http.Response, body []byte) {
			var res struct {
				Events []rag.DocumentEvent `json:"events"`
			}
			if err := json.Unmarshal(body, &res); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range res.Events {
				got = append(got, fmt.Sprintf("%s/%s/v%d", e.Status, e.Stage, e.Version))
			}
			s := strings.Join(got, " ")
			for _, want := range []string{"queued/queued/v1", "processing/extract/v1", "processing/embed/v1", "ready/done/v1", "ready/done/v2"} {
				if !strings.Contains(s, want) {
					t.Errorf("history %s lacks %s", s, want)
				}
			}
			if !strings.HasPrefix(s, "queued/queued/v1 ") || !strings.HasSuffix(s, " ready/done/v2") {
				t.Errorf("history %s: not oldest first", s)
			}
		}},
		{name: "LimitOne", method: "GET", path: base + "?limit=1", status: 200, contains: []string{`"status":"ready"`, `"version":2`}, notContains: []string{`"queued"`}},
		{name: "LimitMax", method: "GET", path: base + fmt.Sprintf("?limit=%d", rag.MaxHistory), status: 200, contains: []string{`"status":"queued"`}},
		{name: "ErrLimitZero", method: "GET", path: base + "?limit=0", status: 400, code: rag.CodeInvalid},
		{name: "ErrLimitOverMax", method: "GET", path: base + fmt.Sprintf("?limit=%d", rag.MaxHistory+1), status: 400, code: rag.CodeInvalid},
		{name: "ErrUnknownDocument", method: "GET", path: "/api/documents/nope/history", status: 404, code: rag.CodeNotFound},
	})
}
