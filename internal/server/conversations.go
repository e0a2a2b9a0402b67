package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/ragd/ragd/internal/rag"
)

// MaxConversationJSON is the largest body of a conversation's create or update (16 KB: a title of
// rag.MaxConversationTitle characters and rag.MaxConversationDocuments document IDs).
const MaxConversationJSON = 16 * 1024

// conversationBody is the body of POST /api/conversations.
type conversationBody struct {
	Title       string   `json:"title"`
	Collections []string `json:"collections"`
	DocumentIDs []string `json:"document_ids"`
}

func (s *Server) handleListConversations(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", 100, 1, rag.MaxConversationList)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	list, err := s.deps.Conversations.ListConversations(r.Context(), principalOf(r).ID, limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": list})
}

func (s *Server) handleCreateConversation(w http.ResponseWriter, r *http.Request) {
	var body conversationBody
	if err := decodeJSON(w, r, MaxConversationJSON, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	c := &rag.Conversation{Principal: principalOf(r).ID, Title: body.Title, Collections: body.Collections, DocumentIDs: body.DocumentIDs}
	if err := s.deps.Conversations.CreateConversation(r.Context(), c); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, c)
}

func (s *Server) handleGetConversation(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	c, err := s.deps.Conversations.GetConversation(r.Context(), p.ID, r.PathValue("id"))
	if err == nil {
		err = s.withholdLost(r.Context(), p, c.Messages)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func (s *Server) handleUpdateConversation(w http.ResponseWriter, r *http.Request) {
	var u rag.ConversationUpdate
	if err := decodeJSON(w, r, MaxConversationJSON, &u); err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.deps.Conversations.UpdateConversation(r.Context(), principalOf(r).ID, r.PathValue("id"), u)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func (s *Server) handleDeleteConversation(w http.ResponseWriter, r *http.Request) {
	if err := s.deps.Conversations.DeleteConversation(r.Context(), principalOf(r).ID, r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// chatConversation is the conversation a chat request appends to: checked before the question is asked,
// so that a missing conversation or a full one is refused without spending an answer.
type chatConversation struct {
	c           *rag.Conversation
	replaceFrom string
	kept        []*rag.Message // the messages before replaceFrom (all without it)
}

// openConversation reads the conversation a chat request names and checks that an exchange fits in it.
func (s *Server) openConversation(ctx context.Context, p rag.Principal, id, replaceFrom string) (*chatConversation, error) {
	c, err := s.deps.Conversations.GetConversation(ctx, p.ID, id)
	if err == nil {
		// The history given to the generator is what the principal may see now.
		err = s.withholdLost(ctx, p, c.Messages)
	}
	if err != nil {
		return nil, err
	}
	kept := c.Messages
	if replaceFrom != "" {
		i := slices.IndexFunc(c.Messages, func(m *rag.Message) bool { return m.ID == replaceFrom })
		if i < 0 {
			return nil, rag.Errorf(rag.CodeNotFound, "replace_from: conversation %s has no message %q", id, replaceFrom)
		}
		kept = c.Messages[:i]
	}
	if err := rag.CheckMessages(nil, len(kept)+2); err != nil {
		return nil, err
	}
	return &chatConversation{c: c, replaceFrom: replaceFrom, kept: kept}, nil
}

// history returns the conversation's last turns as the answer service takes them, an assistant turn with
// the documents its sources came from.
func (cc *chatConversation) history(n int) []rag.Turn {
	var out []rag.Turn
	for _, m := range cc.kept {
		t := rag.Turn{Role: m.Role, Content: m.Content}
		if m.Role == rag.RoleAssistant && len(m.Sources) > 0 {
			var sources []struct {
				DocumentID string `json:"document_id"`
			}
			if json.Unmarshal(m.Sources, &sources) == nil {
				for _, src := range sources {
					if src.DocumentID != "" && !slices.Contains(t.DocumentIDs, src.DocumentID) {
						t.DocumentIDs = append(t.DocumentIDs, src.DocumentID)
					}
				}
			}
		}
		out = append(out, t)
	}
	return recentTurns(out, n)
}

// withholdLost leaves out of saved answers the sources and passages of documents p can no longer read
// (access taken away or the document deleted since the answer), and replaces such an answer's text, which
// may quote them, with rag.WithheldAnswer. Filtered on read: the stored messages are unchanged, and show
// whole again if access comes back.
func (s *Server) withholdLost(ctx context.Context, p rag.Principal, msgs []*rag.Message) error {
	type ref struct {
		DocumentID string `json:"document_id"`
	}
	var ids []string
	parsed := make(map[*rag.Message][2][]json.RawMessage)
	for _, m := range msgs {
		var lists [2][]json.RawMessage
		for i, raw := range []json.RawMessage{m.Sources, m.Passages} {
			if len(raw) == 0 || json.Unmarshal(raw, &lists[i]) != nil {
				continue
			}
			for _, item := range lists[i] {
				var r ref
				if json.Unmarshal(item, &r) == nil && r.DocumentID != "" {
					ids = append(ids, r.DocumentID)
				}
			}
		}
		parsed[m] = lists
	}
	readable, err := rag.ReadableDocuments(ctx, s.deps.Documents, p, ids)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		lists, lost := parsed[m], false
		for i := range lists {
			kept := lists[i][:0:0]
			for _, item := range lists[i] {
				var r ref
				if json.Unmarshal(item, &r) == nil && r.DocumentID != "" && !readable[r.DocumentID] {
					lost = true
					continue
				}
				kept = append(kept, item)
			}
			lists[i] = kept
		}
		if !lost {
			continue
		}
		if len(m.Sources) > 0 {
			m.Sources, _ = json.Marshal(lists[0])
		}
		if len(m.Passages) > 0 {
			m.Passages, _ = json.Marshal(lists[1])
		}
		m.Content, m.Withheld = rag.WithheldAnswer, true
	}
	return nil
}

// answerDetails is what a conversation keeps of an answer besides its text, sources, passages and
// search_info: enough to show it again as it was shown.
type answerDetails struct {
	Citations rag.CitationCheck `json:"citations"`
	Weak      []rag.WeakView    `json:"weak"`
	Truncated bool              `json:"truncated"`
	Language  string            `json:"language"`
	Generator string            `json:"generator"`
}

// save appends the question and its answer (or the part of it that arrived before the client stopped
// it) to the conversation, naming an untitled conversation after its first question. It returns the IDs
// of the two messages.
func (s *Server) saveExchange(ctx context.Context, p rag.Principal, cc *chatConversation, question string, view rag.AnswerView, stopped bool) ([]string, error) {
	raw := func(v any) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	msgs := []*rag.Message{
		{Role: rag.RoleUser, Content: question},
		{Role: rag.RoleAssistant, Content: view.Answer, NotFound: view.NotFound, Stopped: stopped,
			Sources: raw(view.Sources), Passages: raw(view.Passages), SearchInfo: raw(view.SearchInfo),
			Details: raw(answerDetails{Citations: view.Citations, Weak: view.Weak, Truncated: view.Truncated,
				Language: view.Language, Generator: view.Generator})},
	}
	if err := s.deps.Conversations.AppendMessages(ctx, p.ID, cc.c.ID, cc.replaceFrom, msgs); err != nil {
		return nil, err
	}
	if cc.c.Title == "" {
		title := rag.ConversationTitle(question)
		if _, err := s.deps.Conversations.UpdateConversation(ctx, p.ID, cc.c.ID, rag.ConversationUpdate{Title: &title}); err != nil {
			return nil, err
		}
	}
	return []string{msgs[0].ID, msgs[1].ID}, nil
}
