// Package server is ragd's HTTP API. All routes are listed in one place (routes); handlers decode, call the
// app's services and encode — they contain no SQL and no retrieval logic.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/rag"
)

// MaxJSONBody is the largest JSON request body accepted by chat and search (10 KB).
const MaxJSONBody = 10 * 1024

// Server serves the API over an App.
type Server struct {
	app *app.App
	log *slog.Logger
	mux *http.ServeMux
}

// New returns a Server for a.
func New(a *app.App) *Server {
	s := &Server{app: a, log: a.Logger, mux: http.NewServeMux()}
	s.routes()
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) routes() {
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	s.mux.HandleFunc("GET /readyz", s.handleReady)
	s.mux.HandleFunc("POST /api/search", s.handleSearch)
	s.mux.HandleFunc("POST /api/chat", s.handleChat)
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if err := s.app.Store.Ping(r.Context()); err != nil {
		s.writeError(w, r, rag.WrapError(rag.CodeDBError, err, "store not ready"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

type searchRequest struct {
	Query      string     `json:"query"`
	K          int        `json:"k"`
	Collection string     `json:"collection"`
	Filters    rag.Filter `json:"filters"`
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	var req searchRequest
	if err := decodeJSON(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if strings.TrimSpace(req.Query) == "" {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "query is required"))
		return
	}
	f := req.Filters
	if req.Collection != "" {
		f.Collections = append(f.Collections, req.Collection)
	}
	res, err := s.app.Retriever.Search(r.Context(), rag.LocalPrincipal, rag.SearchRequest{Query: req.Query, Filter: f, K: req.K})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if res.Hits == nil {
		res.Hits = []rag.Hit{}
	}
	writeJSON(w, http.StatusOK, res)
}

type chatRequest struct {
	Question   string     `json:"question"`
	History    []rag.Turn `json:"history"`
	Collection string     `json:"collection"`
	Filters    rag.Filter `json:"filters"`
	K          int        `json:"k"`
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := decodeJSON(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	f := req.Filters
	if req.Collection != "" {
		f.Collections = append(f.Collections, req.Collection)
	}
	ans, err := s.app.Answers.Ask(r.Context(), rag.LocalPrincipal, rag.AskRequest{Question: req.Question, History: req.History, Filter: f, K: req.K}, nil)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ans)
}

// decodeJSON reads a JSON body of at most MaxJSONBody bytes into v.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body := http.MaxBytesReader(w, r.Body, MaxJSONBody)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			return rag.Errorf(rag.CodePayloadTooLarge, "request body is over %d bytes", MaxJSONBody)
		case errors.Is(err, io.EOF):
			return rag.Errorf(rag.CodeInvalid, "request body is empty")
		}
		return rag.Errorf(rag.CodeInvalid, "request body is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return rag.Errorf(rag.CodePayloadTooLarge, "request body is over %d bytes", MaxJSONBody)
		}
		return rag.Errorf(rag.CodeInvalid, "request body has data after the JSON value")
	}
	return nil
}

// writeError writes {"error": code, "message": msg} with the code's status. Internal errors are logged with
// their cause; the client sees only the safe message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := rag.ErrorCode(err)
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away
	}
	status := rag.HTTPStatus(code)
	if status >= 500 {
		s.log.Error("request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("code", string(code)), slog.Any("err", err))
	}
	writeJSON(w, status, map[string]string{"error": string(code), "message": rag.ErrorMessage(err)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
