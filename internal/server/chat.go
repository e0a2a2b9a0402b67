package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// chatRequest is the body of POST /api/chat.
type chatRequest struct {
	Question   string     `json:"question"`
	History    []rag.Turn `json:"history"`
	Collection string     `json:"collection"`
	Filters    rag.Filter `json:"filters"`
	// DocumentIDs restricts the answer to these documents (added to filters.document_ids).
	DocumentIDs []string `json:"document_ids"`
	K           int      `json:"k"`
	// AsOf (YYYY-MM-DD) is the date relative dates of the question resolve against (default today).
	AsOf string `json:"as_of"`
	// DropFilters are schema fields whose conditions read out of the question are not applied (a chip the
	// user removed), at most rag.MaxDropFilters.
	DropFilters []string `json:"drop_filters"`
	// Stream asks for server-sent events, like "Accept: text/event-stream".
	Stream bool `json:"stream"`
	// ConversationID appends the question and its answer to that conversation of the principal; without
	// history, the conversation's last turns are the history. ReplaceFrom (a message of it) first removes
	// that message and the ones after it: a regenerated answer, an edited question.
	ConversationID string `json:"conversation_id"`
	ReplaceFrom    string `json:"replace_from"`
}

// chatAnswer is an answer as /api/chat returns it: with the conversation it was saved in and the IDs of
// the question's and the answer's messages there.
type chatAnswer struct {
	rag.AnswerView
	ConversationID string   `json:"conversation_id,omitempty"`
	MessageIDs     []string `json:"message_ids,omitempty"`
}

