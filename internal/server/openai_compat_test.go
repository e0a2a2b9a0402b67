package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// completionBody returns a completion request of exactly n bytes: a system message padded to fit, then the
// question.
func completionBody(t *testing.T, model, question string, n int) string {
	t.Helper()
	pad := func(k int) string {
		b, _ := json.Marshal(map[string]any{"model": model, "messages": []map[string]string{
			{"role": "system", "content": strings.Repeat("a", k)}, {"role": "user", "content": question}}})
		return string(b)
	}
	s := pad(n - len(pad(0)))
	if len(s) != n {
		t.Fatalf("body is %d bytes, want %d", len(s), n)
	}
	return s
}

func userMessage(q string) []map[string]any { return []map[string]any{{"role": "user", "content": q}} }

// wantOpenAIError checks an OpenAI-shaped error body with ragd's code.
func wantOpenAIError(code rag.Code) func(t *testing.T, _ *http.Response, body []byte) {
	return func(t *testing.T, _ *http.Response, body []byte) {
		t.Helper()
		e := decode[openAIError](t, body)
		if e.Error.Code != string(code) || e.Error.Message == "" || e.Error.Type == "" {
			t.Fatalf("error %s, want code %s with a message and a type", trim(body), code)
		}
	}
}

func TestOpenAICompletions(t *testing.T) {
	b := setup(t, nil)
	b.ingestFile(t, renderDoc, func(r *ingest.Request) { r.Collection = "react" })
	const q = "컴포넌트 렌더링이 일어나는 이유는 무엇인가요?"

	b.run(t, []scenario{
		{name: "Models", method: "GET", path: "/v1/models", status: 200, contains: []string{`"object":"list"`, `"id":"ragd"`, `"id":"ragd/react"`}},
		{name: "Model", method: "GET", path: "/v1/models/ragd/react", status: 200, contains: []string{`"id":"ragd/react"`, `"object":"model"`}},
		{name: "ErrModelUnknown", method: "GET", path: "/v1/models/gpt-4o", status: 404, check: wantOpenAIError(rag.CodeNotFound)},
		{
			name: "OK", method: "POST", path: "/v1/chat/completions", status: 200,
			body: jsonBody(map[string]any{"model": "ragd/react", "messages": userMessage(q)}),
			check: func(t *testing.T, _ *http.Response, body []byte) {
				c := decode[completion](t, body)
				if c.Object != "chat.completion" || !strings.HasPrefix(c.ID, "chatcmpl-") || c.Model != "ragd/react" || len(c.Choices) != 1 {
					t.Fatalf("completion %s", trim(body))
				}
				content := *c.Choices[0].Message.Content
				if len(c.Sources) == 0 || !strings.Contains(content, "[1]") || !strings.Contains(content, sourcesHeading+"\n- [1] ") {
					t.Fatalf("content %q, %d sources", content, len(c.Sources))
				}
				if u := c.Usage; u == nil || u.PromptTokens == 0 || u.CompletionTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
					t.Fatalf("usage %+v", c.Usage)
				}
			},
		},
		{name: "BodyAtLimit", method: "POST", path: "/v1/chat/completions", status: 200,
			body: jsonBody(completionBody(t, "ragd", q, MaxCompletionBody))},
		{name: "ErrBodyOverLimit", method: "POST", path: "/v1/chat/completions", status: 413,
			body: jsonBody(completionBody(t, "ragd", q, MaxCompletionBody+1)), check: wantOpenAIError(rag.CodePayloadTooLarge)},
		// Usage counts a long history turn without the tokenizer's quadratic time on a run without spaces
		// (exactTokensBytes); before, this took minutes.
		{name: "LongHistoryTurn", method: "POST", path: "/v1/chat/completions", status: 200,
			body: jsonBody(map[string]any{"model": "ragd", "messages": []map[string]any{{"role": "assistant", "content": strings.Repeat("a", 200_000)}, {"role": "user", "content": q}}})},
		{name: "ErrNoMessages", method: "POST", path: "/v1/chat/completions", status: 400,
			body: jsonBody(map[string]any{"model": "ragd", "messages": []any{}}), check: wantOpenAIError(rag.CodeInvalid)},
		{name: "ErrLastNotUser", method: "POST", path: "/v1/chat/completions", status: 400,
			body:  jsonBody(map[string]any{"model": "ragd", "messages": []map[string]any{{"role": "user", "content": q}, {"role": "assistant", "content": "x"}}}),
			check: wantOpenAIError(rag.CodeInvalid)},
		{name: "ErrBlankQuestion", method: "POST", path: "/v1/chat/completions", status: 400,
			body: jsonBody(map[string]any{"model": "ragd", "messages": userMessage(" \n ")}), check: wantOpenAIError(rag.CodeQuestionRequired)},
		{name: "ErrContentNotText", method: "POST", path: "/v1/chat/completions", status: 400,
			body: jsonBody(`{"model":"ragd","messages":[{"role":"user","content":42}]}`), check: wantOpenAIError(rag.CodeInvalid)},
		{name: "ErrNoModel", method: "POST", path: "/v1/chat/completions", status: 400,
			body: jsonBody(map[string]any{"messages": userMessage(q)}), check: wantOpenAIError(rag.CodeInvalid)},
		{name: "ErrUnknownCollection", method: "POST", path: "/v1/chat/completions", status: 404,
			body: jsonBody(map[string]any{"model": "ragd/nope", "messages": userMessage(q)}), check: wantOpenAIError(rag.CodeNotFound)},
		{name: "ErrOtherModel", method: "POST", path: "/v1/chat/completions", status: 404,
			body: jsonBody(map[string]any{"model": "gpt-4o", "messages": userMessage(q)}), check: wantOpenAIError(rag.CodeNotFound)},
		{name: "ErrTwoChoices", method: "POST", path: "/v1/chat/completions", status: 400,
			body: jsonBody(map[string]any{"model": "ragd", "n": 2, "messages": userMessage(q)}), check: wantOpenAIError(rag.CodeInvalid)},
		{name: "K20", method: "POST", path: "/v1/chat/completions", status: 200,
			body: jsonBody(map[string]any{"model": "ragd", "k": rag.MaxAnswerK, "messages": userMessage(q)})},
		{name: "ErrK21", method: "POST", path: "/v1/chat/completions", status: 400,
			body: jsonBody(map[string]any{"model": "ragd", "k": rag.MaxAnswerK + 1, "messages": userMessage(q)}), check: wantOpenAIError(rag.CodeInvalid)},
		{name: "ErrNoEmbedderNoEndpoint", method: "POST", path: "/v1/embeddings", status: 404, check: wantOpenAIError(rag.CodeNotFound)},
		{name: "ErrNoSuchEndpoint", method: "POST", path: "/v1/completions", status: 404, check: wantOpenAIError(rag.CodeNotFound)},
	})

	t.Run("Stream", func(t *testing.T) {
		resp, body := b.do(t, request{method: "POST", path: "/v1/chat/completions", ctype: "application/json",
			body: strings.NewReader(`{"model":"ragd/react","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"` + q + `"}]}`)})
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		var datas []string
		sc := bufio.NewScanner(bytes.NewReader(body))
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				continue
			}
			d, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				t.Fatalf("not a data line: %q", line)
			}
			datas = append(datas, d)
		}
		if len(datas) < 4 || datas[len(datas)-1] != "[DONE]" {
			t.Fatalf("events %q", datas)
		}
		var content strings.Builder
		var finish, sources, usage int
		for i, d := range datas[:len(datas)-1] {
			var c completion
			if err := json.Unmarshal([]byte(d), &c); err != nil || c.Object != "chat.completion.chunk" {
				t.Fatalf("chunk %d %s: %v", i, d, err)
			}
			for _, ch := range c.Choices {
				if ch.Delta.Content != nil {
					content.WriteString(*ch.Delta.Content)
				}
				if ch.FinishReason != nil {
					finish++
				}
			}
			if len(c.Sources) > 0 {
				sources++
			}
			if c.Usage != nil {
				usage++
				if len(c.Choices) != 0 || c.Usage.CompletionTokens == 0 {
					t.Fatalf("usage chunk %s", d)
				}
			}
		}
		if finish != 1 || sources != 1 || usage != 1 || !strings.Contains(content.String(), sourcesHeading+"\n- [1] ") {
			t.Fatalf("finish %d, sources %d, usage %d, content %q", finish, sources, usage, content.String())
		}
	})
}

