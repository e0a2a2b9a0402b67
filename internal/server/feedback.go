package server

import (
	"context"
	"net/http"

	"github.com/ragd/ragd/internal/feedback"
	"github.com/ragd/ragd/internal/rag"
)

// MaxFeedbackJSON is the largest body of a rating (128 KB: an answer of rag.MaxFeedbackAnswer characters of
// Hangul is 60 KB, its comment 6 KB).
const MaxFeedbackJSON = 128 * 1024

// Feedback rates answers and sources and exports the ratings as eval items (*feedback.Service implements
// it).
type Feedback interface {
	Rate(ctx context.Context, p rag.Principal, req feedback.Request) (*rag.Feedback, error)
	List(ctx context.Context, p rag.Principal, all bool, q rag.FeedbackQuery) ([]*rag.Feedback, error)
	Delete(ctx context.Context, p rag.Principal, id string) error
	Export(ctx context.Context, p rag.Principal, name, docs string) (*feedback.Exported, error)
}

func (s *Server) handleRate(w http.ResponseWriter, r *http.Request) {
	var req feedback.Request
	if err := decodeJSON(w, r, MaxFeedbackJSON, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	f, err := s.deps.Feedback.Rate(r.Context(), principalOf(r), req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, f)
}

func (s *Server) handleListFeedback(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", 100, 1, rag.MaxFeedbackList)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rating, err := queryInt(r, "rating", 0, -1, 1)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	qv := r.URL.Query()
	target := rag.FeedbackTarget(qv.Get("target"))
	if target != "" && target != rag.FeedbackAnswer && target != rag.FeedbackSource {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "target must be %q or %q", rag.FeedbackAnswer, rag.FeedbackSource))
		return
	}
	all := qv.Get("all") == "true" || qv.Get("all") == "1"
	list, err := s.deps.Feedback.List(r.Context(), principalOf(r), all, rag.FeedbackQuery{Target: target, Rating: rating, Limit: limit})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"feedback": list})
}

func (s *Server) handleDeleteFeedback(w http.ResponseWriter, r *http.Request) {
	if err := s.deps.Feedback.Delete(r.Context(), principalOf(r), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleExportFeedback(w http.ResponseWriter, r *http.Request) {
	qv := r.URL.Query()
	name := qv.Get("name")
	if name == "" {
		name = "feedback"
	}
	ex, err := s.deps.Feedback.Export(r.Context(), principalOf(r), name, qv.Get("docs"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ex)
}