// recentTurns keeps the last n turns that have a role and content; older ones are dropped, not an error.
func recentTurns(h []rag.Turn, n int) []rag.Turn {
	var out []rag.Turn
	for _, t := range h {
		if strings.TrimSpace(t.Content) != "" && (t.Role == rag.RoleUser || t.Role == rag.RoleAssistant) {
			out = append(out, t)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := decodeJSON(w, r, MaxJSONBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	// The body is read: an answer may stream for longer than the server's read timeout, which must not
	// end it (net/http cancels the request when the connection's read deadline passes).
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	if strings.TrimSpace(req.Question) == "" {
		// The answer service refuses it with question_required, in the words of the collection's profile.
		_, err := s.deps.Answers.Ask(r.Context(), principalOf(r), rag.AskRequest{Filter: requestFilter(req.Filters, req.Collection)}, nil)
		if err == nil {
			err = rag.Errorf(rag.CodeQuestionRequired, "a question is required")
		}
		s.writeError(w, r, err)
		return
	}
	if err := rag.CheckK(req.K, rag.MaxAnswerK); err != nil {
		s.writeError(w, r, err)
		return
	}
	f := requestFilter(req.Filters, req.Collection)
	f.DocumentIDs = append(f.DocumentIDs, req.DocumentIDs...)
	if err := f.Check(); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.ReplaceFrom != "" && req.ConversationID == "" {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "replace_from needs a conversation_id"))
		return
	}
	var conv *chatConversation
	if req.ConversationID != "" {
		var err error
		if conv, err = s.openConversation(r.Context(), principalOf(r), req.ConversationID, req.ReplaceFrom); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	history := recentTurns(req.History, rag.MaxHistoryTurns)
	if len(history) == 0 && conv != nil {
		history = conv.history(rag.MaxHistoryTurns)
	}
	if len(req.DropFilters) > rag.MaxDropFilters {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "drop_filters: at most %d fields, got %d", rag.MaxDropFilters, len(req.DropFilters)))
		return
	}
	ask := rag.AskRequest{Question: req.Question, History: history, Filter: f, K: req.K, DropFilters: req.DropFilters}
	if req.AsOf != "" {
		d, err := time.Parse(time.DateOnly, strings.TrimSpace(req.AsOf))
		if err != nil {
			s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "as_of: want a date YYYY-MM-DD, got %q", req.AsOf))
			return
		}
		ask.AsOf = d
	}

	// One slot for the whole answer: its searches, the answer written (a hosted model's outside it,
	// answer.Service's byModel) and the exchange saved.
	ctx, release, err := s.deps.Slots.Enter(r.Context())
	if err != nil {
		return // the client went away while it waited
	}
	defer release()
	r = r.WithContext(ctx)

	stream := req.Stream || strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	if !stream {
		ans, passages, err := s.askWhole(r, ask)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out, err := s.saved(r.Context(), principalOf(r), conv, req.Question, rag.ViewAnswer(ans, passages, len(history)), false)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
		return
	}

	// Streaming: the response starts with the first event, so an error before it (invalid filter, the
	// query could not be embedded) is still an ordinary JSON error with its status; later errors arrive as
	// an "error" event.
	sse := &eventStream{w: w, rc: http.NewResponseController(w)}
	var passages []rag.Source
	var partial strings.Builder // the answer so far, kept when the client stops it
	_, err = s.deps.Answers.Ask(r.Context(), principalOf(r), ask, func(ev rag.AnswerEvent) error {
		switch ev.Type {
		case rag.AnswerSources:
			passages = ev.Sources
			noteSources(r, ev.Sources)
			return sse.send("sources", map[string]any{"sources": rag.ViewSources(ev.Sources)})
		case rag.AnswerDelta:
			partial.WriteString(ev.Delta)
			return sse.send("delta", map[string]string{"text": ev.Delta})
		case rag.AnswerDone:
			out, err := s.saved(r.Context(), principalOf(r), conv, req.Question, rag.ViewAnswer(ev.Answer, passages, len(history)), false)
			if err != nil {
				return err
			}
			return sse.send("done", out)
		}
		return nil
	})
	if err == nil {
		return
	}
	if sse.broken || r.Context().Err() != nil {
		// The client went away or stopped the answer: what it was shown stays in the conversation.
		if conv != nil {
			stopped := rag.AnswerView{Answer: partial.String(), Question: req.Question, Sources: rag.ViewSources(passages),
				Passages: rag.ViewSources(passages)}
			if _, err := s.saved(context.WithoutCancel(r.Context()), principalOf(r), conv, req.Question, stopped, true); err != nil {
				s.logFailure(r, http.StatusInternalServerError, err)
			}
		}
		return
	}
	if !sse.started {
		s.writeError(w, r, err)
		return
	}
	body := errorBodyOf(err)
	s.logFailure(r, rag.HTTPStatus(body.Error), err)
	_ = sse.send("error", body)
}

// saved saves the exchange in the request's conversation, when it names one, and returns the answer as
// /api/chat returns it.
func (s *Server) saved(ctx context.Context, p rag.Principal, conv *chatConversation, question string, view rag.AnswerView, stopped bool) (chatAnswer, error) {
	out := chatAnswer{AnswerView: view}
	if conv == nil {
		return out, nil
	}
	ids, err := s.saveExchange(ctx, p, conv, question, view, stopped)
	if err != nil {
		return out, err
	}
	out.ConversationID, out.MessageIDs = conv.c.ID, ids
	return out, nil
}

// eventStream writes server-sent events, starting the response on the first one.
type eventStream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	broken  bool // a write failed: the client is gone
}

func (e *eventStream) send(event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", event, err)
	}
	// JSON has no raw newlines, so one data line per event.
	if err := e.write(fmt.Sprintf("event: %s\ndata: %s\n\n", event, b)); err != nil {
		return fmt.Errorf("%s event: %w", event, err)
	}
	return nil
}

// write writes one event's frame and flushes it, starting the response first.
func (e *eventStream) write(frame string) error {
	if !e.started {
		h := e.w.Header()
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
		e.w.WriteHeader(http.StatusOK)
		e.started = true
	}
	if _, err := io.WriteString(e.w, frame); err != nil {
		e.broken = true
		return fmt.Errorf("write: %w", err)
	}
	if err := e.rc.Flush(); err != nil {
		e.broken = true
		return fmt.Errorf("flush: %w", err)
	}
	return nil
}
