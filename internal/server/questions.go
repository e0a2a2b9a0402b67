package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/ragd/ragd/internal/qa"
	"github.com/ragd/ragd/internal/rag"
)

// MaxBoardJSON is the largest body of a question or an answer (64 KB: an answer of rag.MaxAnswerBody
// characters of Hangul is 60 KB).
const MaxBoardJSON = 64 * 1024

// Board is the collections' Q&A boards (*qa.Service implements it).
type Board interface {
	Ask(ctx context.Context, p rag.Principal, nq qa.NewQuestion) (*rag.Question, error)
	List(ctx context.Context, p rag.Principal, collection string, status rag.QuestionStatus, limit int) ([]*rag.Question, error)
	Get(ctx context.Context, viewer *rag.Principal, id string) (*qa.Thread, error)
	Answer(ctx context.Context, p rag.Principal, questionID, body string) (*rag.BoardAnswer, error)
	Delete(ctx context.Context, id string) error
	SimilarTo(ctx context.Context, viewer *rag.Principal, id string, k int) ([]qa.Similar, error)
	SimilarText(ctx context.Context, viewer *rag.Principal, collection, text string, k int) ([]qa.Similar, error)
	Begin(ctx context.Context, trigger string) (*rag.QARun, error)
	Complete(ctx context.Context, run *rag.QARun) error
	Runs(ctx context.Context, limit int) ([]*rag.QARun, error)
	Run(ctx context.Context, id string) (*rag.QARun, error)
}

func (s *Server) handleCreateQuestion(w http.ResponseWriter, r *http.Request) {
	var req qa.NewQuestion
	if err := decodeJSON(w, r, MaxBoardJSON, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.mayReadWhole(r.Context(), principalOf(r), cmp.Or(req.Collection, rag.DefaultCollection)); err != nil {
		s.writeError(w, r, err)
		return
	}
	q, err := s.deps.Board.Ask(r.Context(), principalOf(r), req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, q)
}

func (s *Server) handleListQuestions(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", 100, 1, 1000)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	qs, err := s.deps.Board.List(r.Context(), principalOf(r), r.URL.Query().Get("collection"), rag.QuestionStatus(r.URL.Query().Get("status")), limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if qs == nil {
		qs = []*rag.Question{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"questions": qs})
}

// questionThread returns a question with its answers when p sees its board (the collection, whole);
// not_found otherwise, as for a question that does not exist. The store reads them as p (the board
// predicate inside the query, and PostgreSQL's row-level security), and the board is checked again.
func (s *Server) questionThread(ctx context.Context, p rag.Principal, id string) (*qa.Thread, error) {
	t, err := s.deps.Board.Get(ctx, &p, id)
	if err != nil {
		return nil, err
	}
	if err := s.mayReadWhole(ctx, p, t.Question.CollectionID); err != nil {
		if rag.ErrorCode(err) == rag.CodeNotFound {
			err = fmt.Errorf("question %q: %w", id, rag.ErrNotFound) // as for a question that does not exist
		}
		return nil, err
	}
	return t, nil
}

func (s *Server) handleGetQuestion(w http.ResponseWriter, r *http.Request) {
	t, err := s.questionThread(r.Context(), principalOf(r), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) handleDeleteQuestion(w http.ResponseWriter, r *http.Request) {
	if _, err := s.questionThread(r.Context(), principalOf(r), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.deps.Board.Delete(r.Context(), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleAnswerQuestion(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Body string `json:"body"`
	}
	if err := decodeJSON(w, r, MaxBoardJSON, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, err := s.questionThread(r.Context(), principalOf(r), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	a, err := s.deps.Board.Answer(r.Context(), principalOf(r), r.PathValue("id"), req.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, a)
}

// handleSimilarQuestions answers GET /api/questions/{id}/similar and GET /api/questions/similar?collection=&q=
// (the ask form, before the question exists).
func (s *Server) handleSimilarQuestions(w http.ResponseWriter, r *http.Request) {
	k, err := queryInt(r, "k", 5, 1, qa.MaxSimilar)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var out []qa.Similar
	p := principalOf(r)
	if id := r.PathValue("id"); id != "" {
		if _, err = s.questionThread(r.Context(), p, id); err == nil {
			out, err = s.deps.Board.SimilarTo(r.Context(), &p, id, k)
		}
	} else {
		coll := r.URL.Query().Get("collection")
		if err = s.mayReadWhole(r.Context(), p, cmp.Or(coll, rag.DefaultCollection)); err == nil {
			out, err = s.deps.Board.SimilarText(r.Context(), &p, coll, r.URL.Query().Get("q"), k)
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if out == nil {
		out = []qa.Similar{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"questions": out})
}

func (s *Server) handleListRuns(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", 20, 1, 200)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	runs, err := s.deps.Board.Runs(r.Context(), limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": runs})
}

func (s *Server) handleGetRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.deps.Board.Run(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, run)
}

// handleStartRun starts one answer pass on this server. With ?wait=true it answers 200 with the finished
// run; otherwise 202 with the run as started (GET /api/qa/runs/{id} shows its end). The pass outlives the
// request: a client that goes away does not stop it.
func (s *Server) handleStartRun(w http.ResponseWriter, r *http.Request) {
	wait := false
	if v := r.URL.Query().Get("wait"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "wait must be true or false"))
			return
		}
		wait = b
	}
	ctx := context.WithoutCancel(r.Context())
	run, err := s.deps.Board.Begin(ctx, qa.TriggerAPI)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !wait {
		view := *run
		go func() {
			if err := s.deps.Board.Complete(ctx, run); err != nil {
				s.log.Error("qa pass", slog.String("run", run.ID), slog.Any("err", err))
			}
		}()
		writeJSON(w, http.StatusAccepted, view)
		return
	}
	if err := s.deps.Board.Complete(ctx, run); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, run)
}

// queryInt reads the query parameter name as an integer in [lo, hi] (def when absent). CodeInvalid.
func queryInt(r *http.Request, name string, def, lo, hi int) (int, error) {
	n, err := intParam(r.URL.Query().Get(name), def, lo, hi)
	if err != nil {
		return 0, rag.Errorf(rag.CodeInvalid, "%s %v", name, err)
	}
	return n, nil
}
