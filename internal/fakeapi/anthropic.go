package fakeapi

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Anthropic fakes the Anthropic Messages API: POST /v1/messages with the x-api-key and anthropic-version
// headers, answering a Message or, with "stream": true, the SSE sequence message_start,
// content_block_start, ping, content_block_delta…, content_block_stop, message_delta, message_stop.
type Anthropic struct {
	*Server
}

// NewAnthropic starts an Anthropic fake that accepts key.
func NewAnthropic(key string) *Anthropic {
	a := &Anthropic{}
	a.Server = newServer(key, http.HandlerFunc(a.serve))
	return a
}

// BaseURL is the value for ANTHROPIC_BASE_URL.
func (a *Anthropic) BaseURL() string { return a.URL() }

type anMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// blocksText returns the text of a string or of an array of text blocks.
func blocksText(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return "", false
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type != "text" {
			return "", false
		}
		b.WriteString(bl.Text)
	}
	return b.String(), true
}

func (a *Anthropic) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		a.fail(w, 404, "not_found_error", a.violation("Not found: %s %s", r.Method, r.URL.Path))
		return
	}
	body := readBody(r)
	var req struct {
		Model       string          `json:"model"`
		MaxTokens   *int            `json:"max_tokens"`
		Messages    []anMessage     `json:"messages"`
		System      json.RawMessage `json:"system"`
		Temperature *float64        `json:"temperature"`
		Stream      bool            `json:"stream"`
		// OutputConfig.Format asks for JSON following a schema (structured outputs).
		OutputConfig *struct {
			Format *struct {
				Type   string         `json:"type"`
				Schema map[string]any `json:"schema"`
			} `json:"format"`
		} `json:"output_config"`
	}
	jsonErr := json.Unmarshal(body, &req)
	endpoint := EndpointGenerate
	if req.Stream {
		endpoint = EndpointStream
	}
	f, down := a.begin(endpoint, r, body)
	if down {
		a.fail(w, 529, "overloaded_error", "Overloaded")
		return
	}
	switch key := r.Header.Get("x-api-key"); {
	case key == "":
		a.fail(w, 401, "authentication_error", a.violation("x-api-key header is required"))
		return
	case key != a.key:
		a.fail(w, 401, "authentication_error", a.violation("invalid x-api-key"))
		return
	}
	if r.Header.Get("anthropic-version") == "" {
		a.fail(w, 400, "invalid_request_error", a.violation("anthropic-version: header is required"))
		return
	}
	if f != nil {
		if !delay(r, f.Delay) {
			return
		}
		if f.Status != 0 {
			typ, msg := "api_error", f.Message
			switch f.Status {
			case 429:
				typ = "rate_limit_error"
				if msg == "" {
					msg = "Number of request tokens has exceeded your per-minute rate limit."
				}
			case 529:
				typ = "overloaded_error"
			case 401:
				typ = "authentication_error"
			}
			if msg == "" {
				msg = "Internal server error"
			}
			retryAfterHeader(w, f.RetryAfter)
			a.fail(w, f.Status, typ, msg)
			return
		}
		if f.Malformed && endpoint != EndpointStream {
			writeMalformed(w)
			return
		}
	}
	if jsonErr != nil {
		a.fail(w, 400, "invalid_request_error", a.violation("invalid JSON body: %v", jsonErr))
		return
	}
	switch {
	case req.Model == "":
		a.fail(w, 400, "invalid_request_error", a.violation("model: Field required"))
		return
	case req.MaxTokens == nil || *req.MaxTokens < 1:
		a.fail(w, 400, "invalid_request_error", a.violation("max_tokens: Field required"))
		return
	case len(req.Messages) == 0:
		a.fail(w, 400, "invalid_request_error", a.violation("messages: at least one message is required"))
		return
	case req.Messages[0].Role != "user":
		a.fail(w, 400, "invalid_request_error", a.violation("messages: first message must use the \"user\" role"))
		return
	case req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 1):
		a.fail(w, 400, "invalid_request_error", a.violation("temperature: range: 0..1"))
		return
	}
	if len(req.System) > 0 {
		if _, ok := blocksText(req.System); !ok {
			a.fail(w, 400, "invalid_request_error", a.violation("system: Input should be a valid string or a list of text blocks"))
			return
		}
	}
	in := 0
	var prompt string
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			a.fail(w, 400, "invalid_request_error", a.violation("messages.%d.role: Input should be 'user' or 'assistant'", i))
			return
		}
		t, ok := blocksText(m.Content)
		if !ok {
			a.fail(w, 400, "invalid_request_error", a.violation("messages.%d.content: Input should be a valid string or a list of content blocks", i))
			return
		}
		in += countWords(t)
		if m.Role == "user" {
			prompt = t
		}
	}
	if req.Messages[len(req.Messages)-1].Role != "user" {
		a.fail(w, 400, "invalid_request_error", a.violation("the final message must use the \"user\" role"))
		return
	}
	var answer string
	if oc := req.OutputConfig; oc != nil && oc.Format != nil {
		if oc.Format.Type != "json_schema" {
			a.fail(w, 400, "invalid_request_error", a.violation("output_config.format.type: Input should be 'json_schema'"))
			return
		}
		if p := strictProblem(oc.Format.Schema, "output_config.format.schema"); p != "" {
			a.fail(w, 400, "invalid_request_error", a.violation("%s", p))
			return
		}
		answer = a.structuredFor(prompt, oc.Format.Schema)
	} else {
		answer = a.answerFor(prompt)
	}
	out := countWords(answer)
	msg := map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{map[string]any{"type": "text", "text": answer}}, "stop_reason": "end_turn",
		"stop_sequence": nil, "usage": map[string]any{"input_tokens": in, "output_tokens": out}}
	if !req.Stream {
		if f != nil && f.CutAfter > 0 {
			writeCut(w, msg)
			return
		}
		a.generated(false)
		writeJSON(w, 200, msg)
		return
	}
	a.generated(true)
	ev := startSSE(w)
	cut := func() bool {
		if f != nil && f.CutAfter > 0 && ev.n >= f.CutAfter {
			dropConnection(w)
			return true
		}
		return false
	}
	start := map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": 1}}
	ev.event("message_start", map[string]any{"type": "message_start", "message": start}, "\n")
	ev.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]any{"type": "text", "text": ""}}, "\n")
	ev.event("ping", map[string]any{"type": "ping"}, "\n")
	ps := pieces(answer)
	for i, p := range ps {
		if cut() {
			return
		}
		if f != nil && f.Malformed && i == len(ps)/2 {
			ev.event("content_block_delta", `{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "bro`, "\n")
			return
		}
		ev.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": p}}, "\n")
	}
	if cut() {
		return
	}
	ev.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}, "\n")
	ev.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": out}}, "\n")
	ev.event("message_stop", map[string]any{"type": "message_stop"}, "\n")
}

// fail writes an Anthropic error body.
func (a *Anthropic) fail(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg},
		"request_id": "req_fake"})
}
