package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/testkit"
)

type uploadResponse struct {
	Documents []documentView `json:"documents"`
}

type listResponse struct {
	Documents []documentView `json:"documents"`
	Total     int            `json:"total"`
	Limit     int            `json:"limit"`
	Offset    int            `json:"offset"`
}

// upload posts files and returns the 202 response's documents.
func (b *bundle) upload(t *testing.T, files []file, fields map[string]string) []documentView {
	t.Helper()
	body, ct := multipartBody(files, fields)(t)
	resp, out := b.do(t, request{method: "POST", path: "/api/documents", body: body, ctype: ct})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("upload: %d %s", resp.StatusCode, trim(out))
	}
	return decode[uploadResponse](t, out).Documents
}

func (b *bundle) list(t *testing.T, query string) listResponse {
	t.Helper()
	resp, body := b.do(t, request{method: "GET", path: "/api/documents?" + query})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("list %s: %d %s", query, resp.StatusCode, trim(body))
	}
	return decode[listResponse](t, body)
}

func TestDocumentsUploadAndRead(t *testing.T) {
	b := setup(t, nil)
	md := readFixture(t, renderDoc)
	md2 := readFixture(t, "md/ko_react_importing-and-exporting-components.md")

	var one documentView
	titles := map[string]string{} // file → title after processing (the extractor may find a better one)
	t.Run("UploadOne", func(t *testing.T) {
		docs := b.upload(t, []file{{"render.md", md}}, map[string]string{"tags": "react, ko", "metadata": `{"lang":"ko"}`})
		if len(docs) != 1 || docs[0].ID == "" || docs[0].Title == "" || docs[0].Status != rag.StatusQueued || docs[0].Outcome != "queued" {
			t.Fatalf("upload response %+v", docs)
		}
		one = b.waitDocument(t, docs[0].ID)
		if one.Status != rag.StatusReady || one.Progress != 100 || one.Version != 1 || one.ChunkCount == 0 || one.Stage != rag.StageDone {
			t.Fatalf("after processing: %+v", one)
		}
		if len(one.Versions) != 1 || one.Versions[0].Version != 1 {
			t.Fatalf("versions %+v", one.Versions)
		}
		titles["render"] = one.Title
		if strings.Join(one.Tags, ",") != "react,ko" || one.Metadata["lang"] != "ko" || one.Owner != rag.LocalPrincipal.ID {
			t.Fatalf("tags %v metadata %v owner %q", one.Tags, one.Metadata, one.Owner)
		}
	})

	t.Run("UploadMany", func(t *testing.T) {
		docs := b.upload(t, []file{{"import.md", md2}, {"notes.txt", []byte("회의록: 다음 회의는 금요일 오후 세 시입니다.")}},
			map[string]string{"collection": "team"})
		if len(docs) != 2 || docs[0].Title != "import" || docs[1].Title != "notes" {
			t.Fatalf("upload response %+v", docs)
		}
		for _, d := range docs {
			got := b.waitDocument(t, d.ID)
			if got.Status != rag.StatusReady {
				t.Fatalf("%s: %+v", d.Title, got)
			}
			titles[d.Title] = got.Title
		}
	})

	t.Run("UploadSameContentUnchanged", func(t *testing.T) {
		docs := b.upload(t, []file{{"render.md", md}}, nil)
		if len(docs) != 1 || docs[0].ID != one.ID || docs[0].Outcome != "unchanged" || docs[0].Version != 1 {
			t.Fatalf("re-upload %+v", docs)
		}
	})

	t.Run("UploadJSONText", func(t *testing.T) {
		resp, body := b.do(t, request{method: "POST", path: "/api/documents", ctype: "application/json",
			body: strings.NewReader(`{"title": "휴가 규정", "text": "# 휴가 규정\n\n연차 휴가는 매년 15일입니다.", "tags": ["hr"], "collection": "team"}`)})
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%d %s", resp.StatusCode, trim(body))
		}
		d := decode[uploadResponse](t, body).Documents[0]
		got := b.waitDocument(t, d.ID)
		if got.Status != rag.StatusReady || got.Title != "휴가 규정" || got.MediaType != "text/markdown" {
			t.Fatalf("%+v", got)
		}
		titles["leave"] = got.Title
	})

	b.run(t, []scenario{
		{name: "GetOne", method: "GET", path: "/api/documents/" + one.ID, status: 200,
			contains: []string{`"status":"ready"`, `"stage":"done"`, `"progress":100`, `"version":1`, `"chunk_count"`, `"versions"`}},
		{name: "ErrGetUnknown", method: "GET", path: "/api/documents/nope", status: 404, code: rag.CodeNotFound},
		{
			name: "Chunks", method: "GET", path: "/api/documents/" + one.ID + "/chunks", status: 200,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				res := decode[struct{ Chunks []rag.Chunk }](t, body)
				if len(res.Chunks) != one.ChunkCount || res.Chunks[0].DocumentID != one.ID || res.Chunks[0].Text == "" {
					t.Fatalf("%d chunks, want %d: %s", len(res.Chunks), one.ChunkCount, trim(body))
				}
			},
		},
		{name: "ErrChunksUnknown", method: "GET", path: "/api/documents/nope/chunks", status: 404, code: rag.CodeNotFound},
	})

	leave, notes, imp, render := titles["leave"], titles["notes"], titles["import"], titles["render"]
	all := []string{leave, notes, imp, render} // newest first
	// A date stands for its whole day (package filter): created_before the newest document's day includes
	// it, which a midnight bound would not.
	docs := b.list(t, "").Documents
	newestDay, oldestDay := docs[0].CreatedAt.UTC().Format(time.DateOnly), docs[len(docs)-1].CreatedAt.UTC().Format(time.DateOnly)
	dayBefore := docs[len(docs)-1].CreatedAt.UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	listCases := []struct {
		query string
		want  []string
	}{
		{"", all},
		{"q=" + url.QueryEscape("휴가"), []string{leave}},
		{"tag=react", []string{render}},
		{"tag=hr,react", []string{leave, render}},
		{"tag=hr&tag=react", []string{leave, render}},
		{"type=text", []string{notes}},
		{"type=markdown", []string{leave, imp, render}},
		{"type=" + url.QueryEscape("text/markdown"), []string{leave, imp, render}},
		{"type=pdf", nil},
		{"collection=team", []string{leave, notes, imp}},
		{"status=ready", all},
		{"status=failed", nil},
		{"created_after=2000-01-01&created_before=2999-12-31", all},
		{"created_after=2999-01-01", nil},
		{"created_before=" + newestDay, all},
		{"created_after=" + oldestDay, all},
		{"created_before=" + dayBefore, nil},
		{"updated_before=" + newestDay, all},
		{"updated_before=2000-01-01T00:00:00Z", nil},
		{"limit=2", all[:2]},
		{"limit=2&offset=2", all[2:]},
		{"offset=4", nil},
	}
	for _, c := range listCases {
		t.Run("List?"+c.query, func(t *testing.T) {
			res := b.list(t, c.query)
			var got []string
			for _, d := range res.Documents {
				got = append(got, d.Title)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("titles %q, want %q", got, c.want)
			}
			if strings.HasPrefix(c.query, "limit=2") && (res.Total != 4 || res.Limit != 2) {
				t.Fatalf("total %d limit %d", res.Total, res.Limit)
			}
		})
	}

	b.run(t, []scenario{
		{name: "ErrListStatus", method: "GET", path: "/api/documents?status=done", status: 400, code: rag.CodeInvalid},
		{name: "ErrListLimit0", method: "GET", path: "/api/documents?limit=0", status: 400, code: rag.CodeInvalid},
		{name: "ListLimit500", method: "GET", path: "/api/documents?limit=500", status: 200},
		{name: "ErrListLimit501", method: "GET", path: "/api/documents?limit=501", status: 400, code: rag.CodeInvalid},
		{name: "ErrListDate", method: "GET", path: "/api/documents?created_after=yesterday", status: 400, code: rag.CodeInvalid},
	})
}

