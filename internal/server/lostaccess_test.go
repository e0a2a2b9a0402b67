package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/access"
	"github.com/ragd/ragd/internal/rag"
)

// TestSavedPassagesLostAccess: a conversation's answers and a principal's ratings keep the passages they
// showed; once the principal loses access to their document (here: taken out of the owning team), reading
// them back leaves those passages out and withholds the answer's text, and a follow-up question does not
// get it as history. Given access again, they show whole: the filter is on read, nothing stored changes.
func TestSavedPassagesLostAccess(t *testing.T) {
	b := setupUsers(t)
	admin := bearer(testAdminKey)
	const secret = "The vault code rotates every ninety days under the Larkspur protocol."
	b.run(t, []scenario{
		{name: "Team", method: "POST", path: "/api/admin/teams", headers: admin, body: jsonBody(map[string]any{"name": "eng"}), status: 201},
		{name: "User", method: "POST", path: "/api/admin/users", headers: admin, body: jsonBody(map[string]any{"name": "mina", "team": "eng"}), status: 201},
		{name: "Collection", method: "POST", path: "/api/collections", headers: admin, body: jsonBody(map[string]any{"name": "vault", "owner": "team:eng"}), status: 201},
	})
	resp, body := b.do(t, request{method: "POST", path: "/api/documents", headers: admin, ctype: "application/json",
		body: strings.NewReader(`{"title": "Vault", "text": "# Vault\n\n` + secret + `", "collection": "vault"}`)})
	if resp.StatusCode >= 300 {
		t.Fatalf("upload: %d %s", resp.StatusCode, body)
	}
	b.deps.Enqueuer.(*inlineJobs).wait()
	key, _, err := access.CreateKey(t.Context(), b.store, "mina", []rag.Scope{rag.ScopeRead}, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	mina := bearer(key)

	resp, body = b.do(t, request{method: "POST", path: "/api/conversations", headers: mina, ctype: "application/json", body: strings.NewReader(`{}`)})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("conversation: %d %s", resp.StatusCode, body)
	}
	conv := decode[rag.Conversation](t, body)
	resp, body = b.do(t, request{method: "POST", path: "/api/chat", headers: mina, ctype: "application/json",
		body: strings.NewReader(`{"question": "how often does the vault code rotate?", "conversation_id": "` + conv.ID + `"}`)})
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Larkspur") {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	var answer struct {
		Answer  string `json:"answer"`
		Sources []struct {
			ChunkID    int64  `json:"chunk_id"`
			DocumentID string `json:"document_id"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || len(answer.Sources) == 0 {
		t.Fatalf("chat answer %s: %v", body, err)
	}
	docID := answer.Sources[0].DocumentID
	b.run(t, []scenario{
		{name: "Rate", method: "POST", path: "/api/feedback", headers: mina, status: 201, body: jsonBody(map[string]any{
			"target": "answer", "rating": 1, "question": "how often does the vault code rotate?", "answer": answer.Answer,
			"chunk_ids": []int64{answer.Sources[0].ChunkID}})},
		{name: "ConversationWhole", method: "GET", path: "/api/conversations/" + conv.ID, headers: mina, status: 200,
			contains: []string{"Larkspur", docID}, notContains: []string{`"withheld"`}},
		{name: "FeedbackWhole", method: "GET", path: "/api/feedback", headers: mina, status: 200,
			contains: []string{"Larkspur", docID}, notContains: []string{`"withheld"`}},
		{name: "RemoveFromTeam", method: "DELETE", path: "/api/admin/teams/eng/members/mina", headers: admin, status: 204},
		{name: "ConversationWithheld", method: "GET", path: "/api/conversations/" + conv.ID, headers: mina, status: 200,
			contains: []string{`"withheld":true`, "how often does the vault code rotate?"}, notContains: []string{"Larkspur", "ninety", docID}},
		{name: "FeedbackWithheld", method: "GET", path: "/api/feedback", headers: mina, status: 200,
			contains: []string{`"withheld":true`}, notContains: []string{"Larkspur", "ninety", docID}},
		// A follow-up in the same conversation: the withheld answer is not history, and nothing of the
		// document reaches the new answer.
		{name: "FollowUp", method: "POST", path: "/api/chat", headers: mina, status: 200,
			body:        jsonBody(map[string]any{"question": "and what is that protocol called?", "conversation_id": conv.ID}),
			notContains: []string{"Larkspur", "ninety", docID}},
		{name: "AdminSeesWhole", method: "GET", path: "/api/feedback?all=true", headers: admin, status: 200, contains: []string{"Larkspur"}},
		{name: "BackInTeam", method: "PUT", path: "/api/admin/teams/eng/members/mina", headers: admin, body: jsonBody(map[string]any{"role": "member"}), status: 200},
		{name: "ConversationWholeAgain", method: "GET", path: "/api/conversations/" + conv.ID, headers: mina, status: 200,
			contains: []string{"Larkspur", docID}},
	})
}
