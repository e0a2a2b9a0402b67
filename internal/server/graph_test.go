package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// A small graph bundle: one section, a work type, its labor, and a passage.
var (
	testSections = `{"id": "S1", "name": "1-1 Pouring", "parent_id": null, "path": "Concrete > 1-1 Pouring", "level": "clause"}` + "\n"
	testEntities = `{"id": "W1", "name": "concrete pouring", "type": "WorkType", "properties": {"unit": "m3", "spec": "25-210-15", "description": "pour ready-mixed concrete"}, "source_section": "S1"}
{"id": "L1", "name": "common laborer", "type": "Labor", "properties": {"unit": "person"}, "source_section": "S1"}
{"id": "S1", "name": "1-1 Pouring", "type": "Section", "properties": {}, "source_section": "S1"}` + "\n"
	testRelations = `{"source": "W1", "target": "L1", "type": "REQUIRES_LABOR", "properties": {"quantity": 0.122, "unit": " person"}}
{"source": "W1", "target": "S1", "type": "BELONGS_TO", "properties": {}}` + "\n"
	testChunks = `{"id": "C1", "section_id": "S1", "content": "1-1 Pouring: common laborer 0.122 person per m3."}` + "\n"
	testTable  = "name,spec,total\nconcrete pouring,25-180-12,\"120,531\"\nconcrete pouring,25-210-15,126600\n"
)

func bundleFiles(relations string) []file {
	return []file{{"sections.jsonl", []byte(testSections)}, {"entities.jsonl", []byte(testEntities)},
		{"relations.jsonl", []byte(relations)}, {"chunks.jsonl", []byte(testChunks)}}
}

// testGraphProfile is the collection's profile, with a graph section (YAML, as a profile file).
const testGraphProfile = `
replies: {off_topic: Only questions about construction work., not_covered: Nothing in the data.}
intents: [{name: cost, keywords: [cost, price]}]
spec_patterns: [{name: mix, pattern: '\d+-\d+-\d+'}]
graph:
  tables:
    - name: prices
      intent: cost
      key: name
      variant: spec
      base_property: spec
      columns: [{name: name, type: text}, {name: spec, type: text}, {name: total, type: integer}]
  labels: {relations: {REQUIRES_LABOR: labor}}
`

