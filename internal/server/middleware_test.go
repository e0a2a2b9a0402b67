package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

const (
	keyA = "ragd-test-key-alpha-0123456789"
	keyB = "ragd-test-key-beta-9876543210"
)

func keyPrincipal(key string) string {
	h := sha256.Sum256([]byte(key))
	return "key:" + hex.EncodeToString(h[:])[:8]
}

func TestAPIKeys(t *testing.T) {
	b := setup(t, func(c *Settings) { c.APIKeys = []string{keyA, keyB} })
	search := jsonBody(map[string]any{"query": "아무거나"})
	b.run(t, []scenario{
		{name: "ErrMissingKey", method: "POST", path: "/api/search", body: search, status: 401, code: rag.CodeUnauthorized,
			wantHeaders: map[string]string{"WWW-Authenticate": `Bearer realm="ragd"`}},
		{name: "ErrWrongKey", method: "POST", path: "/api/search", body: search, status: 401, code: rag.CodeUnauthorized,
			headers: map[string]string{"X-RAG-API-Key": keyA + "x"}},
		{name: "ErrKeyPrefix", method: "POST", path: "/api/search", body: search, status: 401, code: rag.CodeUnauthorized,
			headers: map[string]string{"X-RAG-API-Key": keyA[:len(keyA)-1]}},
		{name: "ErrWrongBearer", method: "GET", path: "/api/documents", status: 401, code: rag.CodeUnauthorized,
			headers: map[string]string{"Authorization": "Bearer nope"}},
		{name: "ErrBasicScheme", method: "GET", path: "/api/documents", status: 401, code: rag.CodeUnauthorized,
			headers: map[string]string{"Authorization": "Basic " + keyA}},
		{name: "ErrUnknownEndpointStillNeedsKey", method: "GET", path: "/api/nope", status: 401, code: rag.CodeUnauthorized},
		{name: "HeaderKey", method: "POST", path: "/api/search", body: search, status: 200,
			headers: map[string]string{"X-RAG-API-Key": keyA}},
		{name: "BearerKey", method: "POST", path: "/api/search", body: search, status: 200,
			headers: map[string]string{"Authorization": "Bearer " + keyB}},
		{name: "BearerLowercase", method: "GET", path: "/api/documents", status: 200,
			headers: map[string]string{"Authorization": "bearer " + keyB}},
		{name: "HealthzOpen", method: "GET", path: "/healthz", status: 200},
		{name: "ReadyzOpen", method: "GET", path: "/readyz", status: 200},
		{name: "UIOpen", method: "GET", path: "/", status: 200, contains: []string{"ragd — chat</title>"}},
		{name: "StatusSaysAuth", method: "GET", path: "/api/status", status: 200, contains: []string{`"auth":true`},
			headers: map[string]string{"X-RAG-API-Key": keyA}},
		{
			name: "PrincipalOwnsUpload", method: "POST", path: "/api/documents", status: 202,
			headers: map[string]string{"X-RAG-API-Key": keyA},
			body:    multipartBody([]file{{"owned.txt", []byte("owned text")}}, nil),
			check: func(t *testing.T, _ *http.Response, body []byte) {
				d := decode[uploadResponse](t, body).Documents[0]
				if want := keyPrincipal(keyA); d.Owner != want {
					t.Fatalf("owner %q, want %q", d.Owner, want)
				}
			},
		},
	})
	if logs := b.logs.String(); strings.Contains(logs, keyA) || strings.Contains(logs, keyB) || strings.Contains(logs, keyA[:12]) {
		t.Fatalf("an API key was logged:\n%s", logs)
	}
	if !strings.Contains(b.logs.String(), "path=/api/search") {
		t.Fatal("requests are not logged at debug level (the key check above would prove nothing)")
	}

	// Without keys every request is the local principal.
	open := setup(t, nil)
	docs := open.upload(t, []file{{"local.txt", []byte("local text")}}, nil)
	if docs[0].Owner != rag.LocalPrincipal.ID {
		t.Fatalf("owner %q without keys", docs[0].Owner)
	}
}

