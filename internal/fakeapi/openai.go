package fakeapi

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"time"
)

// OpenAI fakes the OpenAI API and the OpenAI-compatible servers (Ollama, vLLM, llama.cpp, TEI, LM Studio):
// POST /v1/embeddings and POST /v1/chat/completions (streaming as SSE "data:" chunks ending in [DONE]),
// authenticated by "Authorization: Bearer <key>".
type OpenAI struct {
	*Server
	models map[string]embedModel
}

type embedModel struct {
	dim        int
	dimensions string // "ok": honours dimensions; "reject": 400 when given; "ignore": returns dim anyway
}

// NewOpenAI starts an OpenAI fake that accepts key. Embedding models: text-embedding-3-small (1536) and
// -large (3072) honour "dimensions"; text-embedding-ada-002 (1536) rejects it; the local-server models
// nomic-embed-text (768), mxbai-embed-large (1024) and all-minilm (384) ignore it, as Ollama does.
func NewOpenAI(key string) *OpenAI {
	o := &OpenAI{models: map[string]embedModel{
		"text-embedding-3-small": {1536, "ok"}, "text-embedding-3-large": {3072, "ok"},
		"text-embedding-ada-002": {1536, "reject"}, "nomic-embed-text": {768, "ignore"},
		"mxbai-embed-large": {1024, "ignore"}, "all-minilm": {384, "ignore"},
	}}
	o.Server = newServer(key, http.HandlerFunc(o.serve))
	return o
}

// BaseURL is the value for OPENAI_BASE_URL: the root URL with /v1.
func (o *OpenAI) BaseURL() string { return o.URL() + "/v1" }

func (o *OpenAI) serve(w http.ResponseWriter, r *http.Request) {
	var endpoint string
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/embeddings":
		endpoint = EndpointEmbed
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		endpoint = EndpointGenerate
	default:
		o.fail(w, 404, "invalid_request_error", "", o.violation("Invalid URL (%s %s)", r.Method, r.URL.Path))
		return
	}
	body := readBody(r)
	var probe struct {
		Stream bool `json:"stream"`
	}
	_ = json.Unmarshal(body, &probe)
	if probe.Stream {
		endpoint = EndpointStream
	}
	f, down := o.begin(endpoint, r, body)
	if down {
		o.fail(w, 503, "server_error", "", "The engine is currently overloaded, please try again later.")
		return
	}
	auth := r.Header.Get("Authorization")
	switch {
	case !strings.HasPrefix(auth, "Bearer "):
		o.fail(w, 401, "invalid_request_error", "", o.violation("You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."))
		return
	case strings.TrimPrefix(auth, "Bearer ") != o.key:
		o.fail(w, 401, "invalid_request_error", "invalid_api_key", o.violation("Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.", mask(strings.TrimPrefix(auth, "Bearer "))))
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		o.fail(w, 400, "invalid_request_error", "", o.violation("Content-Type must be application/json, got %q", ct))
		return
	}
	if f != nil {
		if !delay(r, f.Delay) {
			return
		}
		if f.Status != 0 {
			msg, typ, code := f.Message, "server_error", ""
			switch f.Status {
			case 429:
				typ, code = "requests", "rate_limit_exceeded"
				if msg == "" {
					msg = "Rate limit reached for requests. Please try again in 1s."
				}
			case 500:
				if msg == "" {
					msg = "The server had an error while processing your request. Sorry about that!"
				}
			}
			if msg == "" {
				msg = http.StatusText(f.Status)
			}
			retryAfterHeader(w, f.RetryAfter)
			o.fail(w, f.Status, typ, code, msg)
			return
		}
		if f.Malformed && endpoint != EndpointStream {
			writeMalformed(w)
			return
		}
	}
	if endpoint == EndpointEmbed {
		o.embed(w, body, f)
		return
	}
	o.chat(w, body, endpoint == EndpointStream, f)
}