func TestDocumentsUploadLimits(t *testing.T) {
	const limit = 2000
	b := setup(t, func(c *Settings) { c.MaxUploadBytes = limit })
	text := func(n int) []byte { return bytes.Repeat([]byte("a"), n) }
	count := func() int { return b.list(t, "").Total }

	b.run(t, []scenario{
		{name: "FileAtLimit", method: "POST", path: "/api/documents", status: 202,
			body: multipartBody([]file{{"at-limit.txt", text(limit)}}, nil), contains: []string{`"status":"queued"`}},
		{name: "ErrFileOverLimit", method: "POST", path: "/api/documents", status: 413, code: rag.CodePayloadTooLarge,
			body: multipartBody([]file{{"over-limit.txt", text(limit + 1)}}, nil)},
		{name: "ErrJSONTextOverLimit", method: "POST", path: "/api/documents", status: 413, code: rag.CodePayloadTooLarge,
			body: jsonBody(map[string]any{"title": "big", "text": string(text(limit + 1))})},
		{name: "JSONTextAtLimit", method: "POST", path: "/api/documents", status: 202,
			body: jsonBody(map[string]any{"title": "big", "text": string(text(limit))})},
		{name: "ErrUnknownType", method: "POST", path: "/api/documents", status: 415, code: rag.CodeUnsupportedMediaType,
			body: multipartBody([]file{{"tool.exe", []byte("MZ\x90\x00binary")}}, nil)},
		{name: "ErrUnknownTypeNoExtension", method: "POST", path: "/api/documents", status: 415, code: rag.CodeUnsupportedMediaType,
			body: multipartBody([]file{{"blob", []byte{0, 1, 2, 3, 0xff}}}, nil)},
		{name: "ErrOneBadFileStoresNothing", method: "POST", path: "/api/documents", status: 415, code: rag.CodeUnsupportedMediaType,
			body: multipartBody([]file{{"good.txt", []byte("fine text")}, {"bad.bin", []byte{0, 0, 0}}}, nil)},
		{name: "ErrEmptyFile", method: "POST", path: "/api/documents", status: 400, code: rag.CodeInvalid,
			body: multipartBody([]file{{"empty.txt", nil}}, nil)},
		{name: "ErrNoFile", method: "POST", path: "/api/documents", status: 400, code: rag.CodeInvalid,
			body: multipartBody(nil, map[string]string{"collection": "x"})},
		{name: "ErrBadMetadata", method: "POST", path: "/api/documents", status: 400, code: rag.CodeInvalid,
			body: multipartBody([]file{{"m.txt", []byte("text")}}, map[string]string{"metadata": "[1,2"})},
		{name: "ErrJSONWithoutText", method: "POST", path: "/api/documents", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"title": "no text"})},
		{name: "ErrJSONWithoutTitle", method: "POST", path: "/api/documents", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"text": "no title"})},
		{name: "ErrContentType", method: "POST", path: "/api/documents", status: 415, code: rag.CodeUnsupportedMediaType,
			body: func(*testing.T) (io.Reader, string) { return strings.NewReader("plain"), "text/plain" }},
		{name: "ErrNoContentType", method: "POST", path: "/api/documents", status: 415, code: rag.CodeUnsupportedMediaType,
			body: func(*testing.T) (io.Reader, string) { return strings.NewReader("plain"), "" }},
	})
	// Only the two uploads at the limit were stored; every refused request stored nothing.
	if n := count(); n != 2 {
		t.Fatalf("%d documents stored, want 2", n)
	}
}