func TestKeyringConstantTimeShape(t *testing.T) {
	k := newKeyring([]string{" " + keyA + " ", "", keyB})
	if len(k.hashes) != 2 {
		t.Fatalf("%d keys, want 2 (blank dropped, spaces trimmed)", len(k.hashes))
	}
	for _, c := range []struct {
		key string
		ok  bool
	}{{keyA, true}, {keyB, true}, {"", false}, {keyA + keyB, false}, {strings.ToUpper(keyA), false}} {
		p, ok := k.principal(c.key)
		if ok != c.ok || (ok && (p.ID != keyPrincipal(c.key) || !p.Admin)) {
			t.Errorf("principal(%q) = %+v, %v", c.key, p, ok)
		}
	}
}

func TestCORS(t *testing.T) {
	const allowed, other = "https://app.example", "https://evil.example"
	b := setup(t, func(c *Settings) {
		c.CORSOrigins = []string{allowed, "http://localhost:5173/"}
		c.APIKeys = []string{keyA}
	})
	key := map[string]string{"X-RAG-API-Key": keyA}
	with := func(h map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range key {
			out[k] = v
		}
		for k, v := range h {
			out[k] = v
		}
		return out
	}
	preflight := func(origin string) map[string]string {
		return map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "content-type, x-rag-api-key"}
	}
	b.run(t, []scenario{
		{name: "PreflightAllowed", method: "OPTIONS", path: "/api/chat", headers: preflight(allowed), status: 204,
			wantHeaders: map[string]string{
				"Access-Control-Allow-Origin":  allowed,
				"Access-Control-Allow-Methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
				"Access-Control-Allow-Headers": "Content-Type, Authorization, X-RAG-API-Key",
				"Access-Control-Max-Age":       "600",
			}},
		{name: "PreflightAllowedTrailingSlashConfig", method: "OPTIONS", path: "/api/documents",
			headers: preflight("http://localhost:5173"), status: 204,
			wantHeaders: map[string]string{"Access-Control-Allow-Origin": "http://localhost:5173"}},
		{name: "ErrPreflightRefused", method: "OPTIONS", path: "/api/chat", headers: preflight(other), status: 403,
			code: rag.CodeForbidden, wantHeaders: map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": ""}},
		{name: "AllowedOrigin", method: "GET", path: "/api/documents", headers: with(map[string]string{"Origin": allowed}), status: 200,
			wantHeaders: map[string]string{"Access-Control-Allow-Origin": allowed, "Vary": "Origin"}},
		{name: "ErrRefusedOrigin", method: "POST", path: "/api/search", headers: with(map[string]string{"Origin": other}),
			body: jsonBody(map[string]any{"query": "x"}), status: 403, code: rag.CodeForbidden,
			wantHeaders: map[string]string{"Access-Control-Allow-Origin": ""}},
		{name: "SameOrigin", method: "GET", path: "/api/documents", headers: with(map[string]string{"Origin": b.ts.URL}), status: 200,
			wantHeaders: map[string]string{"Access-Control-Allow-Origin": ""}},
		{name: "NoOrigin", method: "GET", path: "/api/documents", headers: key, status: 200,
			wantHeaders: map[string]string{"Access-Control-Allow-Origin": ""}},
		{name: "ErrAllowedOriginStillNeedsKey", method: "GET", path: "/api/documents", headers: map[string]string{"Origin": allowed},
			status: 401, code: rag.CodeUnauthorized, wantHeaders: map[string]string{"Access-Control-Allow-Origin": allowed}},
		{name: "UIFromOtherOriginNotBlocked", method: "GET", path: "/app.css", headers: map[string]string{"Origin": other}, status: 200,
			wantHeaders: map[string]string{"Access-Control-Allow-Origin": ""}},
	})

	wild := setup(t, func(c *Settings) { c.CORSOrigins = []string{"*"} })
	wild.run(t, []scenario{
		{name: "Wildcard", method: "OPTIONS", path: "/api/chat", headers: preflight(other), status: 204,
			wantHeaders: map[string]string{"Access-Control-Allow-Origin": other}},
	})
}

