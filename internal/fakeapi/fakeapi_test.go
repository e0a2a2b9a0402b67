package fakeapi_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/fakeapi"
)

// TestRejects checks that each fake refuses what its real API refuses, and lists it as a violation.
func TestRejects(t *testing.T) {
	t.Parallel()
	g := fakeapi.NewGemini("gk")
	o := fakeapi.NewOpenAI("ok")
	a := fakeapi.NewAnthropic("ak")
	t.Cleanup(func() { g.Close(); o.Close(); a.Close() })
	batch := func(n int) string {
		var reqs []string
		for i := range n {
			reqs = append(reqs, fmt.Sprintf(`{"model":"models/text-embedding-004","content":{"parts":[{"text":"t%d"}]}}`, i))
		}
		return `{"requests":[` + strings.Join(reqs, ",") + `]}`
	}
	for _, tc := range []struct {
		name    string
		server  *fakeapi.Server
		url     string
		headers map[string]string
		body    string
		status  int
		content string
	}{
		{"GeminiNoKey", g.Server, g.URL() + "/v1beta/models/text-embedding-004:batchEmbedContents", nil, batch(1), 403, "PERMISSION_DENIED"},
		{"GeminiWrongKey", g.Server, g.URL() + "/v1beta/models/text-embedding-004:batchEmbedContents", map[string]string{"x-goog-api-key": "no"}, batch(1), 400, "API key not valid"},
		{"GeminiKeyInQuery", g.Server, g.URL() + "/v1beta/models/text-embedding-004:batchEmbedContents?key=gk", nil, batch(1), 200, `"embeddings"`},
		{"GeminiBatch100", g.Server, g.URL() + "/v1beta/models/text-embedding-004:batchEmbedContents", map[string]string{"x-goog-api-key": "gk"}, batch(100), 200, `"values"`},
		{"GeminiBatch101", g.Server, g.URL() + "/v1beta/models/text-embedding-004:batchEmbedContents", map[string]string{"x-goog-api-key": "gk"}, batch(101), 400, "at most 100"},
		{"GeminiUnknownModel", g.Server, g.URL() + "/v1beta/models/nope:embedContent", map[string]string{"x-goog-api-key": "gk"}, `{"content":{"parts":[{"text":"x"}]}}`, 404, "NOT_FOUND"},
		{"GeminiEmbedContent", g.Server, g.URL() + "/v1beta/models/text-embedding-004:embedContent", map[string]string{"x-goog-api-key": "gk"}, `{"content":{"parts":[{"text":"x"}]},"taskType":"RETRIEVAL_QUERY"}`, 200, `"embedding"`},
		{"GeminiBadRole", g.Server, g.URL() + "/v1beta/models/gemini-2.5-flash:generateContent", map[string]string{"x-goog-api-key": "gk"}, `{"contents":[{"role":"assistant","parts":[{"text":"x"}]}]}`, 400, "valid role"},
		{"GeminiStreamWithoutSSE", g.Server, g.URL() + "/v1beta/models/gemini-2.5-flash:streamGenerateContent", map[string]string{"x-goog-api-key": "gk"}, `{"contents":[{"role":"user","parts":[{"text":"x"}]}]}`, 400, "alt=sse"},
		{"GeminiProBudgetZero", g.Server, g.URL() + "/v1beta/models/gemini-2.5-pro:generateContent", map[string]string{"x-goog-api-key": "gk"}, `{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":0}}}`, 400, "only works in thinking mode"},
		{"OpenAINoAuth", o.Server, o.URL() + "/v1/embeddings", map[string]string{"Content-Type": "application/json"}, `{"input":"x","model":"text-embedding-3-small"}`, 401, "didn't provide an API key"},
		{"OpenAIWrongKeyMasked", o.Server, o.URL() + "/v1/embeddings", map[string]string{"Authorization": "Bearer sk-wrong-123456789", "Content-Type": "application/json"}, `{"input":"x","model":"text-embedding-3-small"}`, 401, "sk-****6789"},
		{"OpenAIAdaDimensions", o.Server, o.URL() + "/v1/embeddings", map[string]string{"Authorization": "Bearer ok", "Content-Type": "application/json"}, `{"input":"x","model":"text-embedding-ada-002","dimensions":256}`, 400, "does not support specifying dimensions"},
		{"OpenAIEmptyInput", o.Server, o.URL() + "/v1/embeddings", map[string]string{"Authorization": "Bearer ok", "Content-Type": "application/json"}, `{"input":[""],"model":"text-embedding-3-small"}`, 400, "empty strings"},
		{"OpenAIBase64", o.Server, o.URL() + "/v1/embeddings", map[string]string{"Authorization": "Bearer ok", "Content-Type": "application/json"}, `{"input":"x","model":"all-minilm","encoding_format":"base64"}`, 200, `"embedding":"`},
		{"OpenAIStreamOptionsWithoutStream", o.Server, o.URL() + "/v1/chat/completions", map[string]string{"Authorization": "Bearer ok", "Content-Type": "application/json"}, `{"model":"m","messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}}`, 400, "only allowed when 'stream' is enabled"},
		{"OpenAIStreamDone", o.Server, o.URL() + "/v1/chat/completions", map[string]string{"Authorization": "Bearer ok", "Content-Type": "application/json"}, `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`, 200, "data: [DONE]"},
		{"AnthropicNoVersion", a.Server, a.URL() + "/v1/messages", map[string]string{"x-api-key": "ak"}, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, 400, "anthropic-version"},
		{"AnthropicNoMaxTokens", a.Server, a.URL() + "/v1/messages", map[string]string{"x-api-key": "ak", "anthropic-version": "2023-06-01"}, `{"model":"m","messages":[{"role":"user","content":"x"}]}`, 400, "max_tokens"},
		{"AnthropicSystemRole", a.Server, a.URL() + "/v1/messages", map[string]string{"x-api-key": "ak", "anthropic-version": "2023-06-01"}, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"system","content":"y"}]}`, 400, "'user' or 'assistant'"},
		{"OpenAISchemaNotStrict", o.Server, o.URL() + "/v1/chat/completions", map[string]string{"Authorization": "Bearer ok", "Content-Type": "application/json"}, `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","strict":true,"schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}}}`, 400, "additionalProperties"},
		{"OpenAISchemaAnswer", o.Server, o.URL() + "/v1/chat/completions", map[string]string{"Authorization": "Bearer ok", "Content-Type": "application/json"}, `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","strict":true,"schema":{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","enum":["z"]}},"required":["a"]}}}}`, 200, `"content":"{`},
		{"GeminiSchemaWithoutMime", g.Server, g.URL() + "/v1beta/models/gemini-2.5-flash:generateContent", map[string]string{"x-goog-api-key": "gk"}, `{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"responseJsonSchema":{"type":"object"}}}`, 400, "response_mime_type"},
		{"AnthropicSchemaMissingRequired", a.Server, a.URL() + "/v1/messages", map[string]string{"x-api-key": "ak", "anthropic-version": "2023-06-01"}, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"output_config":{"format":{"type":"json_schema","schema":{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}}}}`, 400, "Missing 'a'"},
		{"AnthropicStreamEvents", a.Server, a.URL() + "/v1/messages", map[string]string{"x-api-key": "ak", "anthropic-version": "2023-06-01"}, `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`, 200, "event: message_stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(tc.server.Violations())
			req, _ := http.NewRequest(http.MethodPost, tc.url, strings.NewReader(tc.body))
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.content) {
				t.Fatalf("status %d, body %s", resp.StatusCode, body)
			}
			if rejected := len(tc.server.Violations()) > before; rejected != (tc.status >= 400) {
				t.Fatalf("violation recorded: %v", rejected)
			}
		})
	}
}

func TestVector(t *testing.T) {
	t.Parallel()
	a, b := fakeapi.Vector("the runway length", 64), fakeapi.Vector("runway length of the airport", 64)
	c := fakeapi.Vector("boundary layer transition", 64)
	dot := func(x, y []float32) (s float32) {
		for i := range x {
			s += x[i] * y[i]
		}
		return s
	}
	if dot(a, a) < 0.999 || dot(a, b) <= dot(a, c) {
		t.Fatalf("related %f, unrelated %f", dot(a, b), dot(a, c))
	}
	if v := fakeapi.Vector("", 8); dot(v, v) < 0.999 {
		t.Fatal("empty text has no unit vector")
	}
}

func TestDefaultAnswer(t *testing.T) {
	t.Parallel()
	p := "Passages:\n\n[1] Doc — p. 2\nThe wing is swept. More text.\n\n[2] Other\nx\n\nQuestion: q"
	if got := fakeapi.DefaultAnswer(p); got != "According to the documents, The wing is swept [1]." {
		t.Fatalf("got %q", got)
	}
	if got := fakeapi.DefaultAnswer("no passages"); !strings.Contains(got, "[1]") {
		t.Fatalf("got %q", got)
	}
}