func TestDocumentsVersionsAndDelete(t *testing.T) {
	b := setup(t, nil)
	docs := b.upload(t, []file{{"policy.md", []byte("# 정책\n\n첫 번째 판: 출장비는 하루 5만 원입니다.")}}, nil)
	id := docs[0].ID
	if d := b.waitDocument(t, id); d.Version != 1 {
		t.Fatalf("%+v", d)
	}

	b.run(t, []scenario{
		{name: "PutNewVersion", method: "PUT", path: "/api/documents/" + id, status: 202,
			body:     multipartBody([]file{{"policy-v2.md", []byte("# 정책\n\n두 번째 판: 출장비는 하루 7만 원입니다.")}}, nil),
			contains: []string{`"outcome":"queued"`, `"pending":true`}},
	})
	d := b.waitDocument(t, id)
	if d.Version != 2 || d.Status != rag.StatusReady || len(d.Versions) != 2 {
		t.Fatalf("after new version: %+v", d)
	}
	resp, body := b.do(t, request{method: "POST", path: "/api/search", ctype: "application/json",
		body: strings.NewReader(`{"query": "출장비 7만 원"}`)})
	if resp.StatusCode != 200 || !strings.Contains(string(body), "두 번째 판") || strings.Contains(string(body), "첫 번째 판") {
		t.Fatalf("search after new version: %s", trim(body))
	}

	b.run(t, []scenario{
		{name: "PutSameContentUnchanged", method: "PUT", path: "/api/documents/" + id, status: 200,
			body:     multipartBody([]file{{"policy.md", []byte("# 정책\n\n두 번째 판: 출장비는 하루 7만 원입니다.")}}, nil),
			contains: []string{`"outcome":"unchanged"`, `"version":2`}},
		{name: "PutJSONText", method: "PUT", path: "/api/documents/" + id, status: 202,
			body: jsonBody(map[string]any{"text": "# 정책\n\n세 번째 판: 출장비는 하루 8만 원입니다."}), contains: []string{`"outcome":"queued"`}},
	})
	if d := b.waitDocument(t, id); d.Version != 3 {
		t.Fatalf("after text version: %+v", d)
	}
	b.run(t, []scenario{
		{name: "PutMetadataOnly", method: "PUT", path: "/api/documents/" + id, status: 200,
			body: jsonBody(map[string]any{"title": "출장 정책", "tags": []string{"travel"}}), contains: []string{`"title":"출장 정책"`, `"tags":["travel"]`}},
		{name: "ErrPutOtherType", method: "PUT", path: "/api/documents/" + id, status: 400, code: rag.CodeInvalid,
			body: multipartBody([]file{{"policy.html", []byte("<html><body>x</body></html>")}}, nil)},
		{name: "ErrPutTwoFiles", method: "PUT", path: "/api/documents/" + id, status: 400, code: rag.CodeInvalid,
			body: multipartBody([]file{{"a.md", []byte("a")}, {"b.md", []byte("b")}}, nil)},
		{name: "ErrPutUnknown", method: "PUT", path: "/api/documents/nope", status: 404, code: rag.CodeNotFound,
			body: multipartBody([]file{{"a.md", []byte("a")}}, nil)},
	})
	if d := b.waitDocument(t, id); d.Version != 3 || d.Title != "출장 정책" || strings.Join(d.Tags, ",") != "travel" {
		t.Fatalf("after metadata update: %+v", d)
	}

	b.run(t, []scenario{
		{name: "Delete", method: "DELETE", path: "/api/documents/" + id, status: 204},
		{name: "ErrGetDeleted", method: "GET", path: "/api/documents/" + id, status: 404, code: rag.CodeNotFound},
		{name: "ErrDeleteAgain", method: "DELETE", path: "/api/documents/" + id, status: 404, code: rag.CodeNotFound},
		{name: "SearchAfterDelete", method: "POST", path: "/api/search", status: 200,
			body: jsonBody(map[string]any{"query": "출장비"}), contains: []string{`"hits":[]`}},
	})
}