func TestRateLimits(t *testing.T) {
	const chatN, searchN = 3, 5
	b := setup(t, func(c *Settings) {
		c.RateLimitChat, c.RateLimitSearch = chatN, searchN
		c.APIKeys = []string{keyA, keyB}
	})
	b.ingestFile(t, renderDoc, nil)
	chat := func(key string) scenario {
		return scenario{method: "POST", path: "/api/chat", headers: map[string]string{"X-RAG-API-Key": key},
			body: jsonBody(map[string]any{"question": "렌더링"})}
	}
	search := func(key string) scenario {
		return scenario{method: "POST", path: "/api/search", headers: map[string]string{"X-RAG-API-Key": key},
			body: jsonBody(map[string]any{"query": "렌더링"})}
	}
	named := func(sc scenario, name string, status int, code rag.Code, headers map[string]string) scenario {
		sc.name, sc.status, sc.code, sc.wantHeaders = name, status, code, headers
		return sc
	}
	var chats []scenario
	for i := 1; i <= chatN; i++ {
		chats = append(chats, named(chat(keyA), fmt.Sprintf("Chat%d", i), 200, "", nil))
	}
	chats = append(chats,
		named(chat(keyA), fmt.Sprintf("ErrChat%d", chatN+1), 429, rag.CodeRateLimited, map[string]string{"Retry-After": "20"}),
		named(chat(keyB), "OtherKeyHasItsOwnLimit", 200, "", nil),
		named(search(keyA), "SearchHasItsOwnLimit", 200, "", nil),
	)
	b.run(t, chats)

	b.clock.advance(19 * time.Second)
	b.run(t, []scenario{named(chat(keyA), "ErrStillLimitedAfter19s", 429, rag.CodeRateLimited, map[string]string{"Retry-After": "1"})})
	b.clock.advance(time.Second)
	b.run(t, []scenario{
		named(chat(keyA), "OneMoreAfter20s", 200, "", nil),
		named(chat(keyA), "ErrThenLimitedAgain", 429, rag.CodeRateLimited, map[string]string{"Retry-After": "20"}),
	})

	// The one search above was 20 s ago: the search allowance is whole again.
	var searches []scenario
	for i := 1; i <= searchN; i++ {
		searches = append(searches, named(search(keyA), fmt.Sprintf("Search%d", i), 200, "", nil))
	}
	searches = append(searches, named(search(keyA), fmt.Sprintf("ErrSearch%d", searchN+1), 429, rag.CodeRateLimited,
		map[string]string{"Retry-After": "12"}))
	b.run(t, searches)

	b.clock.advance(time.Minute)
	var refilled []scenario
	for i := 1; i <= searchN; i++ {
		refilled = append(refilled, named(search(keyA), fmt.Sprintf("RefilledSearch%d", i), 200, "", nil))
	}
	b.run(t, append(refilled, named(search(keyA), "ErrRefilledBurstOver", 429, rag.CodeRateLimited, nil)))
}

func TestRateLimitPerClientIP(t *testing.T) {
	b := setup(t, func(c *Settings) { c.RateLimitSearch = 2 })
	call := func(ip string) int {
		r := httptest.NewRequest("POST", "/api/search", strings.NewReader(`{"query": "렌더링"}`))
		r.RemoteAddr = ip + ":40000"
		w := httptest.NewRecorder()
		b.srv.ServeHTTP(w, r)
		return w.Code
	}
	got := []int{call("10.0.0.1"), call("10.0.0.1"), call("10.0.0.1"), call("10.0.0.2")}
	if fmt.Sprint(got) != "[200 200 429 200]" {
		t.Fatalf("statuses %v, want [200 200 429 200]", got)
	}
}

