package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
)

// The OpenAI-compatible API (/v1): chat front-ends and SDKs that speak OpenAI's chat completions reach ragd's
// own answer service through it. Each readable collection is a model ("ragd/<collection>"; "ragd" is every
// collection); a completion answers the last user message with the earlier messages as history, exactly as
// POST /api/chat does, with the citations as markdown at the end of the content and the cited passages in
// an extra "sources" field that OpenAI's clients ignore. Errors have OpenAI's shape
// ({"error": {"message", "type", "code"}}); the code is ragd's (docs/api.md "Errors").

// ModelAll is the model that answers from every collection; "ModelAll/<collection>" answers from one.
const ModelAll = "ragd"

// MaxCompletionBody is the largest body of POST /v1/chat/completions (256 KiB). OpenAI's clients send the
// whole conversation with every message, so the body is larger than /api/chat's 10 KB; only the last
// rag.MaxHistoryTurns turns are used, and the question is truncated at rag.MaxQuestionChars.
const MaxCompletionBody = 256 * 1024

// routesOpenAI registers the OpenAI-compatible routes.
func (s *Server) routesOpenAI() {
	s.mux.HandleFunc("GET /v1/models", s.openAI(s.handleModels))
	s.mux.HandleFunc("GET /v1/models/{model...}", s.openAI(s.handleModel))
	s.mux.HandleFunc("POST /v1/chat/completions", s.openAI(s.openAILimited(s.chatLimit, s.handleCompletions)))
	if s.deps.Embedder != nil {
		s.mux.HandleFunc("POST /v1/embeddings", s.openAI(s.openAILimited(s.searchLimit, s.handleEmbeddings)))
	}
	s.mux.HandleFunc("/v1/", s.openAI(func(w http.ResponseWriter, r *http.Request) {
		s.writeOpenAIError(w, r, rag.Errorf(rag.CodeNotFound, "no such endpoint: %s %s (ragd serves /v1/models, /v1/chat/completions and /v1/embeddings)", r.Method, r.URL.Path))
	}))
}

// openAIError is OpenAI's error body.
type openAIError struct {
	Error openAIErrorDetail `json:"error"`
}

type openAIErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

// openAIErrorType is the "type" OpenAI gives errors of a status.
func openAIErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func openAIErrorOf(err error) (int, openAIError) {
	code := rag.ErrorCode(err)
	status := rag.HTTPStatus(code)
	return status, openAIError{Error: openAIErrorDetail{Message: rag.ErrorMessage(err), Type: openAIErrorType(status), Code: string(code)}}
}

// writeOpenAIError is writeError in OpenAI's shape: the same status, logging and client-gone rule.
func (s *Server) writeOpenAIError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return
	}
	status, body := openAIErrorOf(err)
	s.logFailure(r, status, err)
	writeJSON(w, status, body)
}

// openAI wraps a /v1 handler with what the /api middleware gives /api routes, in OpenAI's error shape: no
// caching, the CORS allow-list for cross-origin requests, and the API key (Authorization: Bearer, as
// OpenAI's clients send it, or X-RAG-API-Key) when keys are configured.
func (s *Server) openAI(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if o := r.Header.Get("Origin"); o != "" && !s.cors.allows(o) && !sameOrigin(r, o) {
			s.writeOpenAIError(w, r, rag.Errorf(rag.CodeForbidden, "origin %s is not allowed", o))
			return
		}
		required, err := s.authRequired(r.Context())
		if err != nil {
			s.writeOpenAIError(w, r, err)
			return
		}
		if required {
			// The keys of /api: configured or users' stored keys, with the read scope (every /v1 route reads).
			key := presentedKey(r)
			p, err := s.resolveKey(r.Context(), key)
			if err != nil {
				if errors.Is(err, rag.ErrNotFound) {
					w.Header().Set("WWW-Authenticate", `Bearer realm="ragd"`)
					msg, why := "the API key is not valid", "invalid key"
					if key == "" {
						msg, why = "an API key is required (Authorization: Bearer <key>)", "no key"
					}
					notePrincipal(r, nil, why)
					err = rag.Errorf(rag.CodeUnauthorized, "%s", msg)
				}
				s.writeOpenAIError(w, r, err)
				return
			}
			if !p.Allows(rag.ScopeRead) {
				notePrincipal(r, &p, "missing scope read")
				s.writeOpenAIError(w, r, rag.Errorf(rag.CodeForbidden, "this key lacks the read scope"))
				return
			}
			notePrincipal(r, &p, "")
			r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
		}
		h(w, r)
	}
}

