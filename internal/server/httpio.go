package server

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/ragd/ragd/internal/rag"
)

// decodeJSON reads a JSON body of at most limit bytes into v. Errors: CodePayloadTooLarge, CodeInvalid.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if r.ContentLength > limit {
		return rag.Errorf(rag.CodePayloadTooLarge, "request body is over %d bytes", limit)
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			return rag.Errorf(rag.CodePayloadTooLarge, "request body is over %d bytes", limit)
		case errors.Is(err, io.EOF):
			return rag.Errorf(rag.CodeInvalid, "request body is empty")
		}
		return rag.Errorf(rag.CodeInvalid, "request body is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return rag.Errorf(rag.CodePayloadTooLarge, "request body is over %d bytes", limit)
		}
		return rag.Errorf(rag.CodeInvalid, "request body has data after the JSON value")
	}
	return nil
}

// errorBody is the body of every error response: {"error": "<code>", "message": "<human text>"}.
type errorBody struct {
	Error   rag.Code `json:"error"`
	Message string   `json:"message"`
}

func errorBodyOf(err error) errorBody {
	return errorBody{Error: rag.ErrorCode(err), Message: rag.ErrorMessage(err)}
}

// writeError writes err's code and safe message with the code's status. Server-side failures (5xx) are
// logged with their cause; the client sees only the safe message ("internal error" for unexpected errors).
//
// When the client has gone away (an aborted chat, a closed tab) nothing is written or logged as a failure:
// the store and the models report the cancellation in their own words (SQLite says "interrupted"), which
// would otherwise read as 500 db_error.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		s.log.Debug("client went away", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
		return
	}
	body := errorBodyOf(err)
	status := rag.HTTPStatus(body.Error)
	s.logFailure(r, status, err)
	writeJSON(w, status, body)
}

func (s *Server) logFailure(r *http.Request, status int, err error) {
	if status < 500 {
		return
	}
	s.log.Error("request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", status), slog.String("code", string(rag.ErrorCode(err))), slog.Any("err", err))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
