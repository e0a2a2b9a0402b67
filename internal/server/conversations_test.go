package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// TestConversations: the conversations API per API key (principal) — create, list, read, rename, delete,
// each limit at its boundary, another key's conversation is not found — and /api/chat appending to a
// conversation, streamed or not, with the conversation as the history, replacing from a message, and
// refusing an exchange that does not fit before answering.
func TestConversations(t *testing.T) {
	b := setup(t, func(c *Settings) { c.APIKeys = []string{keyA, keyB} })
	b.ingestFile(t, renderDoc, nil)
	asA := map[string]string{"Authorization": "Bearer " + keyA}
	asB := map[string]string{"Authorization": "Bearer " + keyB}
	create := func(t *testing.T, headers map[string]string, body map[string]any) rag.Conversation {
		t.Helper()
		r, ctype := jsonBody(body)(t)
		resp, out := b.do(t, request{method: "POST", path: "/api/conversations", ctype: ctype, body: r, headers: headers})
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create: %d %s", resp.StatusCode, trim(out))
		}
		return decode[rag.Conversation](t, out)
	}
	get := func(t *testing.T, id string) rag.Conversation {
		t.Helper()
		resp, out := b.do(t, request{method: "GET", path: "/api/conversations/" + id, headers: asA})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("get: %d %s", resp.StatusCode, trim(out))
		}
		return decode[rag.Conversation](t, out)
	}
	mine := create(t, asA, map[string]any{"collections": []string{"react"}})
	theirs := create(t, asB, map[string]any{"title": "B's"})
	title200, title201 := strings.Repeat("가", rag.MaxConversationTitle), strings.Repeat("가", rag.MaxConversationTitle+1)

	b.run(t, []scenario{
		{name: "ListOnlyMine", method: "GET", path: "/api/conversations", headers: asA, status: 200,
			contains: []string{mine.ID, `"collections":["react"]`}, notContains: []string{theirs.ID, `"principal"`}},
		{name: "ErrReadOthers", method: "GET", path: "/api/conversations/" + theirs.ID, headers: asA, status: 404, code: rag.CodeNotFound},
		{name: "ErrRenameOthers", method: "PATCH", path: "/api/conversations/" + theirs.ID, headers: asA, status: 404, code: rag.CodeNotFound,
			body: jsonBody(map[string]any{"title": "mine"})},
		{name: "ErrDeleteOthers", method: "DELETE", path: "/api/conversations/" + theirs.ID, headers: asA, status: 404, code: rag.CodeNotFound},
		{name: "ErrChatInOthers", method: "POST", path: "/api/chat", headers: asA, status: 404, code: rag.CodeNotFound,
			body: jsonBody(map[string]any{"question": "렌더링", "conversation_id": theirs.ID})},
		{name: "StillTheirs", method: "GET", path: "/api/conversations/" + theirs.ID, headers: asB, status: 200,
			contains: []string{`"title":"B's"`, `"message_count":0`}},
		{name: "ErrNoKey", method: "GET", path: "/api/conversations", status: 401, code: rag.CodeUnauthorized},
		{name: "Title200", method: "POST", path: "/api/conversations", headers: asA, status: 201, body: jsonBody(map[string]any{"title": title200})},
		{name: "ErrTitle201", method: "POST", path: "/api/conversations", headers: asA, status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"title": title201})},
		{name: "RenameTitle200", method: "PATCH", path: "/api/conversations/" + mine.ID, headers: asA, status: 200,
			body: jsonBody(map[string]any{"title": title200}), contains: []string{title200}},
		{name: "ErrRenameTitle201", method: "PATCH", path: "/api/conversations/" + mine.ID, headers: asA, status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"title": title201})},
		{name: "Rename", method: "PATCH", path: "/api/conversations/" + mine.ID, headers: asA, status: 200,
			body: jsonBody(map[string]any{"title": "렌더링 질문"}), contains: []string{`"title":"렌더링 질문"`, `"collections":["react"]`}},
		{name: "ErrCollections21", method: "PATCH", path: "/api/conversations/" + mine.ID, headers: asA, status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"collections": make([]string, rag.MaxConversationCollections+1)})},
		{name: "Collections20", method: "PATCH", path: "/api/conversations/" + theirs.ID, headers: asB, status: 200,
			body: jsonBody(map[string]any{"collections": make([]string, rag.MaxConversationCollections)})},
		{name: "Documents100", method: "POST", path: "/api/conversations", headers: asB, status: 201,
			body: jsonBody(map[string]any{"document_ids": make([]string, rag.MaxConversationDocuments)})},
		{name: "ErrDocuments101", method: "POST", path: "/api/conversations", headers: asB, status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"document_ids": make([]string, rag.MaxConversationDocuments+1)})},
		{name: "Body16KB", method: "POST", path: "/api/conversations", headers: asB, status: 201,
			body: jsonBody(scopeBody(t, MaxConversationJSON))},
		{name: "ErrBody16KBPlus1", method: "POST", path: "/api/conversations", headers: asB, status: 413, code: rag.CodePayloadTooLarge,
			body: jsonBody(scopeBody(t, MaxConversationJSON+1))},
		{name: "Limit1000", method: "GET", path: "/api/conversations?limit=1000", headers: asA, status: 200},
		{name: "ErrLimit0", method: "GET", path: "/api/conversations?limit=0", headers: asA, status: 400, code: rag.CodeInvalid},
		{name: "ErrLimit1001", method: "GET", path: "/api/conversations?limit=1001", headers: asA, status: 400, code: rag.CodeInvalid},
		{name: "Limit1", method: "GET", path: "/api/conversations?limit=1", headers: asA, status: 200,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				if n := len(decode[struct{ Conversations []rag.Conversation }](t, body).Conversations); n != 1 {
					t.Fatalf("listed %d, want 1", n)
				}
			}},
		{name: "ErrUnknown", method: "GET", path: "/api/conversations/nope", headers: asA, status: 404, code: rag.CodeNotFound},
		{name: "ErrReplaceWithoutConversation", method: "POST", path: "/api/chat", headers: asA, status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"question": "렌더링", "replace_from": "x"})},
		{name: "ErrReplaceUnknown", method: "POST", path: "/api/chat", headers: asA, status: 404, code: rag.CodeNotFound,
			body: jsonBody(map[string]any{"question": "렌더링", "conversation_id": mine.ID, "replace_from": "x"})},
	})

	// A question answered without streaming, then one streamed: both exchanges are appended with their
	// sources and search_info, and the answer names the conversation and the two messages.
	const q1, q2 = "컴포넌트 렌더링이 일어나는 이유는 무엇인가요?", "커밋 단계에서는 무엇을 하나요?"
	r, ctype := jsonBody(map[string]any{"question": q1, "conversation_id": mine.ID})(t)
	resp, body := b.do(t, request{method: "POST", path: "/api/chat", ctype: ctype, body: r, headers: asA})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat: %d %s", resp.StatusCode, trim(body))
	}
	first := decode[chatAnswer](t, body)
	if first.ConversationID != mine.ID || len(first.MessageIDs) != 2 || len(first.Sources) == 0 {
		t.Fatalf("answer names conversation %q, messages %v, %d sources", first.ConversationID, first.MessageIDs, len(first.Sources))
	}
	r, ctype = jsonBody(map[string]any{"question": q2, "conversation_id": mine.ID, "stream": true})(t)
	resp, body = b.do(t, request{method: "POST", path: "/api/chat", ctype: ctype, body: r, headers: asA})
	events := readEvents(t, strings.NewReader(string(body)))
	if resp.StatusCode != http.StatusOK || len(events) == 0 || events[len(events)-1].name != "done" {
		t.Fatalf("stream: %d %v", resp.StatusCode, names(events))
	}
	second := decode[chatAnswer](t, events[len(events)-1].data)
	if second.ConversationID != mine.ID || len(second.MessageIDs) != 2 {
		t.Fatalf("done event names conversation %q, messages %v", second.ConversationID, second.MessageIDs)
	}
	// Without history in the request, the conversation's turns were the history.
	if second.SearchInfo.HistoryTurns != 2 {
		t.Errorf("second question used %d history turns, want the conversation's 2", second.SearchInfo.HistoryTurns)
	}
	c := get(t, mine.ID)
	if c.Title != "렌더링 질문" || c.MessageCount != 4 || len(c.Messages) != 4 {
		t.Fatalf("conversation %q has %d messages", c.Title, c.MessageCount)
	}
	if c.Messages[0].Content != q1 || c.Messages[2].Content != q2 || c.Messages[3].ID != second.MessageIDs[1] {
		t.Fatalf("messages %q, %q", c.Messages[0].Content, c.Messages[2].Content)
	}
	a := c.Messages[1]
	var sources []rag.SourceView
	if err := json.Unmarshal(a.Sources, &sources); err != nil || len(sources) != len(first.Sources) || sources[0].DocumentID == "" {
		t.Fatalf("stored sources %s: %v", trim(a.Sources), err)
	}
	var info rag.SearchInfo
	if err := json.Unmarshal(a.SearchInfo, &info); err != nil || info.ChunksRetrieved == 0 {
		t.Fatalf("stored search_info %s: %v", trim(a.SearchInfo), err)
	}
	var details answerDetails
	if err := json.Unmarshal(a.Details, &details); err != nil || details.Generator != "extractive" || details.Citations.Valid != first.Citations.Valid {
		t.Fatalf("stored details %s: %v", trim(a.Details), err)
	}
	if a.Content != first.Answer || a.Role != rag.RoleAssistant {
		t.Fatalf("stored answer %q, want %q", a.Content, first.Answer)
	}

	// Regenerating the last answer (replace_from its question) keeps four messages.
	r, ctype = jsonBody(map[string]any{"question": q2, "conversation_id": mine.ID, "replace_from": second.MessageIDs[0]})(t)
	if resp, body = b.do(t, request{method: "POST", path: "/api/chat", ctype: ctype, body: r, headers: asA}); resp.StatusCode != http.StatusOK {
		t.Fatalf("regenerate: %d %s", resp.StatusCode, trim(body))
	}
	if c := get(t, mine.ID); c.MessageCount != 4 || c.Messages[2].ID == second.MessageIDs[0] {
		t.Fatalf("after regenerating: %d messages, question %s", c.MessageCount, c.Messages[2].ID)
	}

	// An untitled conversation is named after its first question.
	untitled := create(t, asA, map[string]any{})
	r, ctype = jsonBody(map[string]any{"question": q1, "conversation_id": untitled.ID})(t)
	if resp, body = b.do(t, request{method: "POST", path: "/api/chat", ctype: ctype, body: r, headers: asA}); resp.StatusCode != http.StatusOK {
		t.Fatalf("chat: %d %s", resp.StatusCode, trim(body))
	}
	if c := get(t, untitled.ID); c.Title != rag.ConversationTitle(q1) {
		t.Fatalf("title %q, want %q", c.Title, rag.ConversationTitle(q1))
	}

	// At the message limit: an exchange fits while two messages are free, not after.
	full := create(t, asA, map[string]any{"title": "full"})
	var fill []*rag.Message
	for range rag.MaxConversationMessages - 2 {
		fill = append(fill, &rag.Message{Role: rag.RoleUser, Content: "filler"})
	}
	if err := b.store.AppendMessages(t.Context(), keyPrincipal(keyA), full.ID, "", fill); err != nil {
		t.Fatal(err)
	}
	b.run(t, []scenario{
		{name: "Messages200", method: "POST", path: "/api/chat", headers: asA, status: 200,
			body: jsonBody(map[string]any{"question": q1, "conversation_id": full.ID, "history": []rag.Turn{}})},
		{name: "ErrMessages201", method: "POST", path: "/api/chat", headers: asA, status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"question": q1, "conversation_id": full.ID})},
		{name: "FullUnchanged", method: "GET", path: "/api/conversations/" + full.ID, headers: asA, status: 200,
			contains: []string{`"message_count":200`}},
		{name: "Delete", method: "DELETE", path: "/api/conversations/" + full.ID, headers: asA, status: 204},
		{name: "ErrDeleted", method: "GET", path: "/api/conversations/" + full.ID, headers: asA, status: 404, code: rag.CodeNotFound},
	})
}