// openAILimited is limited with OpenAI's error shape: the same limiter, so /v1 and /api share a client's
// allowance.
func (s *Server) openAILimited(l *limiter, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ok, wait := l.allow(s.clientOf(r))
		if !ok {
			secs := max(int(math.Ceil(wait.Seconds())), 1)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			s.writeOpenAIError(w, r, rag.Errorf(rag.CodeRateLimited, "over %d requests per minute; retry in %d s", l.perMinute, secs))
			return
		}
		h(w, r)
	}
}

// model is an entry of GET /v1/models.
type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// models lists ModelAll and one model per collection p sees.
func (s *Server) models(ctx context.Context, p rag.Principal) ([]model, error) {
	colls, err := s.visibleCollections(ctx, p)
	if err != nil {
		return nil, err
	}
	var first int64
	out := []model{{ID: ModelAll, Object: "model", OwnedBy: "ragd"}}
	for _, c := range colls {
		created := c.CreatedAt.Unix()
		if first == 0 || created < first {
			first = created
		}
		out = append(out, model{ID: ModelAll + "/" + c.Name, Object: "model", Created: created, OwnedBy: "ragd"})
	}
	out[0].Created = first
	return out, nil
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	list, err := s.models(r.Context(), principalOf(r))
	if err != nil {
		s.writeOpenAIError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": list})
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	list, err := s.models(r.Context(), principalOf(r))
	if err != nil {
		s.writeOpenAIError(w, r, err)
		return
	}
	id := r.PathValue("model")
	for _, m := range list {
		if m.ID == id {
			writeJSON(w, http.StatusOK, m)
			return
		}
	}
	s.writeOpenAIError(w, r, rag.Errorf(rag.CodeNotFound, "no model %q: the models are %q and %q/<collection>", id, ModelAll, ModelAll))
}

// collectionOfModel returns the collection a model names ("" for ModelAll). Errors: CodeNotFound for a
// model that is neither ModelAll nor ModelAll/<an existing collection>.
func (s *Server) collectionOfModel(ctx context.Context, m string) (string, error) {
	if m == ModelAll {
		return "", nil
	}
	name, ok := strings.CutPrefix(m, ModelAll+"/")
	if !ok || name == "" {
		return "", rag.Errorf(rag.CodeNotFound, "no model %q: the models are %q and %q/<collection> (GET /v1/models)", m, ModelAll, ModelAll)
	}
	c, err := s.deps.Collections.GetCollection(ctx, name)
	if errors.Is(err, rag.ErrNotFound) {
		return "", rag.Errorf(rag.CodeNotFound, "no model %q: there is no collection %q (GET /v1/models)", m, name)
	}
	if err != nil {
		return "", err
	}
	return c.Name, nil
}

// completionRequest is the part of OpenAI's chat completion request ragd reads; sampling parameters
// (temperature, max_tokens, …) are accepted and ignored — a collection's profile sets them. K and Filters are
// ragd's own (extra_body in OpenAI's SDKs), as in POST /api/chat.
type completionRequest struct {
	Model         string              `json:"model"`
	Messages      []completionMessage `json:"messages"`
	Stream        bool                `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N       *int       `json:"n"`
	K       int        `json:"k"`
	Filters rag.Filter `json:"filters"`
}

// completionMessage is a chat message; content is a string or a list of parts ({"type": "text", "text"}).
type completionMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text is the message's text: its string content, or its text parts joined by newlines.
func (m completionMessage) text() (string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", rag.Errorf(rag.CodeInvalid, "messages: content must be a string or a list of parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// askOfCompletion turns a completion request into the question and history of an answer: the last message
// must be the user's; earlier user and assistant messages are the history (system and tool messages are
// left out: ragd's prompt is its own, or the collection profile's).
func askOfCompletion(req completionRequest) (string, []rag.Turn, error) {
	if len(req.Messages) == 0 {
		return "", nil, rag.Errorf(rag.CodeInvalid, "messages: at least one message is required")
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != string(rag.RoleUser) {
		return "", nil, rag.Errorf(rag.CodeInvalid, "messages: the last message must be the user's (got %q)", last.Role)
	}
	q, err := last.text()
	if err != nil {
		return "", nil, err
	}
	if strings.TrimSpace(q) == "" {
		return "", nil, rag.Errorf(rag.CodeQuestionRequired, "the last user message is empty: a question is required")
	}
	var history []rag.Turn
	for _, m := range req.Messages[:len(req.Messages)-1] {
		if m.Role != string(rag.RoleUser) && m.Role != string(rag.RoleAssistant) {
			continue
		}
		t, err := m.text()
		if err != nil {
			return "", nil, err
		}
		history = append(history, rag.Turn{Role: rag.Role(m.Role), Content: cutBytes(stripSources(t), MaxTurnBytes)})
	}
	return q, recentTurns(history, rag.MaxHistoryTurns), nil
}

// MaxTurnBytes bounds each history message's text (4 KiB, cut at a character boundary), as /api/chat's 10 KB
// body bounds its history as a whole. (It was chosen when counting tokens was quadratic in a run without
// spaces; generate.CountTokens is linear now, so the bound could be raised.)
const MaxTurnBytes = exactTokensBytes

// cutBytes cuts s to at most n bytes without splitting a character.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// sourcesHeading starts the citation list appended to an answer's content. stripSources removes it from
// an assistant message sent back as history, so the list does not weigh on the follow-up's retrieval.
const sourcesHeading = "\n\n---\n**Sources**\n"

func stripSources(s string) string {
	if i := strings.LastIndex(s, sourcesHeading); i >= 0 {
		return s[:i]
	}
	return s
}

// citationMarkdown lists the cited sources under sourcesHeading (rag.CitationList; "" when none is cited).
func citationMarkdown(sources []rag.Source) string {
	if len(sources) == 0 {
		return ""
	}
	return sourcesHeading + "\n" + rag.CitationList(sources)
}

// completionUsage counts tokens with generate.TokenEncoding (cl100k_base; see countTokens): the prompt is the
// question, the history used and the passages given to the generator; the completion is the content
// returned. They are ragd's counts, not a hosted provider's bill.
type completionUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageOf(question string, history []rag.Turn, passages []rag.Source, content string) completionUsage {
	u := completionUsage{PromptTokens: countTokens(question), CompletionTokens: countTokens(content)}
	for _, t := range history {
		u.PromptTokens += countTokens(t.Content)
	}
	for _, p := range passages {
		u.PromptTokens += countTokens(p.Text)
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// exactTokensBytes is the longest text whose tokens are counted with the tokenizer; longer ones are
// estimated (generate.EstimateTokens). Counting is linear in the text (generate.CountTokens cuts long runs
// without spaces); the estimate keeps usage figures cheap for the long texts a client may send.
const exactTokensBytes = 4096

func countTokens(s string) int {
	if len(s) > exactTokensBytes {
		return generate.EstimateTokens(s)
	}
	return generate.CountTokens(s)
}

// completionID is a fresh "chatcmpl-…" id.
func completionID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "chatcmpl-" + hex.EncodeToString(b)
}

type completionChoice struct {
	Index        int            `json:"index"`
	Message      *completionOut `json:"message,omitempty"`
	Delta        *completionOut `json:"delta,omitempty"`
	FinishReason *string        `json:"finish_reason"`
	Logprobs     *struct{}      `json:"logprobs"`
}

type completionOut struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// completion is a chat.completion or a chat.completion.chunk. Sources (ragd's extra field) are the cited
// passages with every score, as in POST /api/chat; OpenAI's clients ignore it.
type completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   *completionUsage   `json:"usage,omitempty"`
	Sources []rag.SourceView   `json:"sources,omitempty"`
	// NotFound is ragd's: true when the documents do not cover the question.
	NotFound *bool `json:"not_found,omitempty"`
}

func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if err := decodeJSON(w, r, MaxCompletionBody, &req); err != nil {
		s.writeOpenAIError(w, r, err)
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{}) // as handleChat: a stream may outlast it
	if req.N != nil && *req.N != 1 {
		s.writeOpenAIError(w, r, rag.Errorf(rag.CodeInvalid, "n: ragd returns one choice (n=1), got %d", *req.N))
		return
	}
	if req.Model == "" {
		s.writeOpenAIError(w, r, rag.Errorf(rag.CodeInvalid, "model is required (%q, or %q/<collection>)", ModelAll, ModelAll))
		return
	}
	collection, err := s.collectionOfModel(r.Context(), req.Model)
	if err != nil {
		s.writeOpenAIError(w, r, err)
		return
	}
	question, history, err := askOfCompletion(req)
	if err == nil {
		err = rag.CheckK(req.K, rag.MaxAnswerK)
	}
	f := requestFilter(req.Filters, collection)
	if err == nil {
		err = f.Check()
	}
	if err != nil {
		s.writeOpenAIError(w, r, err)
		return
	}
	ask := rag.AskRequest{Question: question, History: history, Filter: f, K: req.K}
	base := completion{ID: completionID(), Created: s.now().Unix(), Model: req.Model}
	if !req.Stream {
		ans, passages, err := s.askWhole(r, ask)
		if err != nil {
			s.writeOpenAIError(w, r, err)
			return
		}
		content := ans.Text + citationMarkdown(ans.Sources)
		stop := "stop"
		u := usageOf(ans.Question, history, passages, content)
		out := base
		out.Object = "chat.completion"
		out.Choices = []completionChoice{{Message: &completionOut{Role: "assistant", Content: &content}, FinishReason: &stop}}
		out.Usage, out.Sources, out.NotFound = &u, rag.ViewSources(ans.Sources), &ans.NotFound
		writeJSON(w, http.StatusOK, out)
		return
	}

	// Streaming: chat.completion.chunk objects as data-only server-sent events, ending with "data: [DONE]".
	// As with /api/chat, an error before the first event is an ordinary (OpenAI-shaped) error response.
	sse := &eventStream{w: w, rc: http.NewResponseController(w)}
	chunk := func(delta completionOut, finish *string) completion {
		c := base
		c.Object = "chat.completion.chunk"
		c.Choices = []completionChoice{{Delta: &delta, FinishReason: finish}}
		return c
	}
	var passages []rag.Source
	var streamed strings.Builder
	_, err = s.deps.Answers.Ask(r.Context(), principalOf(r), ask, func(ev rag.AnswerEvent) error {
		switch ev.Type {
		case rag.AnswerSources:
			passages = ev.Sources
			noteSources(r, ev.Sources)
			empty := ""
			return sse.data(chunk(completionOut{Role: "assistant", Content: &empty}, nil))
		case rag.AnswerDelta:
			streamed.WriteString(ev.Delta)
			return sse.data(chunk(completionOut{Content: &ev.Delta}, nil))
		case rag.AnswerDone:
			// The citation list comes last, with the cited passages in "sources" (verified citations: a
			// number the check removed from the answer is not listed).
			cites := citationMarkdown(ev.Answer.Sources)
			streamed.WriteString(cites)
			stop := "stop"
			last := chunk(completionOut{Content: &cites}, &stop)
			last.Sources, last.NotFound = rag.ViewSources(ev.Answer.Sources), &ev.Answer.NotFound
			if err := sse.data(last); err != nil {
				return err
			}
			if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
				u := usageOf(ev.Answer.Question, history, passages, streamed.String())
				c := base
				c.Object, c.Choices, c.Usage = "chat.completion.chunk", []completionChoice{}, &u
				if err := sse.data(c); err != nil {
					return err
				}
			}
			return sse.raw("[DONE]")
		}
		return nil
	})
	if err == nil {
		return
	}
	if !sse.started {
		s.writeOpenAIError(w, r, err)
		return
	}
	if sse.broken || r.Context().Err() != nil {
		return
	}
	status, body := openAIErrorOf(err)
	s.logFailure(r, status, err)
	_ = sse.data(body) // OpenAI's clients raise an error for a data event carrying "error"
}

// askWhole answers ask without streaming; passages are the ones given to the generator (the sources
// event's).
func (s *Server) askWhole(r *http.Request, ask rag.AskRequest) (*rag.Answer, []rag.Source, error) {
	var passages []rag.Source
	ans, err := s.deps.Answers.Ask(r.Context(), principalOf(r), ask, func(ev rag.AnswerEvent) error {
		if ev.Type == rag.AnswerSources {
			passages = ev.Sources
			noteSources(r, ev.Sources)
		}
		return nil
	})
	return ans, passages, err
}

// data sends v as a data-only event (OpenAI's streams have no event names).
func (e *eventStream) data(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	return e.raw(string(b))
}

// raw sends a data-only event of text, which has no newline.
func (e *eventStream) raw(text string) error { return e.write("data: " + text + "\n\n") }