func TestDocumentsFailureIsVisible(t *testing.T) {
	b := setup(t, nil)
	// A file that claims to be a PDF but is not: accepted, then fails in extraction with the reason.
	docs := b.upload(t, []file{{"broken.pdf", []byte("%PDF-1.7\nthis is not really a pdf\n%%EOF")}}, nil)
	d := b.waitDocument(t, docs[0].ID)
	if d.Status != rag.StatusFailed || d.Error == "" || d.ErrorCode == "" || d.Stage != rag.StageExtract {
		t.Fatalf("a broken PDF must fail with a reason: %+v", d)
	}
	if res := b.list(t, "status=failed"); res.Total != 1 {
		t.Fatalf("failed documents: %d", res.Total)
	}
}

// Hancom and Office files upload and become ready with their media types; the type filter finds them by
// short name.
func TestDocumentsOfficeFormats(t *testing.T) {
	b := setup(t, nil)
	hwp, err := os.ReadFile(filepath.Join(testkit.Shared("formats"), "hwp", "table.hwp"))
	if err != nil {
		t.Fatal(err)
	}
	hwpx, err := os.ReadFile(filepath.Join(testkit.Shared("formats"), "hwpx", "table-grades.hwpx"))
	if err != nil {
		t.Fatal(err)
	}
	files := []file{
		{"표.hwp", hwp}, {"grades.hwpx", hwpx},
		{"rota.xlsx", testkit.XLSX(testkit.Sheet{Name: "rota", Rows: [][]string{{"Service", "Engineer"}, {"billing", "Park"}}})},
		{"deck.pptx", testkit.PPTX(testkit.Slide{Title: "Plan", Body: []string{"Ship in May."}})},
	}
	want := map[string]string{"표.hwp": extract.MediaHWP, "grades.hwpx": extract.MediaHWPX, "rota.xlsx": extract.MediaXLSX, "deck.pptx": extract.MediaPPTX}
	for _, d := range b.upload(t, files, nil) {
		d = b.waitDocument(t, d.ID)
		if d.Status != rag.StatusReady || d.MediaType != want[d.Title] && d.MediaType != want[filepath.Base(d.Source)] || d.ChunkCount == 0 {
			t.Errorf("%s: %+v", d.Title, d)
		}
	}
	for short, n := range map[string]int{"hwp": 2, "hwpx": 1, "excel": 1, "pptx": 1} {
		if res := b.list(t, "type="+short); res.Total != n {
			t.Errorf("type=%s: %d documents, want %d", short, res.Total, n)
		}
	}
}

