package server

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/webhooks"
)

// registeredRoutes reads the patterns the package registers on its mux — every s.mux.Handle/HandleFunc
// call with a literal "METHOD /path" pattern under /api/ or /v1/ in its (non-test) source files — as
// "METHOD /path" with wildcards as OpenAPI writes them ({model...} is {model}).
func registeredRoutes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") {
				return true
			}
			if mux, ok := sel.X.(*ast.SelectorExpr); !ok || mux.Sel.Name != "mux" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok {
				t.Errorf("%s: a route pattern that is not a literal", fset.Position(call.Pos()))
				return true
			}
			pattern, _ := strconv.Unquote(lit.Value)
			method, path, ok := strings.Cut(pattern, " ")
			if !ok || !(strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/v1/")) {
				return true // the UI, the probes, and the catch-all 404s
			}
			out = append(out, method+" "+strings.ReplaceAll(path, "...}", "}"))
			return true
		})
	}
	if len(out) < 30 {
		t.Fatalf("found only %d routes: %v", len(out), out)
	}
	slices.Sort(out)
	return out
}

// openAPIDoc fetches the document the server serves.
func openAPIDoc(t *testing.T, b *bundle) map[string]any {
	t.Helper()
	resp, body := b.do(t, request{method: "GET", path: "/api/openapi.json"})
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /api/openapi.json: %d %s", resp.StatusCode, trim(body))
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi %v", doc["openapi"])
	}
	return doc
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

func TestOpenAPI(t *testing.T) {
	b := setup(t, nil)
	doc := openAPIDoc(t, b)
	paths := doc["paths"].(map[string]any)

	t.Run("EveryRouteDocumented", func(t *testing.T) {
		var documented []string
		for path, item := range paths {
			for method := range item.(map[string]any) {
				if method != "parameters" {
					documented = append(documented, strings.ToUpper(method)+" "+path)
				}
			}
		}
		slices.Sort(documented)
		routes := registeredRoutes(t)
		for _, r := range routes {
			if !slices.Contains(documented, r) {
				t.Errorf("route %s is not in internal/server/openapi.yaml", r)
			}
		}
		for _, d := range documented {
			if !slices.Contains(routes, d) {
				t.Errorf("openapi.yaml documents %s, which is not a route", d)
			}
		}
	})

	t.Run("PathParametersDeclared", func(t *testing.T) {
		for path, item := range paths {
			it := item.(map[string]any)
			for method, op := range it {
				if method == "parameters" {
					continue
				}
				declared := map[string]bool{}
				for _, list := range []any{it["parameters"], op.(map[string]any)["parameters"]} {
					ps, _ := list.([]any)
					for _, p := range ps {
						p := resolve(t, doc, p.(map[string]any))
						if p["in"] == "path" {
							declared[p["name"].(string)] = true
						}
					}
				}
				for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
					if !declared[m[1]] {
						t.Errorf("%s %s: path parameter %s is not declared", method, path, m[1])
					}
				}
			}
		}
	})

	t.Run("RefsResolve", func(t *testing.T) {
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				if _, ok := x["$ref"].(string); ok {
					resolve(t, doc, x)
				}
				for _, c := range x {
					walk(c)
				}
			case []any:
				for _, c := range x {
					walk(c)
				}
			}
		}
		walk(doc)
	})
}

// resolve follows a local $ref ("#/components/…") of v, failing the test when it points at nothing.
func resolve(t *testing.T, doc map[string]any, v map[string]any) map[string]any {
	t.Helper()
	ref, ok := v["$ref"].(string)
	if !ok {
		return v
	}
	var cur any = doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok || m[part] == nil {
			t.Fatalf("$ref %s resolves to nothing", ref)
		}
		cur = m[part]
	}
	return resolve(t, doc, cur.(map[string]any))
}