// scopeBody returns a conversation body of exactly n bytes: rag.MaxConversationDocuments document IDs padded
// to fit.
func scopeBody(t *testing.T, n int) string {
	t.Helper()
	ids := make([]string, rag.MaxConversationDocuments)
	body := func() string {
		b, err := json.Marshal(map[string]any{"document_ids": ids})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	per := (n - len(body())) / len(ids)
	for i := range ids {
		ids[i] = strings.Repeat("d", per)
	}
	ids[0] += strings.Repeat("d", n-len(body()))
	if got := len(body()); got != n {
		t.Fatalf("body of %d bytes, want %d", got, n)
	}
	return body()
}

// stalling answers with one passage and a first piece of text, then waits until the client goes away.
type stalling struct{ started chan struct{} }

func (a stalling) Ask(ctx context.Context, _ rag.Principal, req rag.AskRequest, emit func(rag.AnswerEvent) error) (*rag.Answer, error) {
	src := rag.Source{N: 1, Hit: rag.Hit{Chunk: rag.Chunk{ID: 7, DocumentID: "d1", Text: "the passage"}}}
	if err := emit(rag.AnswerEvent{Type: rag.AnswerSources, Sources: []rag.Source{src}}); err != nil {
		return nil, err
	}
	if err := emit(rag.AnswerEvent{Type: rag.AnswerDelta, Delta: "the first part"}); err != nil {
		return nil, err
	}
	close(a.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestConversationStopped: a client that stops a streamed answer (closes the connection) leaves the
// question and the part of the answer it was shown in the conversation, marked stopped.
func TestConversationStopped(t *testing.T) {
	b := setup(t, nil)
	started := make(chan struct{})
	b.deps.Answers = stalling{started: started}
	b.serve(t)
	c := &rag.Conversation{Principal: rag.LocalPrincipal.ID}
	if err := b.store.CreateConversation(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	r, ctype := jsonBody(map[string]any{"question": "what is it?", "conversation_id": c.ID, "stream": true})(t)
	req, err := http.NewRequestWithContext(ctx, "POST", b.ts.URL+"/api/chat", r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	resp, err := b.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	resp.Body.Close()
	var got *rag.Conversation
	for range 100 {
		if got, err = b.store.GetConversation(t.Context(), rag.LocalPrincipal.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		if got.MessageCount == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got.MessageCount != 2 {
		t.Fatalf("after the client stopped, the conversation holds %d messages, want 2", got.MessageCount)
	}
	q, a := got.Messages[0], got.Messages[1]
	if q.Content != "what is it?" || a.Content != "the first part" || !a.Stopped || q.Stopped {
		t.Fatalf("kept %+v and %+v", q, a)
	}
	if !strings.Contains(string(a.Sources), `"chunk_id":7`) {
		t.Fatalf("the stopped answer's sources %s", a.Sources)
	}
}