func TestErrorCodes(t *testing.T) {
	b := setup(t, nil)
	// Every code of SPEC.md "Errors" maps to its status with {"error", "message"}; causes are not shown.
	cases := []struct {
		err    error
		status int
		code   rag.Code
	}{
		{rag.Errorf(rag.CodeQuestionRequired, "q"), 400, rag.CodeQuestionRequired},
		{rag.Errorf(rag.CodeInvalid, "bad"), 400, rag.CodeInvalid},
		{rag.Errorf(rag.CodeUnauthorized, "key"), 401, rag.CodeUnauthorized},
		{rag.Errorf(rag.CodeForbidden, "no"), 403, rag.CodeForbidden},
		{rag.ErrNotFound, 404, rag.CodeNotFound},
		{rag.ErrConflict, 409, rag.CodeConflict},
		{rag.Errorf(rag.CodePayloadTooLarge, "big"), 413, rag.CodePayloadTooLarge},
		{rag.Errorf(rag.CodeUnsupportedMediaType, "exe"), 415, rag.CodeUnsupportedMediaType},
		{rag.Errorf(rag.CodeRateLimited, "slow down"), 429, rag.CodeRateLimited},
		{rag.WrapError(rag.CodeDBError, errors.New("SELECT secret"), "database error"), 500, rag.CodeDBError},
		{errors.New("open /etc/secret: permission denied"), 500, rag.CodeInternal},
		{rag.WrapError(rag.CodeEmbeddingFailed, errors.New("key=secret"), "embedding failed"), 502, rag.CodeEmbeddingFailed},
		{rag.WrapError(rag.CodeLLMFailed, errors.New("key=secret"), "llm failed"), 502, rag.CodeLLMFailed},
	}
	for _, c := range cases {
		t.Run(string(c.code), func(t *testing.T) {
			w := httptest.NewRecorder()
			b.srv.writeError(w, httptest.NewRequest("GET", "/api/x", nil), c.err)
			body := decode[errorBody](t, w.Body.Bytes())
			if w.Code != c.status || body.Error != c.code || body.Message == "" || strings.Contains(w.Body.String(), "secret") {
				t.Fatalf("%d %s", w.Code, w.Body.String())
			}
		})
	}

	t.Run("PanicIsInternal", func(t *testing.T) {
		h := b.srv.recoverPanics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom: secret") }))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/api/x", nil))
		if w.Code != 500 || !strings.Contains(w.Body.String(), `"error":"internal"`) || strings.Contains(w.Body.String(), "secret") {
			t.Fatalf("%d %s", w.Code, w.Body.String())
		}
		if !strings.Contains(b.logs.String(), "boom: secret") {
			t.Fatal("the panic is not logged")
		}
	})
}

func TestHealthStatusAndUI(t *testing.T) {
	b := setup(t, nil)
	b.ingestFile(t, renderDoc, nil)
	b.run(t, []scenario{
		{name: "Healthz", method: "GET", path: "/healthz", status: 200, contains: []string{`"ok"`}},
		{name: "Readyz", method: "GET", path: "/readyz", status: 200, contains: []string{`"ready"`}},
		{
			name: "Status", method: "GET", path: "/api/status", status: 200,
			contains: []string{`"lexical":true`, `"provider":"hash"`, `"space":"hash/`, `"generator":"extractive`,
				`"ready":1`, `"total":1`, `"auth":false`, `"max_upload_bytes":52428800`, `"note":"The default hash embedder is lexical`},
		},
		{name: "ChatPage", method: "GET", path: "/", status: 200,
			contains: []string{`<title data-i18n="title.chat">ragd — chat`, `src="/i18n.js"`, `src="/chat.js"`, "vendor/dompurify/purify.min.js"},
			wantHeaders: map[string]string{"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": contentSecurityPolicy,
				"X-Content-Type-Options": "nosniff"}},
		{name: "DocumentsPage", method: "GET", path: "/documents", status: 200, contains: []string{`<title data-i18n="title.documents">ragd — documents`, "dropzone"}},
		{name: "Script", method: "GET", path: "/chat.js", status: 200, contains: []string{"DOMPurify.sanitize"}},
		{name: "VendoredMarked", method: "GET", path: "/vendor/marked/marked.umd.js", status: 200, contains: []string{"marked v18"}},
		{name: "VendoredLicence", method: "GET", path: "/vendor/dompurify/LICENSE", status: 200},
		{name: "Favicon", method: "GET", path: "/favicon.ico", status: 200,
			check: func(t *testing.T, resp *http.Response, body []byte) {
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "image/") || len(body) < 22 || string(body[:4]) != "\x00\x00\x01\x00" {
					t.Fatalf("favicon: %s, %d bytes starting %q", ct, len(body), body[:min(4, len(body))])
				}
			}},
		{name: "ErrUnknownAPI", method: "GET", path: "/api/nope", status: 404, code: rag.CodeNotFound},
		{name: "ErrUnknownPage", method: "GET", path: "/nope.html", status: 404},
		{name: "ErrEmbedSourceNotServed", method: "GET", path: "/embed.go", status: 404},
	})

	// A store that is gone: readyz and reads fail with db_error, not a crash.
	if err := b.store.Close(); err != nil {
		t.Fatal(err)
	}
	b.run(t, []scenario{
		{name: "ErrReadyzStoreClosed", method: "GET", path: "/readyz", status: 500, code: rag.CodeDBError},
		{name: "ErrListStoreClosed", method: "GET", path: "/api/documents", status: 500, code: rag.CodeDBError},
		{name: "HealthzStillUp", method: "GET", path: "/healthz", status: 200},
	})
}
