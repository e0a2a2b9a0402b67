package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func TestCollectionProfiles(t *testing.T) {
	b := setup(t, nil)
	const notCovered = "품셈 자료에 없는 내용입니다."
	doc := map[string]any{
		"description":   "건설 품셈",
		"language":      "ko",
		"replies":       map[string]any{"not_covered": notCovered, "empty_question": "질문을 입력해 주세요."},
		"synonyms":      [][]string{{"굴삭기", "백호"}},
		"spec_patterns": []map[string]any{{"name": "diameter", "pattern": `\b(D\d+)\b`}},
		"generation":    map[string]any{"passages": 20, "history_turns": 0},
	}
	b.run(t, []scenario{
		{name: "ErrNotFound", method: "GET", path: "/api/collections/pumsem", status: 404, code: rag.CodeNotFound},
		{name: "Create", method: "PUT", path: "/api/collections/pumsem", status: 201, body: jsonBody(doc),
			contains: []string{`"name":"pumsem"`, `"not_covered":"` + notCovered + `"`, `"passages":20`, `"total_chars":4000`}},
		{name: "Get", method: "GET", path: "/api/collections/pumsem", status: 200,
			contains: []string{`"description":"건설 품셈"`, `"pattern":"\\b(D\\d+)\\b"`, `"history_turns":0`, `"language":"ko"`}},
		{name: "Update", method: "PUT", path: "/api/collections/pumsem", status: 200,
			body:     jsonBody(map[string]any{"name": "pumsem", "description": "v2", "replies": map[string]any{"not_covered": notCovered}}),
			contains: []string{`"description":"v2"`}, notContains: []string{"diameter"}},
		{name: "ErrBadRegex", method: "PUT", path: "/api/collections/pumsem", status: 400, code: rag.CodeInvalid,
			body:     jsonBody(map[string]any{"spec_patterns": []map[string]any{{"name": "size", "pattern": `(D\d+`}}}),
			contains: []string{"spec_patterns[0].pattern", "missing closing )"}},
		{name: "ErrNegativeLimit", method: "PUT", path: "/api/collections/pumsem", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"context": map[string]any{"table_rows": -1}}), contains: []string{"context.table_rows", "negative"}},
		{name: "ErrUnknownField", method: "PUT", path: "/api/collections/pumsem", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"replies": map[string]any{"not_found": "x"}}), contains: []string{`unknown field \"not_found\"`}},
		{name: "ErrOtherName", method: "PUT", path: "/api/collections/pumsem", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"name": "laws"}), contains: []string{"name:", `\"laws\"`}},
		{name: "ErrNotJSON", method: "PUT", path: "/api/collections/pumsem", status: 400, code: rag.CodeInvalid,
			body: jsonBody("name: pumsem"), contains: []string{"invalid JSON"}},
		// With a YAML content type the body is a collection.yaml as is (examples/housing/load sends one).
		{name: "YAML", method: "PUT", path: "/api/collections/records", status: 201,
			body: func(*testing.T) (io.Reader, string) {
				return strings.NewReader("description: rows\nschema:\n  key: id\n  title: title\n  fields:\n  - {name: id}\n  - {name: title}\n  - {name: rent, type: money}\n"), "application/yaml"
			}, contains: []string{`"description":"rows"`, `"type":"money"`}},
		{name: "ErrYAMLSchema", method: "PUT", path: "/api/collections/records", status: 400, code: rag.CodeInvalid,
			body: func(*testing.T) (io.Reader, string) {
				return strings.NewReader("schema:\n  key: id\n  title: title\n  fields:\n  - {name: id}\n  - {name: title}\n  - {name: rent, type: float}\n"), "application/yaml"
			}, contains: []string{"schema:", `unknown type \"float\"`}},
		{name: "Unchanged", method: "GET", path: "/api/collections/pumsem", status: 200, contains: []string{`"description":"v2"`}},
		// A collection created with settings shows them as its profile.
		{name: "LegacySettings", method: "POST", path: "/api/collections", status: 201,
			body: jsonBody(map[string]any{"name": "old", "settings": map[string]any{"domain": "법령", "synonyms": map[string]any{"보증금": []string{"deposit"}}}})},
		{name: "LegacyProfile", method: "GET", path: "/api/collections/old", status: 200,
			contains: []string{`"domain":"법령"`, `"synonyms":[["보증금","deposit"]]`}},
	})

	// The collection's fixed replies reach the answers: a question its documents do not cover.
	docs := b.upload(t, []file{{"law.txt", []byte("제1조 이 법은 공포한 날부터 시행한다.")}}, map[string]string{"collection": "pumsem"})
	b.waitDocument(t, docs[0].ID)
	resp, body := b.do(t, request{method: "POST", path: "/api/chat", ctype: "application/json",
		body: strings.NewReader(`{"question":"굴삭기 단가는 얼마인가요?","collection":"pumsem"}`)})
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"answer":"`+notCovered+`"`) {
		t.Fatalf("chat: %d %s; want the profile's not-covered reply", resp.StatusCode, body)
	}
	blank := func() (int, string) {
		resp, body := b.do(t, request{method: "POST", path: "/api/chat", ctype: "application/json",
			body: strings.NewReader(`{"question":"  ","collection":"pumsem"}`)})
		return resp.StatusCode, string(body)
	}
	// The update above dropped empty_question: the default message.
	if status, body := blank(); status != http.StatusBadRequest || !strings.Contains(body, "question_required") || strings.Contains(body, "질문을 입력해") {
		t.Fatalf("blank question: %d %s", status, body)
	}
	if resp, body := b.do(t, request{method: "PUT", path: "/api/collections/pumsem", ctype: "application/json",
		body: strings.NewReader(`{"replies":{"empty_question":"질문을 입력해 주세요."}}`)}); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %d %s", resp.StatusCode, body)
	}
	if status, body := blank(); status != http.StatusBadRequest || !strings.Contains(body, `"error":"question_required"`) || !strings.Contains(body, "질문을 입력해 주세요.") {
		t.Fatalf("blank question with the profile's reply: %d %s", status, body)
	}
}
