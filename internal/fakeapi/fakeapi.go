// Package fakeapi holds local stand-ins for the hosted APIs ragd talks to — the model APIs Gemini, OpenAI
// (and OpenAI-compatible servers) and Anthropic, and the source APIs Notion and Google Drive (notion.go,
// drive.go) — that speak each provider's documented wire format: request
// paths, auth headers, JSON fields and streaming framing. They check what the client sends (a request the
// real API would reject is rejected the same way and listed by Violations), answer as the real API does
// with deterministic content (embeddings from a hashed bag of words, so related texts are near; an answer
// that quotes passage [1] and cites it), count calls, and inject faults on demand: 429 with Retry-After,
// 5xx, delays, malformed JSON, a stream cut mid-way, or "down".
//
// It is not a test-only package so that end-to-end tests of the ragd binary can start the fakes too and
// point the binary at them through the providers' base-URL variables.
package fakeapi

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Fault is a failure a fake answers with instead of the real answer.
type Fault struct {
	// Status answers with this HTTP status and the provider's error body (429, 500, 503, 401, …).
	Status int
	// RetryAfter, with Status, sets the Retry-After header (and Gemini's RetryInfo detail).
	RetryAfter time.Duration
	// Delay waits this long (or until the client gives up) before answering normally.
	Delay time.Duration
	// Malformed answers 200 with a body (or a stream event) that is not valid JSON.
	Malformed bool
	// CutAfter > 0 drops the connection after that many stream chunks; on a non-streaming call it drops
	// the connection half-way through the body.
	CutAfter int
	// Message replaces the provider's usual error text.
	Message string
}

// Endpoint kinds, as counted by Calls.
const (
	EndpointEmbed    = "embed"
	EndpointGenerate = "generate"
	EndpointStream   = "stream"
)

// Request is a request a fake received.
type Request struct {
	Endpoint string
	Method   string
	Path     string
	Query    string
	Header   http.Header
	Body     []byte
}

// JSON decodes the request body into v.
func (r Request) JSON(v any) error { return json.Unmarshal(r.Body, v) }

// Stats counts what a fake did.
type Stats struct {
	Requests      int // every request received
	Faulted       int // answered with an injected fault or "down"
	Rejected      int // refused as the real API would (bad key, missing field, …)
	EmbedCalls    int // embedding requests answered successfully
	EmbeddedTexts int // texts embedded successfully
	GenerateCalls int // non-streaming generations answered successfully
	StreamCalls   int // streaming generations started
}

// Server is what the three fakes share. Use it through Gemini, OpenAI or Anthropic.
type Server struct {
	srv *httptest.Server
	key string

	mu         sync.Mutex
	faults     []Fault
	down       bool
	stats      Stats
	calls      map[string]int
	texts      map[string]int
	violations []string
	requests   []Request
	answer     func(prompt string) string
	structured func(prompt string, schema map[string]any) string
	// structuredCalls counts structured generations answered.
	structuredCalls int
	inFlight        int
	maxFlight       int
}

func newServer(key string, h http.Handler) *Server {
	s := &Server{key: key, calls: map[string]int{}, texts: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.inFlight++
		s.maxFlight = max(s.maxFlight, s.inFlight)
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.inFlight--
			s.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	}))
	return s
}

// MaxInFlight is the most requests the fake was serving at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxFlight
}

// URL is the server's root URL (http://127.0.0.1:port).
func (s *Server) URL() string { return s.srv.URL }

// Key is the API key the fake accepts.
func (s *Server) Key() string { return s.key }

// Close shuts the server down.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// FailNext makes the next n requests fail with f (faults queue up in order).
func (s *Server) FailNext(n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults = append(s.faults, f)
	}
}

// SetDown makes every request fail with 503 (Anthropic: 529 overloaded) until SetDown(false).
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

// SetAnswer replaces the generated answer: f receives the last user message and returns the answer text.
func (s *Server) SetAnswer(f func(prompt string) string) {
	s.mu.Lock()
	s.answer = f
	s.mu.Unlock()
}

// Calls counts the requests received on an endpoint kind (EndpointEmbed, …), faulted ones included.
func (s *Server) Calls(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[endpoint]
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// TimesEmbedded is how many times text was embedded successfully (documents and queries alike).
func (s *Server) TimesEmbedded(text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.texts[text]
}

// Violations lists the requests that broke the provider's protocol (empty when the client behaved).
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.violations)
}

// Requests returns every request received, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// LastRequest returns the latest request on an endpoint kind.
func (s *Server) LastRequest(endpoint string) (Request, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.requests) - 1; i >= 0; i-- {
		if s.requests[i].Endpoint == endpoint {
			return s.requests[i], true
		}
	}
	return Request{}, false
}

// Reset clears counters, recorded requests, violations and pending faults.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults, s.down, s.stats, s.structuredCalls = nil, false, Stats{}, 0
	s.calls, s.texts = map[string]int{}, map[string]int{}
	s.violations, s.requests = nil, nil
	s.maxFlight = s.inFlight
}

