package server

import (
	"encoding/json"
	"fmt"
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
	K          int        `json:"k"`
	// Stream asks for server-sent events, like "Accept: text/event-stream".
	Stream bool `json:"stream"`
}

// sourceView is one passage of an answer as the API shows it: where it comes from, its text, and every
// score that ranked it. Similarity is the vector (cosine) similarity.
type sourceView struct {
	N            int     `json:"n"`
	ChunkID      int64   `json:"chunk_id"`
	DocumentID   string  `json:"document_id"`
	Title        string  `json:"title"`
	Source       string  `json:"source"`
	MediaType    string  `json:"media_type"`
	PageStart    int     `json:"page_start"`
	PageEnd      int     `json:"page_end"`
	Section      string  `json:"section"`
	Passage      string  `json:"passage"`
	Similarity   float64 `json:"similarity"`
	Score        float64 `json:"score"`
	FusedScore   float64 `json:"fused_score"`
	VectorScore  float64 `json:"vector_score"`
	VectorRank   int     `json:"vector_rank"`
	KeywordScore float64 `json:"keyword_score"`
	KeywordRank  int     `json:"keyword_rank"`
}

func viewSource(s rag.Source) sourceView {
	h := s.Hit
	return sourceView{
		N: s.N, ChunkID: h.ID, DocumentID: h.DocumentID, Title: h.Title, Source: h.Source, MediaType: h.MediaType,
		PageStart: h.PageStart, PageEnd: h.PageEnd, Section: h.Section, Passage: h.Text,
		Similarity: h.VectorScore, Score: h.Score, FusedScore: h.FusedScore,
		VectorScore: h.VectorScore, VectorRank: h.VectorRank, KeywordScore: h.KeywordScore, KeywordRank: h.KeywordRank,
	}
}

func viewSources(list []rag.Source) []sourceView {
	out := make([]sourceView, len(list))
	for i, s := range list {
		out[i] = viewSource(s)
	}
	return out
}

// searchInfo is the retrieval and timing summary of an answer (the debug panel's latency breakdown).
type searchInfo struct {
	ChunksRetrieved   int     `json:"chunks_retrieved"`
	LatencyMS         float64 `json:"latency_ms"`
	RetrieveMS        float64 `json:"retrieve_ms"`
	GenerateMS        float64 `json:"generate_ms"`
	EmbedMS           float64 `json:"embed_ms"`
	VectorMS          float64 `json:"vector_ms"`
	KeywordMS         float64 `json:"keyword_ms"`
	VectorCandidates  int     `json:"vector_candidates"`
	KeywordCandidates int     `json:"keyword_candidates"`
	Truncated         bool    `json:"truncated"`
	HistoryTurns      int     `json:"history_turns"`
	// Space is the embedding space searched; "" when the search was keyword-only (during a re-embed whose
	// old space cannot be searched).
	Space string `json:"space"`
}

// chatResponse is the body of POST /api/chat (and the data of the SSE "done" event). Sources are the
// passages the answer cites; Passages are all passages given to the generator, numbered as cited.
type chatResponse struct {
	Answer    string            `json:"answer"`
	Question  string            `json:"question"`
	Truncated bool              `json:"truncated"`
	Language  string            `json:"language"`
	NotFound  bool              `json:"not_found"`
	Generator string            `json:"generator"`
	Sources   []sourceView      `json:"sources"`
	Passages  []sourceView      `json:"passages"`
	Citations rag.CitationCheck `json:"citations"`
	// Weak are the sentences counted in Citations.WeaklySupported, for the UI to mark.
	Weak       []weakView `json:"weak"`
	SearchInfo searchInfo `json:"search_info"`
}

// weakView is a weakly supported sentence of an answer: Answer[Start:End] by UTF-8 byte offsets, also
// given as Text, with the passages it cites and the share of its terms found in them.
type weakView struct {
	Start     int     `json:"start"`
	End       int     `json:"end"`
	Text      string  `json:"text"`
	Citations []int   `json:"citations"`
	Support   float64 `json:"support"`
}

