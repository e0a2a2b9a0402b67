package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Gemini fakes the Gemini API (generativelanguage.googleapis.com, v1beta): models/{m}:generateContent,
// :streamGenerateContent?alt=sse, :batchEmbedContents and :embedContent, authenticated by the
// x-goog-api-key header (or ?key=).
type Gemini struct {
	*Server
	// Dims is the native output size of each embedding model it knows; other models are 404.
	dims map[string]int
}

// NewGemini starts a Gemini fake that accepts key.
func NewGemini(key string) *Gemini {
	g := &Gemini{dims: map[string]int{"text-embedding-004": 768, "gemini-embedding-001": 3072,
		"embedding-001": 768}}
	g.Server = newServer(key, http.HandlerFunc(g.serve))
	return g
}

// BaseURL is the value for the SDK's base-URL option (RAGD_GEMINI_BASE_URL).
func (g *Gemini) BaseURL() string { return g.URL() + "/" }

type gemPart struct {
	Text    string `json:"text"`
	Thought bool   `json:"thought,omitempty"`
}

type gemContent struct {
	Role  string    `json:"role,omitempty"`
	Parts []gemPart `json:"parts"`
}

type gemEmbedRequest struct {
	Model                string      `json:"model"`
	Content              *gemContent `json:"content"`
	TaskType             string      `json:"taskType"`
	Title                string      `json:"title"`
	OutputDimensionality *int        `json:"outputDimensionality"`
}

var gemTaskTypes = map[string]bool{"": true, "RETRIEVAL_QUERY": true, "RETRIEVAL_DOCUMENT": true,
	"SEMANTIC_SIMILARITY": true, "CLASSIFICATION": true, "CLUSTERING": true, "QUESTION_ANSWERING": true,
	"FACT_VERIFICATION": true, "CODE_RETRIEVAL_QUERY": true, "TASK_TYPE_UNSPECIFIED": true}