// begin records a request and returns the fault to apply (nil for none). down reports "down" mode.
func (s *Server) begin(endpoint string, r *http.Request, body []byte) (f *Fault, down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Requests++
	s.calls[endpoint]++
	s.requests = append(s.requests, Request{Endpoint: endpoint, Method: r.Method, Path: r.URL.Path,
		Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	if s.down {
		s.stats.Faulted++
		return nil, true
	}
	if len(s.faults) > 0 {
		ff := s.faults[0]
		s.faults = s.faults[1:]
		if ff.Status != 0 || ff.Malformed || ff.CutAfter > 0 {
			s.stats.Faulted++
		}
		return &ff, false
	}
	return nil, false
}

func (s *Server) violation(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.violations = append(s.violations, msg)
	s.stats.Rejected++
	s.mu.Unlock()
	return msg
}

func (s *Server) embedded(texts []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.EmbedCalls++
	s.stats.EmbeddedTexts += len(texts)
	for _, t := range texts {
		s.texts[t]++
	}
}

func (s *Server) generated(stream bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stream {
		s.stats.StreamCalls++
	} else {
		s.stats.GenerateCalls++
	}
}

func (s *Server) answerFor(prompt string) string {
	s.mu.Lock()
	f := s.answer
	s.mu.Unlock()
	if f != nil {
		return f(prompt)
	}
	return DefaultAnswer(prompt)
}

// delay waits d or until the client gives up; false when the client is gone.
func delay(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func readBody(r *http.Request) []byte {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	return b
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeMalformed answers 200 with JSON cut off in the middle.
func writeMalformed(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `{"candidates": [{"content": {"parts": [{"text": "The ans`)
}

// writeCut sends the first half of a JSON body (with the full Content-Length) and drops the connection.
func writeCut(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b[:len(b)/2])
	dropConnection(w)
}

// dropConnection flushes what was written and closes the TCP connection without finishing the response,
// as a network cut does: the client sees an unexpected EOF.
func dropConnection(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	conn, buf, err := rc.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = buf.Flush()
	_ = conn.Close()
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
	n int
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w}
}

// event writes one event (name may be empty) whose data is v marshalled, or raw when v is a string.
func (e *sse) event(name string, v any, sep string) {
	var data []byte
	if s, ok := v.(string); ok {
		data = []byte(s)
	} else {
		data, _ = json.Marshal(v)
	}
	bw := bufio.NewWriter(e.w)
	if name != "" {
		fmt.Fprintf(bw, "event: %s%s", name, sep)
	}
	fmt.Fprintf(bw, "data: %s%s%s", data, sep, sep)
	_ = bw.Flush()
	_ = http.NewResponseController(e.w).Flush()
	e.n++
}

// Vector is the fake's embedding of text in dim dimensions, unit length: a hashed bag of lower-cased words
// and of their character trigrams, so texts that share words are near, deterministic across runs. A text
// without words gets a vector derived from its hash.
func Vector(text string, dim int) []float32 {
	v := make([]float64, dim)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	add := func(feature string, w float64) {
		h := sha256.Sum256([]byte(feature))
		i := binary.LittleEndian.Uint64(h[:8]) % uint64(dim)
		if h[8]&1 == 1 {
			w = -w
		}
		v[i] += w
	}
	for _, word := range words {
		add("w:"+word, 1)
		r := []rune(word)
		for i := 0; i+3 <= len(r); i++ {
			add("g:"+string(r[i:i+3]), 0.3)
		}
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	if norm == 0 {
		h := sha256.Sum256([]byte(text))
		for i := range v {
			v[i] = float64(int(h[i%32])-128) + float64(i%7)
			norm += v[i] * v[i]
		}
	}
	norm = math.Sqrt(norm)
	out := make([]float32, dim)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

var firstPassage = regexp.MustCompile(`(?m)^\[1\][^\n]*\n+([^\n]+)`)

// DefaultAnswer is the fake's answer to a prompt: the first sentence of passage [1] (as ragd numbers
// passages, "[1] title…" on its own line followed by the text) cited with [1], or a plain statement that
// cites [1] when no passage is found.
func DefaultAnswer(prompt string) string {
	m := firstPassage.FindStringSubmatch(prompt)
	if m == nil {
		return "The documents answer this question [1]."
	}
	s := strings.TrimSpace(m[1])
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	s = strings.TrimRight(s, " ")
	if strings.HasSuffix(s, ".") {
		return "According to the documents, " + strings.TrimSuffix(s, ".") + " [1]."
	}
	return "According to the documents, " + s + " [1]."
}

// pieces splits an answer into stream deltas of a few words each (the concatenation is the answer).
func pieces(text string) []string {
	var out []string
	words := strings.SplitAfter(text, " ")
	for i := 0; i < len(words); i += 3 {
		out = append(out, strings.Join(words[i:min(i+3, len(words))], ""))
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

func countWords(s string) int { return len(strings.Fields(s)) }

// mask shows a key as providers do in error messages: its first and last few characters.
func mask(key string) string {
	if len(key) <= 8 {
		return "****"
	}
	return key[:3] + "****" + key[len(key)-4:]
}

func retryAfterHeader(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(d.Seconds()))))
	}
}