func TestOpenAIAccess(t *testing.T) {
	b := setup(t, func(s *Settings) {
		s.APIKeys = []string{"key-one"}
		s.RateLimitChat = 2
		s.CORSOrigins = []string{"https://ok.example"}
	})
	b.ingestFile(t, renderDoc, nil)
	const q = "컴포넌트 렌더링이 일어나는 이유는 무엇인가요?"
	bearer := map[string]string{"Authorization": "Bearer key-one"}
	ask := jsonBody(map[string]any{"model": "ragd", "messages": userMessage(q)})
	b.run(t, []scenario{
		{name: "ErrNoKey", method: "GET", path: "/v1/models", status: 401, check: wantOpenAIError(rag.CodeUnauthorized),
			wantHeaders: map[string]string{"WWW-Authenticate": `Bearer realm="ragd"`}},
		{name: "ErrBadKey", method: "GET", path: "/v1/models", status: 401, headers: map[string]string{"Authorization": "Bearer nope"},
			check: wantOpenAIError(rag.CodeUnauthorized)},
		{name: "ErrNoKeyUnknownPath", method: "GET", path: "/v1/files", status: 401, check: wantOpenAIError(rag.CodeUnauthorized)},
		{name: "Bearer", method: "GET", path: "/v1/models", status: 200, headers: bearer,
			wantHeaders: map[string]string{"Cache-Control": "no-store"}},
		{name: "HeaderKey", method: "GET", path: "/v1/models", status: 200, headers: map[string]string{"X-RAG-API-Key": "key-one"}},
		{name: "ErrOrigin", method: "GET", path: "/v1/models", status: 403,
			headers: map[string]string{"Authorization": "Bearer key-one", "Origin": "https://evil.example"}, check: wantOpenAIError(rag.CodeForbidden)},
		{name: "AllowedOrigin", method: "GET", path: "/v1/models", status: 200,
			headers:     map[string]string{"Authorization": "Bearer key-one", "Origin": "https://ok.example"},
			wantHeaders: map[string]string{"Access-Control-Allow-Origin": "https://ok.example"}},
		// The chat limit (2 a minute) is shared with /api/chat: one there, one here, the third is refused.
		{name: "ChatLimit1", method: "POST", path: "/api/chat", status: 200, headers: bearer, body: jsonBody(map[string]any{"question": q})},
		{name: "ChatLimit2", method: "POST", path: "/v1/chat/completions", status: 200, headers: bearer, body: ask},
		{name: "ErrOverChatLimit", method: "POST", path: "/v1/chat/completions", status: 429, headers: bearer, body: ask,
			check: wantOpenAIError(rag.CodeRateLimited), wantHeaders: map[string]string{"Retry-After": "30"}},
	})
	b.clock.advance(30 * time.Second)
	b.run(t, []scenario{{name: "RefilledAfterRetryAfter", method: "POST", path: "/v1/chat/completions", status: 200, headers: bearer, body: ask}})
}

