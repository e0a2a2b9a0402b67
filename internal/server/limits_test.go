package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// The request limits and headers of issue 19, each at its boundary.
func TestRequestLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, func(s *Settings) {
		s.AllowedHosts = DefaultAllowedHosts("127.0.0.1:8080")
		s.Metadata = rag.MetadataLimits{MaxKeys: 2}
	})
	// One parameter with n comma-separated tags (net/url refuses more than 10,000 parameters on its own).
	many := func(n int) string {
		tags := make([]string, n)
		for i := range tags {
			tags[i] = "t" + strconv.Itoa(i)
		}
		return url.Values{"tag": {strings.Join(tags, ",")}}.Encode()
	}
	b.run(t, []scenario{
		{name: "APIHeaders", method: "GET", path: "/api/documents", status: 200,
			wantHeaders: map[string]string{"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}},
		{name: "UIHeaders", method: "GET", path: "/", status: 200,
			wantHeaders: map[string]string{"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}},
		{name: "VendorNotListed", method: "GET", path: "/vendor/", status: 404, notContains: []string{"dompurify"}},
		{name: "VendorDirNotListed", method: "GET", path: "/vendor/marked/", status: 404},
		{name: "VendorFileServed", method: "GET", path: "/vendor/README.md", status: 200},
		{name: "RebindingRefused", method: "GET", path: "/api/documents", status: 403, code: rag.CodeForbidden,
			headers: map[string]string{"Host": "attacker.example", "Origin": "http://attacker.example"}},
		{name: "LocalhostServed", method: "GET", path: "/api/documents", status: 200, headers: map[string]string{"Host": "localhost:8080"}},
		{name: "MetadataAtLimit", method: "POST", path: "/api/documents", status: 202,
			body: multipartBody([]file{{"m.txt", []byte("text")}}, map[string]string{"metadata": `{"a":1,"b":2}`})},
		{name: "MetadataOverLimit", method: "POST", path: "/api/documents", status: 400, code: rag.CodeInvalid,
			body:     multipartBody([]file{{"n.txt", []byte("text")}}, map[string]string{"metadata": `{"a":1,"b":2,"c":3}`}),
			contains: []string{"RAGD_MAX_METADATA_KEYS"}},
		{name: "FilterValuesAtLimit", method: "GET", path: "/api/documents?" + many(rag.MaxFilterValues), status: 200},
		{name: "FilterValuesOverLimit", method: "GET", path: "/api/documents?" + many(rag.MaxFilterValues+1), status: 400,
			code: rag.CodeInvalid, contains: []string{"over the limit of 10000"}},
		{name: "FilterValuesOverSQLiteLimit", method: "GET", path: "/api/documents?" + many(32_767), status: 400, code: rag.CodeInvalid},
		{name: "TooManyParameters", method: "GET", path: "/api/documents?" + strings.Repeat("tag=a&", 10_001), status: 400, code: rag.CodeInvalid},
	})
}

// Re-uploading the same path is a new version; the same file name in another folder is another document.
func TestUploadFolderIdentity(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	post := func(name, text string) documentView {
		t.Helper()
		body, ct := multipartBody([]file{{name, []byte(text)}}, nil)(t)
		resp, out := b.do(t, request{method: "POST", path: "/api/documents", body: body, ctype: ct})
		if resp.StatusCode != 202 {
			t.Fatalf("%s: %d %s", name, resp.StatusCode, out)
		}
		return decode[struct{ Documents []documentView }](t, out).Documents[0]
	}
	a := post("docs/a/readme.md", "# A\n\nalpha")
	bb := post(`docs\b\readme.md`, "# B\n\nbeta")
	a2 := post("docs/a/readme.md", "# A\n\nalpha two")
	flat := post("readme.md", "# flat")
	if a.ID == bb.ID || a.ID != a2.ID || flat.ID == a.ID || flat.ID == bb.ID {
		t.Fatalf("ids: a %s, b %s, a again %s, flat %s: want a and b distinct, a again = a, flat its own", a.ID, bb.ID, a2.ID, flat.ID)
	}
	if a.ExternalID != "docs/a/readme.md" || bb.Source != "docs/b/readme.md" || flat.ExternalID != "readme.md" {
		t.Fatalf("identities %q %q %q", a.ExternalID, bb.Source, flat.ExternalID)
	}
	if evil := post("../../etc/passwd.txt", "x"); evil.ExternalID != "etc/passwd.txt" {
		t.Fatalf("dot segments kept: %q", evil.ExternalID)
	}
}

// When the upload budget is spent, further uploads get 429 with Retry-After until it is given back.
func TestUploadBudget(t *testing.T) {
	t.Parallel()
	b := setup(t, func(s *Settings) { s.UploadBudget = 1000 })
	release, err := b.srv.reserveUpload(httptestRecorder(), &http.Request{ContentLength: 900}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	b.run(t, []scenario{
		{name: "OverBudget", method: "POST", path: "/api/documents", status: 429, code: rag.CodeRateLimited,
			body:        multipartBody([]file{{"a.txt", []byte(strings.Repeat("a", 200))}}, nil),
			wantHeaders: map[string]string{"Retry-After": "5"}, contains: []string{"RAGD_UPLOAD_BUDGET_BYTES"}},
	})
	release()
	b.run(t, []scenario{
		{name: "Released", method: "POST", path: "/api/documents", status: 202,
			body: multipartBody([]file{{"a.txt", []byte(strings.Repeat("a", 200))}}, nil)},
	})
}

// failingJobs is a job runner whose database is full, as River's SQLite insert reports it.
type failingJobs struct{}

func (failingJobs) EnqueueIngest(context.Context, string, string) error {
	return errors.New("sqlite: database or disk is full (13)")
}

// An upload that cannot be scheduled fails, and its document says so instead of staying queued.
func TestUnscheduledUploadFails(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.deps.Enqueuer = failingJobs{}
	b.serve(t)
	body, ct := multipartBody([]file{{"full.txt", []byte("the disk is full")}}, nil)(t)
	resp, out := b.do(t, request{method: "POST", path: "/api/documents", body: body, ctype: ct})
	if resp.StatusCode != 500 || !strings.Contains(string(out), "the disk is full") || !strings.Contains(string(out), `"db_error"`) {
		t.Fatalf("upload: %d %s", resp.StatusCode, out)
	}
	page, err := b.store.ListDocuments(context.Background(), rag.LocalPrincipal, rag.DocumentQuery{})
	if err != nil || len(page.Documents) != 1 {
		t.Fatalf("documents: %v %v", page, err)
	}
	if d := page.Documents[0]; d.Status != rag.StatusFailed || d.PendingHash != "" || !strings.Contains(d.Error, "disk is full") {
		t.Fatalf("document %s pending %q: %s", d.Status, d.PendingHash, d.Error)
	}
}

func httptestRecorder() http.ResponseWriter { return httptest.NewRecorder() }

// A request whose client went away (an aborted chat) gets no response and no 500 in the log, whatever
// error the store reported for the cancellation — SQLite says "interrupted", not context.Canceled.
func TestAbortedRequestNotLoggedAsFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest("POST", "/api/chat", nil).WithContext(ctx)
	w := httptest.NewRecorder()
	b.srv.writeError(w, r, rag.WrapError(rag.CodeDBError, errors.New("interrupted (9)"), "database error"))
	if w.Body.Len() != 0 || strings.Contains(b.logs.String(), "request failed") {
		t.Fatalf("aborted request: wrote %q, log %s", w.Body.String(), b.logs.String())
	}
	// The same error for a client still waiting is a logged 500.
	w = httptest.NewRecorder()
	b.srv.writeError(w, httptest.NewRequest("POST", "/api/chat", nil), rag.WrapError(rag.CodeDBError, errors.New("disk I/O error"), "database error"))
	if w.Code != 500 || !strings.Contains(b.logs.String(), "request failed") {
		t.Fatalf("live request: %d, log %s", w.Code, b.logs.String())
	}
}