func (o *OpenAI) embed(w http.ResponseWriter, body []byte, f *Fault) {
	var req struct {
		Input          json.RawMessage `json:"input"`
		Model          string          `json:"model"`
		Dimensions     *int            `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		o.fail(w, 400, "invalid_request_error", "", o.violation("We could not parse the JSON body of your request: %v", err))
		return
	}
	var texts []string
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		texts = []string{one}
	} else if json.Unmarshal(req.Input, &texts) != nil {
		o.fail(w, 400, "invalid_request_error", "", o.violation("'$.input' is invalid. Please check the API reference."))
		return
	}
	if len(texts) == 0 || len(texts) > 2048 {
		o.fail(w, 400, "invalid_request_error", "", o.violation("'$.input' must hold between 1 and 2048 items, got %d", len(texts)))
		return
	}
	for _, t := range texts {
		if t == "" {
			o.fail(w, 400, "invalid_request_error", "", o.violation("'$.input' is invalid: empty strings are not allowed."))
			return
		}
	}
	m, ok := o.models[req.Model]
	if !ok {
		o.fail(w, 404, "invalid_request_error", "model_not_found", o.violation("The model `%s` does not exist or you do not have access to it.", req.Model))
		return
	}
	dim := m.dim
	if req.Dimensions != nil {
		switch m.dimensions {
		case "reject":
			o.fail(w, 400, "invalid_request_error", "", o.violation("This model does not support specifying dimensions."))
			return
		case "ok":
			if *req.Dimensions < 1 || *req.Dimensions > m.dim {
				o.fail(w, 400, "invalid_request_error", "", o.violation("Invalid value for 'dimensions' = %d. Must be between 1 and %d.", *req.Dimensions, m.dim))
				return
			}
			dim = *req.Dimensions
		}
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64" {
		o.fail(w, 400, "invalid_request_error", "", o.violation("Invalid value for 'encoding_format': %q", req.EncodingFormat))
		return
	}
	data := make([]map[string]any, len(texts))
	tokens := 0
	for i, t := range texts {
		// text-embedding-3 vectors shortened with dimensions are renormalised by the API.
		v := Vector(t, dim)
		var emb any = v
		if req.EncodingFormat == "base64" {
			b := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
			}
			emb = base64.StdEncoding.EncodeToString(b)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
		tokens += countWords(t)
	}
	resp := map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}}
	if f != nil && f.CutAfter > 0 {
		writeCut(w, resp)
		return
	}
	o.embedded(texts)
	writeJSON(w, 200, resp)
}

type oaMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text returns the message content as text: a string, or the text parts of an array.
func (m oaMessage) text() (string, bool) {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), true
}

func (o *OpenAI) chat(w http.ResponseWriter, body []byte, stream bool, f *Fault) {
	var req struct {
		Model               string      `json:"model"`
		Messages            []oaMessage `json:"messages"`
		Temperature         *float64    `json:"temperature"`
		MaxTokens           *int        `json:"max_tokens"`
		MaxCompletionTokens *int        `json:"max_completion_tokens"`
		StreamOptions       *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		ResponseFormat *struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Name   string         `json:"name"`
				Schema map[string]any `json:"schema"`
				Strict bool           `json:"strict"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		o.fail(w, 400, "invalid_request_error", "", o.violation("We could not parse the JSON body of your request: %v", err))
		return
	}
	if req.Model == "" {
		o.fail(w, 400, "invalid_request_error", "", o.violation("you must provide a model parameter"))
		return
	}
	if len(req.Messages) == 0 {
		o.fail(w, 400, "invalid_request_error", "", o.violation("'messages' must contain at least one message."))
		return
	}
	var prompt string
	in := 0
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant":
		default:
			o.fail(w, 400, "invalid_request_error", "", o.violation("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'. (messages[%d].role)", m.Role, i))
			return
		}
		t, ok := m.text()
		if !ok {
			o.fail(w, 400, "invalid_request_error", "", o.violation("Invalid type for 'messages[%d].content'", i))
			return
		}
		in += countWords(t)
		if m.Role == "user" {
			prompt = t
		}
	}
	if req.Messages[len(req.Messages)-1].Role != "user" {
		o.fail(w, 400, "invalid_request_error", "", o.violation("the last message must come from the user"))
		return
	}
	if req.MaxTokens != nil && req.MaxCompletionTokens != nil {
		o.fail(w, 400, "invalid_request_error", "", o.violation("max_tokens and max_completion_tokens cannot both be set"))
		return
	}
	if req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 2) {
		o.fail(w, 400, "invalid_request_error", "", o.violation("Invalid 'temperature': must be between 0 and 2."))
		return
	}
	if req.StreamOptions != nil && !stream {
		o.fail(w, 400, "invalid_request_error", "", o.violation("The 'stream_options' parameter is only allowed when 'stream' is enabled."))
		return
	}
	var answer string
	switch rf := req.ResponseFormat; {
	case rf == nil || rf.Type == "text":
		answer = o.answerFor(prompt)
	case rf.Type == "json_object":
		answer = "{}"
	case rf.Type != "json_schema":
		o.fail(w, 400, "invalid_request_error", "", o.violation("Invalid value: '%s'. Supported values are: 'text', 'json_object' and 'json_schema'. (response_format.type)", rf.Type))
		return
	case rf.JSONSchema == nil || !schemaName.MatchString(rf.JSONSchema.Name):
		o.fail(w, 400, "invalid_request_error", "", o.violation("Invalid 'response_format.json_schema': a name of letters, digits, _ and - (at most 64) is required."))
		return
	default:
		if rf.JSONSchema.Strict {
			if p := strictProblem(rf.JSONSchema.Schema, "schema"); p != "" {
				o.fail(w, 400, "invalid_request_error", "", o.violation("Invalid schema for response_format '%s': In context=(), %s.", rf.JSONSchema.Name, p))
				return
			}
		}
		answer = o.structuredFor(prompt, rf.JSONSchema.Schema)
	}
	out := countWords(answer)
	usage := map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}
	created := time.Now().Unix()
	if !stream {
		resp := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": created,
			"model": req.Model, "choices": []any{map[string]any{"index": 0,
				"message":  map[string]any{"role": "assistant", "content": answer, "refusal": nil},
				"logprobs": nil, "finish_reason": "stop"}},
			"usage": usage}
		if f != nil && f.CutAfter > 0 {
			writeCut(w, resp)
			return
		}
		o.generated(false)
		writeJSON(w, 200, resp)
		return
	}
	o.generated(true)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created,
			"model": req.Model, "system_fingerprint": "fp_fake", "choices": []any{map[string]any{"index": 0,
				"delta": delta, "logprobs": nil, "finish_reason": finish}}}
	}
	ev := startSSE(w)
	cut := func() bool {
		if f != nil && f.CutAfter > 0 && ev.n >= f.CutAfter {
			dropConnection(w)
			return true
		}
		return false
	}
	ev.event("", chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil), "\n")
	ps := pieces(answer)
	for i, p := range ps {
		if cut() {
			return
		}
		if f != nil && f.Malformed && i == len(ps)/2 {
			ev.event("", `{"id": "chatcmpl-fake", "choices": [{"delta": {"content": "bro`, "\n")
			return
		}
		ev.event("", chunk(map[string]any{"content": p}, nil), "\n")
	}
	if cut() {
		return
	}
	ev.event("", chunk(map[string]any{}, "stop"), "\n")
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		ev.event("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk",
			"created": created, "model": req.Model, "choices": []any{}, "usage": usage}, "\n")
	}
	ev.event("", "[DONE]", "\n")
}

// fail writes an OpenAI error body.
func (o *OpenAI) fail(w http.ResponseWriter, status int, typ, code, msg string) {
	var c any
	if code != "" {
		c = code
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}})
}