func TestAskOfCompletion(t *testing.T) {
	msg := func(role, content string) completionMessage {
		b, _ := json.Marshal(content)
		return completionMessage{Role: role, Content: b}
	}
	var msgs []completionMessage
	msgs = append(msgs, msg("system", "be brief"))
	for i := range 8 {
		msgs = append(msgs, msg("user", fmt.Sprintf("question %d", i)),
			msg("assistant", fmt.Sprintf("answer %d [1]", i)+citationMarkdown([]rag.Source{{N: 1, Hit: rag.Hit{Chunk: rag.Chunk{PageStart: 2}, Title: "T", Source: "t.pdf"}}})))
	}
	msgs = append(msgs, completionMessage{Role: "user", Content: json.RawMessage(`[{"type":"text","text":"last"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"question"}]`)})
	q, history, err := askOfCompletion(completionRequest{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if q != "last\nquestion" {
		t.Errorf("question %q", q)
	}
	if len(history) != rag.MaxHistoryTurns {
		t.Fatalf("%d turns of history, want the last %d", len(history), rag.MaxHistoryTurns)
	}
	if last := history[len(history)-1]; last.Role != rag.RoleAssistant || last.Content != "answer 7 [1]" {
		t.Errorf("last turn %+v (the citation list must be stripped)", last)
	}
	if first := history[0]; first.Role != rag.RoleAssistant || first.Content != "answer 5 [1]" {
		t.Errorf("first turn kept %+v", first)
	}
	// A turn is cut at MaxTurnBytes, at a character boundary.
	long := strings.Repeat("가", MaxTurnBytes) // 3 bytes each
	_, history, err = askOfCompletion(completionRequest{Messages: []completionMessage{msg("assistant", long), msg("user", "q")}})
	if err != nil || len(history) != 1 {
		t.Fatal(err)
	}
	if got := history[0].Content; len(got) != MaxTurnBytes-MaxTurnBytes%3 || !utf8.ValidString(got) {
		t.Errorf("turn of %d bytes cut to %d (valid %v), want %d", len(long), len(got), utf8.ValidString(got), MaxTurnBytes-MaxTurnBytes%3)
	}
	if got := cutBytes(strings.Repeat("a", MaxTurnBytes), MaxTurnBytes); len(got) != MaxTurnBytes {
		t.Errorf("a turn of exactly %d bytes cut to %d", MaxTurnBytes, len(got))
	}
}

func TestCitationMarkdown(t *testing.T) {
	got := citationMarkdown([]rag.Source{
		{N: 1, Hit: rag.Hit{Chunk: rag.Chunk{PageStart: 4, PageEnd: 5, Section: "부칙"}, Title: "bill", Source: "bill.pdf"}},
		{N: 3, Hit: rag.Hit{Chunk: rag.Chunk{PageStart: 2, PageEnd: 2}, Title: "", Source: "notes.md"}},
	})
	want := sourcesHeading + "\n- [1] bill (bill.pdf), pp. 4–5 — 부칙\n- [3] notes.md, p. 2"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if citationMarkdown(nil) != "" {
		t.Error("no sources: want no list")
	}
}

// embeddingsBody returns an embeddings request of exactly n bytes: one input padded to fit.
func embeddingsBody(t *testing.T, n int) string {
	t.Helper()
	pad := func(k int) string {
		b, _ := json.Marshal(map[string]any{"model": "ragd", "input": "a" + strings.Repeat("b", k)})
		return string(b)
	}
	s := pad(n - len(pad(0)))
	if len(s) != n {
		t.Fatalf("body is %d bytes, want %d", len(s), n)
	}
	return s
}

func TestOpenAIEmbeddings(t *testing.T) {
	b := setup(t, nil)
	b.deps.Embedder = b.emb
	b.serve(t)
	space := b.emb.Space()
	want, err := b.emb.EmbedDocuments(context.Background(), []string{"연차 휴가", "annual leave"})
	if err != nil {
		t.Fatal(err)
	}
	inputs := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("text %d", i)
		}
		return out
	}
	type embeddings struct {
		Object string `json:"object"`
		Model  string `json:"model"`
		Data   []struct {
			Index     int             `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
		Usage completionUsage `json:"usage"`
	}
	b.run(t, []scenario{
		{
			name: "Float", method: "POST", path: "/v1/embeddings", status: 200,
			body: jsonBody(map[string]any{"model": "ragd", "input": []string{"연차 휴가", "annual leave"}}),
			check: func(t *testing.T, _ *http.Response, body []byte) {
				e := decode[embeddings](t, body)
				if e.Object != "list" || e.Model != space.ID() || len(e.Data) != 2 || e.Usage.PromptTokens == 0 {
					t.Fatalf("%s", trim(body))
				}
				for i, d := range e.Data {
					var v []float32
					if err := json.Unmarshal(d.Embedding, &v); err != nil || d.Index != i || !slices.Equal(v, want[i]) {
						t.Fatalf("embedding %d differs from the embedder's (%v)", i, err)
					}
				}
			},
		},
		{
			name: "Base64", method: "POST", path: "/v1/embeddings", status: 200,
			body: jsonBody(map[string]any{"model": space.ID(), "input": "annual leave", "encoding_format": "base64"}),
			check: func(t *testing.T, _ *http.Response, body []byte) {
				e := decode[embeddings](t, body)
				var s string
				if err := json.Unmarshal(e.Data[0].Embedding, &s); err != nil {
					t.Fatal(err)
				}
				raw, err := base64.StdEncoding.DecodeString(s)
				if err != nil || len(raw) != 4*space.Dim {
					t.Fatalf("%d bytes, %v", len(raw), err)
				}
				v := make([]float32, space.Dim)
				for i := range v {
					v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
				}
				if !slices.Equal(v, want[1]) {
					t.Fatal("decoded embedding differs from the embedder's")
				}
			},
		},
		{name: "MaxInputs", method: "POST", path: "/v1/embeddings", status: 200,
			body: jsonBody(map[string]any{"model": "ragd", "input": inputs(MaxEmbeddingInputs)})},
		{name: "ErrOverMaxInputs", method: "POST", path: "/v1/embeddings", status: 400,
			body: jsonBody(map[string]any{"model": "ragd", "input": inputs(MaxEmbeddingInputs + 1)}), check: wantOpenAIError(rag.CodeInvalid)},
		{name: "BodyAtLimit", method: "POST", path: "/v1/embeddings", status: 200, body: jsonBody(embeddingsBody(t, MaxEmbeddingsBody))},
		{name: "ErrBodyOverLimit", method: "POST", path: "/v1/embeddings", status: 413,
			body: jsonBody(embeddingsBody(t, MaxEmbeddingsBody+1)), check: wantOpenAIError(rag.CodePayloadTooLarge)},
		{name: "ErrNoInput", method: "POST", path: "/v1/embeddings", status: 400,
			body: jsonBody(map[string]any{"model": "ragd", "input": []string{}}), check: wantOpenAIError(rag.CodeInvalid)},
		{name: "ErrEmptyInput", method: "POST", path: "/v1/embeddings", status: 400,
			body: jsonBody(map[string]any{"model": "ragd", "input": []string{"a", " "}}), check: wantOpenAIError(rag.CodeInvalid)},
		{name: "ErrTokens", method: "POST", path: "/v1/embeddings", status: 400,
			body: jsonBody(`{"model":"ragd","input":[[1,2,3]]}`), check: wantOpenAIError(rag.CodeInvalid)},
		{name: "ErrModel", method: "POST", path: "/v1/embeddings", status: 404,
			body: jsonBody(map[string]any{"model": "text-embedding-3-small", "input": "a"}), check: wantOpenAIError(rag.CodeNotFound)},
		{name: "ErrDimensions", method: "POST", path: "/v1/embeddings", status: 400,
			body: jsonBody(map[string]any{"model": "ragd", "input": "a", "dimensions": 256}), check: wantOpenAIError(rag.CodeInvalid)},
		{name: "ErrEncoding", method: "POST", path: "/v1/embeddings", status: 400,
			body: jsonBody(map[string]any{"model": "ragd", "input": "a", "encoding_format": "int8"}), check: wantOpenAIError(rag.CodeInvalid)},
	})
}