func TestCollections(t *testing.T) {
	b := setup(t, nil)
	b.run(t, []scenario{
		{name: "Create", method: "POST", path: "/api/collections", status: 201,
			body: jsonBody(map[string]any{"name": "laws", "description": "법령"}), contains: []string{`"name":"laws"`, `"id"`}},
		{name: "ErrConflict", method: "POST", path: "/api/collections", status: 409, code: rag.CodeConflict,
			body: jsonBody(map[string]any{"name": "laws"})},
		{name: "ErrNameMissing", method: "POST", path: "/api/collections", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"name": "  "})},
		{name: "Name100", method: "POST", path: "/api/collections", status: 201,
			body: jsonBody(map[string]any{"name": strings.Repeat("가", 100)})},
		{name: "ErrName101", method: "POST", path: "/api/collections", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"name": strings.Repeat("가", 101)})},
		{name: "Synonyms", method: "POST", path: "/api/collections", status: 201, contains: []string{`"deposit"`},
			body: jsonBody(map[string]any{"name": "lease", "settings": map[string]any{"synonyms": map[string]any{"보증금": []string{"deposit"}}}})},
		{name: "ErrSynonyms", method: "POST", path: "/api/collections", status: 400, code: rag.CodeInvalid, contains: []string{"synonyms"},
			body: jsonBody(map[string]any{"name": "lease2", "settings": map[string]any{"synonyms": map[string]any{"보증금": 3}}})},
		{name: "List", method: "GET", path: "/api/collections", status: 200, contains: []string{`"collections"`, `"laws"`}},
	})
	docs := b.upload(t, []file{{"law.txt", []byte("제1조 이 법은 공포한 날부터 시행한다.")}}, map[string]string{"collection": "laws"})
	b.waitDocument(t, docs[0].ID)
	var laws *rag.Collection
	resp, body := b.do(t, request{method: "GET", path: "/api/collections"})
	if resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	for _, c := range decode[struct{ Collections []*rag.Collection }](t, body).Collections {
		if c.Name == "laws" {
			laws = c
		}
	}
	if laws == nil || docs[0].CollectionID != laws.ID {
		t.Fatalf("document collection %q, laws %+v", docs[0].CollectionID, laws)
	}
	if res := b.list(t, "collection=laws"); res.Total != 1 {
		t.Fatalf("collection filter: %d", res.Total)
	}
	raw, _ := json.Marshal(map[string]any{"query": "시행", "collection": "laws"})
	resp, body = b.do(t, request{method: "POST", path: "/api/search", ctype: "application/json", body: bytes.NewReader(raw)})
	if resp.StatusCode != 200 || !strings.Contains(string(body), docs[0].ID) {
		t.Fatalf("search in collection: %d %s", resp.StatusCode, trim(body))
	}
}