// requiredMissing lists the properties schema requires (through $ref and allOf, into objects and arrays'
// items) that v lacks, by their JSON path.
func requiredMissing(t *testing.T, doc, schema map[string]any, v any, at string) []string {
	t.Helper()
	schema = resolve(t, doc, schema)
	var missing []string
	if all, ok := schema["allOf"].([]any); ok {
		for _, s := range all {
			missing = append(missing, requiredMissing(t, doc, s.(map[string]any), v, at)...)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		req, _ := schema["required"].([]any)
		for _, r := range req {
			if _, ok := x[r.(string)]; !ok {
				missing = append(missing, at+"."+r.(string))
			}
		}
		props, _ := schema["properties"].(map[string]any)
		for k, ps := range props {
			if c, ok := x[k]; ok {
				missing = append(missing, requiredMissing(t, doc, ps.(map[string]any), c, at+"."+k)...)
			}
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for i, c := range x {
				missing = append(missing, requiredMissing(t, doc, items, c, at+"["+strconv.Itoa(i)+"]")...)
			}
		}
	}
	return missing
}

// TestOpenAPIResponses checks real responses against the document: each has the required properties of
// its status's schema.
func TestOpenAPIResponses(t *testing.T) {
	b := setup(t, nil)
	b.ingestFile(t, renderDoc, func(r *ingest.Request) { r.Collection = "react" })
	b.deps.Webhooks = webhooks.New(b.store, nil, webhooks.Options{AllowPrivate: true})
	b.serve(t)
	doc := openAPIDoc(t, b)
	const q = "컴포넌트 렌더링이 일어나는 이유는 무엇인가요?"
	cases := []struct {
		method, path, docPath, body string
		status                      int
	}{
		{"GET", "/api/status", "/api/status", "", 200},
		{"POST", "/api/chat", "/api/chat", `{"question":"` + q + `"}`, 200},
		{"POST", "/api/chat", "/api/chat", `{}`, 400},
		{"POST", "/api/search", "/api/search", `{"query":"` + q + `"}`, 200},
		{"GET", "/api/documents", "/api/documents", "", 200},
		{"GET", "/api/collections", "/api/collections", "", 200},
		{"GET", "/api/collections/react", "/api/collections/{name}", "", 200},
		{"GET", "/api/documents/nope", "/api/documents/{id}", "", 404},
		{"POST", "/api/conversations", "/api/conversations", `{"title":"t"}`, 201},
		{"GET", "/api/conversations", "/api/conversations", "", 200},
		{"GET", "/api/conversations/nope", "/api/conversations/{id}", "", 404},
		{"POST", "/api/collections/react/webhooks", "/api/collections/{name}/webhooks", `{"url":"http://127.0.0.1:9/hook"}`, 201},
		{"POST", "/api/collections/react/webhooks", "/api/collections/{name}/webhooks", `{"url":"ftp://127.0.0.1/"}`, 400},
		{"GET", "/api/collections/react/webhooks", "/api/collections/{name}/webhooks", "", 200},
		{"GET", "/api/collections/react/webhooks/nope/deliveries", "/api/collections/{name}/webhooks/{id}/deliveries", "", 404},
		{"POST", "/api/collections/react/webhooks/nope/ping", "/api/collections/{name}/webhooks/{id}/ping", "", 404},
		{"GET", "/v1/models", "/v1/models", "", 200},
		{"POST", "/v1/chat/completions", "/v1/chat/completions", `{"model":"ragd","messages":[{"role":"user","content":"` + q + `"}]}`, 200},
		{"POST", "/v1/chat/completions", "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"x"}]}`, 404},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path+" "+strconv.Itoa(c.status), func(t *testing.T) {
			r := request{method: c.method, path: c.path}
			if c.body != "" {
				r.body, r.ctype = strings.NewReader(c.body), "application/json"
			}
			resp, body := b.do(t, r)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, trim(body))
			}
			op := doc["paths"].(map[string]any)[c.docPath].(map[string]any)[strings.ToLower(c.method)].(map[string]any)
			responses := op["responses"].(map[string]any)
			res, ok := responses[strconv.Itoa(c.status)].(map[string]any)
			if !ok {
				res = responses["default"].(map[string]any)
			}
			res = resolve(t, doc, res)
			schema := res["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
			if missing := requiredMissing(t, doc, schema, v, "$"); len(missing) > 0 {
				t.Errorf("response lacks %v: %s", missing, trim(body))
			}
		})
	}
	// The checker itself: an error body without "message" is caught.
	if m := requiredMissing(t, doc, map[string]any{"$ref": "#/components/schemas/Error"}, map[string]any{"error": string(rag.CodeInvalid)}, "$"); !slices.Equal(m, []string{"$.message"}) {
		t.Errorf("requiredMissing = %v", m)
	}
}