func TestGraphAPI(t *testing.T) {
	b := setup(t, nil)
	b.run(t, []scenario{
		{name: "ProfileBadGraphSection", method: "PUT", path: "/api/collections/works", status: http.StatusBadRequest, code: rag.CodeInvalid,
			body: func(*testing.T) (io.Reader, string) {
				return strings.NewReader(strings.Replace(testGraphProfile, "intent: cost", "intent: price", 1)), "application/yaml"
			},
			contains: []string{`graph.tables[0].intent: \"price\" is not one of the profile's intents`}},
		{name: "ProfileBadColumnType", method: "PUT", path: "/api/collections/works", status: http.StatusBadRequest, code: rag.CodeInvalid,
			body: func(*testing.T) (io.Reader, string) {
				return strings.NewReader(strings.Replace(testGraphProfile, "type: integer", "type: float", 1)), "application/yaml"
			},
			contains: []string{`graph: tables[0].columns[2].type: \"float\" is not text, integer or number`}},
		{name: "Profile", method: "PUT", path: "/api/collections/works", status: http.StatusCreated,
			body: func(*testing.T) (io.Reader, string) { return strings.NewReader(testGraphProfile), "application/yaml" }},
		{name: "ProfileShowsGraph", method: "GET", path: "/api/collections/works", status: http.StatusOK,
			contains: []string{`"graph":{"tables":[{"name":"prices","intent":"cost"`}},
		{name: "BrokenBundleRejected", method: "POST", path: "/api/collections/works/graph", status: http.StatusBadRequest,
			code: rag.CodeInvalid, body: multipartBody(bundleFiles(testRelations+`{"source": "W1", "target": "NOPE", "type": "X"}`+"\n"), nil),
			contains: []string{`"problems"`, `unknown target entity \"NOPE\"`, `"line":3`}},
		{name: "NothingChanged", method: "GET", path: "/api/collections/works/graph", status: http.StatusOK,
			contains: []string{`"entities":0`, `"relations":0`}},
		{name: "Import", method: "POST", path: "/api/collections/works/graph", status: http.StatusOK,
			body:     multipartBody(bundleFiles(testRelations), nil),
			contains: []string{`"entities":{"added":3,`, `"embedded":3`, `"changed":true`}},
		{name: "ReimportUnchanged", method: "POST", path: "/api/collections/works/graph", status: http.StatusOK,
			body:     multipartBody(bundleFiles(testRelations), nil),
			contains: []string{`"entities":{"added":0,"updated":0,"removed":0,"unchanged":3}`, `"embedded":0`, `"changed":false`}},
		{name: "RemovedRowsDisappear", method: "POST", path: "/api/collections/works/graph", status: http.StatusOK,
			body:     multipartBody(bundleFiles(strings.SplitAfter(testRelations, "\n")[0]), nil),
			contains: []string{`"relations":{"added":0,"updated":0,"removed":1,"unchanged":1}`, `"embedded":0`}},
		{name: "UnknownFile", method: "POST", path: "/api/collections/works/graph", status: http.StatusBadRequest, code: rag.CodeInvalid,
			body: multipartBody(append(bundleFiles(testRelations), file{"notes.txt", []byte("x")}), nil), contains: []string{"not a bundle file"}},
		{name: "TableBadValue", method: "POST", path: "/api/collections/works/tables/prices", status: http.StatusBadRequest, code: rag.CodeInvalid,
			body: func(*testing.T) (io.Reader, string) {
				return strings.NewReader("name,spec,total\nconcrete pouring,x,12a\n"), "text/csv"
			},
			contains: []string{"line 2 column total"}},
		{name: "TableNotDeclared", method: "POST", path: "/api/collections/works/tables/other", status: http.StatusBadRequest, code: rag.CodeInvalid,
			body: func(*testing.T) (io.Reader, string) { return strings.NewReader(testTable), "text/csv" }},
		{name: "Table", method: "POST", path: "/api/collections/works/tables/prices", status: http.StatusOK,
			body: func(*testing.T) (io.Reader, string) { return strings.NewReader(testTable), "text/csv" }, contains: []string{`"rows":2`}},
		{name: "Stats", method: "GET", path: "/api/collections/works/graph", status: http.StatusOK,
			contains: []string{`"entities":3`, `"relations":1`, `"tables":{"prices":2}`}},
		{name: "CostWithSpec", method: "POST", path: "/api/chat", status: http.StatusOK,
			body:        jsonBody(map[string]any{"question": "concrete pouring 25-180-12 price", "collection": "works"}),
			contains:    []string{"120,531", "common laborer 0.122 person", `"entities_found":`, `"rows_matched":1`, `"entity_type":"WorkType"`, `"section":"Concrete > 1-1 Pouring"`},
			notContains: []string{"126,600"}},
		{name: "NoSpecBaseRowFirst", method: "POST", path: "/api/chat", status: http.StatusOK,
			body:     jsonBody(map[string]any{"question": "what does concrete pouring cost", "collection": "works"}),
			contains: []string{`| concrete pouring | 25-210-15 | 126,600 |\n| concrete pouring | 25-180-12 | 120,531 |`}},
		{name: "OffTopic", method: "POST", path: "/api/chat", status: http.StatusOK,
			body:     jsonBody(map[string]any{"question": "what is the weather like in Seoul", "collection": "works"}),
			contains: []string{"Only questions about construction work.", `"not_found":true`}},
		{name: "Nonsense", method: "POST", path: "/api/chat", status: http.StatusOK,
			body:     jsonBody(map[string]any{"question": "xyzzy", "collection": "works"}),
			contains: []string{"Nothing in the data.", `"not_found":true`}},
		{name: "EmptyQuestion", method: "POST", path: "/api/chat", status: http.StatusBadRequest, code: rag.CodeQuestionRequired,
			body: jsonBody(map[string]any{"question": " ", "collection": "works"})},
	})
}