func viewAnswer(ans *rag.Answer, passages []rag.Source, historyTurns int) chatResponse {
	res := chatResponse{
		Answer: ans.Text, Question: ans.Question, Truncated: ans.Truncated, Language: ans.Language,
		NotFound: ans.NotFound, Generator: ans.Generator, Sources: viewSources(ans.Sources),
		Passages: viewSources(passages), Citations: ans.Citations, Weak: []weakView{},
		SearchInfo: searchInfo{
			ChunksRetrieved: len(passages), LatencyMS: ans.TotalMS, RetrieveMS: ans.RetrieveMS,
			GenerateMS: ans.GenerateMS, Truncated: ans.Truncated, HistoryTurns: historyTurns,
		},
	}
	for _, w := range ans.Weak {
		if w.Start < 0 || w.End > len(ans.Text) || w.Start > w.End {
			continue
		}
		res.Weak = append(res.Weak, weakView{Start: w.Start, End: w.End, Text: ans.Text[w.Start:w.End],
			Citations: w.Citations, Support: w.Support})
	}
	if r := ans.Retrieval; r != nil {
		res.SearchInfo.EmbedMS, res.SearchInfo.VectorMS, res.SearchInfo.KeywordMS = r.EmbedMS, r.VectorMS, r.KeywordMS
		res.SearchInfo.VectorCandidates, res.SearchInfo.KeywordCandidates = r.VectorCandidates, r.KeywordCandidates
		res.SearchInfo.Space = r.Space
	}
	return res
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
		s.writeError(w, r, rag.Errorf(rag.CodeQuestionRequired, "a question is required"))
		return
	}
	if req.K < 0 || req.K > 20 {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "k must be between 1 and 20"))
		return
	}
	f := requestFilter(req.Filters, req.Collection)
	if err := f.Check(); err != nil {
		s.writeError(w, r, err)
		return
	}
	history := recentTurns(req.History, rag.MaxHistoryTurns)
	ask := rag.AskRequest{Question: req.Question, History: history, Filter: f, K: req.K}

	stream := req.Stream || strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	if !stream {
		var passages []rag.Source
		ans, err := s.deps.Answers.Ask(r.Context(), principalOf(r), ask, func(ev rag.AnswerEvent) error {
			if ev.Type == rag.AnswerSources {
				passages = ev.Sources
			}
			return nil
		})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, viewAnswer(ans, passages, len(history)))
		return
	}

	// Streaming: the response starts with the first event, so an error before it (invalid filter, the
	// query could not be embedded) is still an ordinary JSON error with its status; later errors arrive as
	// an "error" event.
	sse := &eventStream{w: w, rc: http.NewResponseController(w)}
	var passages []rag.Source
	_, err := s.deps.Answers.Ask(r.Context(), principalOf(r), ask, func(ev rag.AnswerEvent) error {
		switch ev.Type {
		case rag.AnswerSources:
			passages = ev.Sources
			return sse.send("sources", map[string]any{"sources": viewSources(ev.Sources)})
		case rag.AnswerDelta:
			return sse.send("delta", map[string]string{"text": ev.Delta})
		case rag.AnswerDone:
			return sse.send("done", viewAnswer(ev.Answer, passages, len(history)))
		}
		return nil
	})
	if err == nil {
		return
	}
	if !sse.started {
		s.writeError(w, r, err)
		return
	}
	if sse.broken || r.Context().Err() != nil {
		return // the client went away
	}
	body := errorBodyOf(err)
	s.logFailure(r, rag.HTTPStatus(body.Error), err)
	_ = sse.send("error", body)
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
	if !e.started {
		h := e.w.Header()
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
		e.w.WriteHeader(http.StatusOK)
		e.started = true
	}
	// JSON has no raw newlines, so one data line per event.
	if _, err := fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", event, b); err != nil {
		e.broken = true
		return fmt.Errorf("write %s event: %w", event, err)
	}
	if err := e.rc.Flush(); err != nil {
		e.broken = true
		return fmt.Errorf("flush %s event: %w", event, err)
	}
	return nil
}