func (g *Gemini) serve(w http.ResponseWriter, r *http.Request) {
	const prefix = "/v1beta/models/"
	path := r.URL.Path
	colon := strings.LastIndex(path, ":")
	if r.Method != http.MethodPost || !strings.HasPrefix(path, prefix) || colon < len(prefix) {
		g.fail(w, http.StatusNotFound, "NOT_FOUND", g.violation("unknown route %s %s", r.Method, path), 0)
		return
	}
	model, method := path[len(prefix):colon], path[colon+1:]
	endpoint := EndpointGenerate
	switch method {
	case "batchEmbedContents", "embedContent":
		endpoint = EndpointEmbed
	case "streamGenerateContent":
		endpoint = EndpointStream
	case "generateContent":
	default:
		g.fail(w, http.StatusNotFound, "NOT_FOUND", g.violation("unknown method %q", method), 0)
		return
	}
	body := readBody(r)
	f, down := g.begin(endpoint, r, body)
	if down {
		g.fail(w, http.StatusServiceUnavailable, "UNAVAILABLE", "The model is overloaded. Please try again later.", 0)
		return
	}
	key := r.Header.Get("x-goog-api-key")
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	switch {
	case key == "":
		g.fail(w, http.StatusForbidden, "PERMISSION_DENIED",
			g.violation("Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."), 0)
		return
	case key != g.key:
		g.fail(w, http.StatusBadRequest, "INVALID_ARGUMENT", g.violation("API key not valid. Please pass a valid API key."), 0)
		return
	}
	if f != nil {
		if !delay(r, f.Delay) {
			return
		}
		if f.Status != 0 {
			msg := f.Message
			if msg == "" {
				msg = map[int]string{429: "Resource has been exhausted (e.g. check quota).",
					500: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
					503: "The model is overloaded. Please try again later."}[f.Status]
			}
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			retryAfterHeader(w, f.RetryAfter)
			g.fail(w, f.Status, gemStatus(f.Status), msg, f.RetryAfter)
			return
		}
		if f.Malformed && endpoint != EndpointStream {
			writeMalformed(w)
			return
		}
	}
	switch method {
	case "batchEmbedContents":
		var req struct {
			Requests []gemEmbedRequest `json:"requests"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			g.fail(w, 400, "INVALID_ARGUMENT", g.violation("Invalid JSON payload received. %v", err), 0)
			return
		}
		if len(req.Requests) == 0 {
			g.fail(w, 400, "INVALID_ARGUMENT", g.violation("* BatchEmbedContentsRequest.requests: must have at least one request"), 0)
			return
		}
		if len(req.Requests) > 100 {
			g.fail(w, 400, "INVALID_ARGUMENT", g.violation("* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch"), 0)
			return
		}
		var out []map[string]any
		var texts []string
		for i, er := range req.Requests {
			if er.Model != "models/"+model {
				g.fail(w, 400, "INVALID_ARGUMENT", g.violation("* BatchEmbedContentsRequest.requests[%d].model: model %q does not match the batch model models/%s", i, er.Model, model), 0)
				return
			}
			vec, text, msg, status := g.embedOne(model, er)
			if msg != "" {
				g.fail(w, status, gemStatus(status), msg, 0)
				return
			}
			texts = append(texts, text)
			out = append(out, map[string]any{"values": vec})
		}
		if f != nil && f.CutAfter > 0 {
			writeCut(w, map[string]any{"embeddings": out})
			return
		}
		g.embedded(texts)
		writeJSON(w, 200, map[string]any{"embeddings": out})
	case "embedContent":
		var er gemEmbedRequest
		if err := json.Unmarshal(body, &er); err != nil {
			g.fail(w, 400, "INVALID_ARGUMENT", g.violation("Invalid JSON payload received. %v", err), 0)
			return
		}
		vec, text, msg, status := g.embedOne(model, er)
		if msg != "" {
			g.fail(w, status, gemStatus(status), msg, 0)
			return
		}
		g.embedded([]string{text})
		writeJSON(w, 200, map[string]any{"embedding": map[string]any{"values": vec}})
	default:
		g.generate(w, r, model, body, endpoint == EndpointStream, f)
	}
}

// embedOne answers one embed request: vector, text, or an error message and status.
func (g *Gemini) embedOne(model string, er gemEmbedRequest) ([]float32, string, string, int) {
	native, ok := g.dims[model]
	if !ok {
		return nil, "", g.violation("models/%s is not found for API version v1beta, or is not supported for embedContent. Call ListModels to see the list of available models and their supported methods.", model), 404
	}
	if er.Content == nil || len(er.Content.Parts) == 0 {
		return nil, "", g.violation("* EmbedContentRequest.content: contents is not specified"), 400
	}
	if !gemTaskTypes[er.TaskType] {
		return nil, "", g.violation("Invalid value at 'requests[0].task_type' (type.googleapis.com/google.ai.generativelanguage.v1beta.TaskType), %q", er.TaskType), 400
	}
	var text strings.Builder
	for _, p := range er.Content.Parts {
		text.WriteString(p.Text)
	}
	if text.Len() == 0 {
		return nil, "", g.violation("* EmbedContentRequest.content: text content is empty"), 400
	}
	dim := native
	if er.OutputDimensionality != nil {
		d := *er.OutputDimensionality
		if d < 1 || d > native {
			return nil, "", g.violation("* EmbedContentRequest.output_dimensionality: must be between 1 and %d", native), 400
		}
		dim = d
	}
	// Like the real API, a reduced output is not unit length.
	v := Vector(text.String(), dim)
	if dim < native {
		for i := range v {
			v[i] *= 0.8
		}
	}
	return v, text.String(), "", 0
}

type gemGenerateRequest struct {
	Contents          []gemContent `json:"contents"`
	SystemInstruction *gemContent  `json:"systemInstruction"`
	GenerationConfig  *struct {
		Temperature     *float64 `json:"temperature"`
		MaxOutputTokens *int     `json:"maxOutputTokens"`
		ThinkingConfig  *struct {
			ThinkingBudget *int   `json:"thinkingBudget"`
			ThinkingLevel  string `json:"thinkingLevel"`
		} `json:"thinkingConfig"`
		ResponseMIMEType   string         `json:"responseMimeType"`
		ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
		ResponseSchema     map[string]any `json:"responseSchema"`
	} `json:"generationConfig"`
}

func (g *Gemini) generate(w http.ResponseWriter, r *http.Request, model string, body []byte, stream bool, f *Fault) {
	if stream && r.URL.Query().Get("alt") != "sse" {
		g.fail(w, 400, "INVALID_ARGUMENT", g.violation("streamGenerateContent without alt=sse answers a JSON array, not server-sent events"), 0)
		return
	}
	var req gemGenerateRequest
	if err := json.Unmarshal(body, &req); err != nil {
		g.fail(w, 400, "INVALID_ARGUMENT", g.violation("Invalid JSON payload received. %v", err), 0)
		return
	}
	if !strings.HasPrefix(model, "gemini-") {
		g.fail(w, 404, "NOT_FOUND", g.violation("models/%s is not found for API version v1beta, or is not supported for generateContent.", model), 0)
		return
	}
	if len(req.Contents) == 0 {
		g.fail(w, 400, "INVALID_ARGUMENT", g.violation("* GenerateContentRequest.contents: contents is not specified"), 0)
		return
	}
	for i, c := range req.Contents {
		if c.Role != "user" && c.Role != "model" {
			g.fail(w, 400, "INVALID_ARGUMENT", g.violation("Please use a valid role: user, model. (contents[%d].role = %q)", i, c.Role), 0)
			return
		}
		if len(c.Parts) == 0 {
			g.fail(w, 400, "INVALID_ARGUMENT", g.violation("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.", i), 0)
			return
		}
	}
	last := req.Contents[len(req.Contents)-1]
	if last.Role != "user" {
		g.fail(w, 400, "INVALID_ARGUMENT", g.violation("the last content must have the user role"), 0)
		return
	}
	if gc := req.GenerationConfig; gc != nil {
		if gc.Temperature != nil && (*gc.Temperature < 0 || *gc.Temperature > 2) {
			g.fail(w, 400, "INVALID_ARGUMENT", g.violation("* GenerateContentRequest.generation_config.temperature: must be in [0.0, 2.0]"), 0)
			return
		}
		if tc := gc.ThinkingConfig; tc != nil && tc.ThinkingBudget != nil && *tc.ThinkingBudget == 0 && strings.Contains(model, "-pro") {
			g.fail(w, 400, "INVALID_ARGUMENT", g.violation("Budget 0 is invalid. This model only works in thinking mode."), 0)
			return
		}
	}
	var prompt strings.Builder
	for _, p := range last.Parts {
		prompt.WriteString(p.Text)
	}
	var answer string
	if gc := req.GenerationConfig; gc != nil && (gc.ResponseJSONSchema != nil || gc.ResponseSchema != nil) {
		switch {
		case gc.ResponseJSONSchema != nil && gc.ResponseSchema != nil:
			g.fail(w, 400, "INVALID_ARGUMENT", g.violation("* GenerateContentRequest.generation_config: response_schema and response_json_schema cannot both be set"), 0)
			return
		case gc.ResponseMIMEType != "application/json":
			g.fail(w, 400, "INVALID_ARGUMENT", g.violation("* GenerateContentRequest.generation_config.response_mime_type: a response schema needs response_mime_type application/json, got %q", gc.ResponseMIMEType), 0)
			return
		}
		schema := gc.ResponseJSONSchema
		if schema == nil {
			schema = gc.ResponseSchema
		}
		answer = g.structuredFor(prompt.String(), schema)
	} else {
		answer = g.answerFor(prompt.String())
	}
	in := 0
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			in += countWords(p.Text)
		}
	}
	usage := map[string]any{"promptTokenCount": in, "candidatesTokenCount": countWords(answer),
		"totalTokenCount": in + countWords(answer)}
	chunk := func(text string, final bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"parts": []map[string]any{{"text": text}}, "role": "model"},
			"index": 0}
		out := map[string]any{"candidates": []any{cand}, "modelVersion": model, "responseId": "fake-" + model}
		if final {
			cand["finishReason"] = "STOP"
			out["usageMetadata"] = usage
		}
		return out
	}
	if !stream {
		if f != nil && f.CutAfter > 0 {
			writeCut(w, chunk(answer, true))
			return
		}
		g.generated(false)
		writeJSON(w, 200, chunk(answer, true))
		return
	}
	g.generated(true)
	ev := startSSE(w)
	ps := pieces(answer)
	for i, p := range ps {
		if f != nil && f.CutAfter > 0 && ev.n >= f.CutAfter {
			dropConnection(w)
			return
		}
		if f != nil && f.Malformed && i == len(ps)/2 {
			ev.event("", `{"candidates": [{"content": {"parts": [{"text": "bro`, "\r\n")
			return
		}
		ev.event("", chunk(p, i == len(ps)-1), "\r\n")
	}
}

func gemStatus(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}

// fail writes a Google API error body.
func (g *Gemini) fail(w http.ResponseWriter, code int, status, msg string, retry time.Duration) {
	e := map[string]any{"code": code, "message": msg, "status": status}
	if retry > 0 {
		e["details"] = []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo",
			"retryDelay": fmt.Sprintf("%gs", retry.Seconds())}}
	}
	writeJSON(w, code, map[string]any{"error": e})
}
