package server

import (
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// TestDeleteAndRestore deletes a document through the API (hidden from search, lookups and listings at
// once, listed with ?deleted=true with its purge time), restores it (re-indexed, searchable again, same
// version), and refuses a restore once a new upload has taken its file name.
func TestDeleteAndRestore(t *testing.T) {
	b := setup(t, func(s *Settings) { s.PurgeAfter = 168 * time.Hour })
	docs := b.upload(t, []file{{"tides.md", []byte("# Tides\n\nThe lighthouse ledger records forty-two spring tides.")}}, nil)
	id := docs[0].ID
	if d := b.waitDocument(t, id); d.Version != 1 {
		t.Fatalf("%+v", d)
	}
	search := jsonBody(map[string]any{"query": "lighthouse ledger spring tides"})
	b.run(t, []scenario{
		{name: "Delete", method: "DELETE", path: "/api/documents/" + id, status: 204},
		{name: "ErrGetDeleted", method: "GET", path: "/api/documents/" + id, status: 404, code: rag.CodeNotFound},
		{name: "ErrChunksDeleted", method: "GET", path: "/api/documents/" + id + "/chunks", status: 404, code: rag.CodeNotFound},
		{name: "ListHidesIt", method: "GET", path: "/api/documents", status: 200, contains: []string{`"total":0`}},
		{name: "SearchHidesIt", method: "POST", path: "/api/search", body: search, status: 200, contains: []string{`"hits":[]`}},
		{name: "ChatHidesIt", method: "POST", path: "/api/chat", body: jsonBody(map[string]any{"question": "what does the lighthouse ledger record?"}),
			status: 200, notContains: []string{id, "forty-two"}},
		{name: "ListDeleted", method: "GET", path: "/api/documents?deleted=true", status: 200,
			contains: []string{`"total":1`, id, `"deleted_at":"`, `"purge_at":"`}},
		{name: "ErrDeletedNotBool", method: "GET", path: "/api/documents?deleted=maybe", status: 400, code: rag.CodeInvalid},
		{name: "ErrRestoreUnknown", method: "POST", path: "/api/documents/nope/restore", status: 404, code: rag.CodeNotFound},
		{name: "Restore", method: "POST", path: "/api/documents/" + id + "/restore", status: 202,
			contains: []string{`"outcome":"queued"`, `"status":"queued"`}, notContains: []string{`"deleted_at"`}},
		{name: "ErrRestoreLive", method: "POST", path: "/api/documents/" + id + "/restore", status: 404, code: rag.CodeNotFound},
	})
	if d := b.waitDocument(t, id); d.Version != 1 || d.Status != rag.StatusReady || d.ChunkCount != 1 || len(d.Versions) != 1 {
		t.Fatalf("restored: %+v", d)
	}
	b.run(t, []scenario{
		{name: "SearchFindsRestored", method: "POST", path: "/api/search", body: search, status: 200, contains: []string{id}},
		{name: "DeleteAgain", method: "DELETE", path: "/api/documents/" + id, status: 204},
	})
	again := b.upload(t, []file{{"tides.md", []byte("# Tides\n\nA new ledger.")}}, nil)
	if again[0].ID == id {
		t.Fatalf("the upload revived the deleted document instead of making a new one")
	}
	b.waitDocument(t, again[0].ID)
	b.run(t, []scenario{
		{name: "ErrRestoreTakenName", method: "POST", path: "/api/documents/" + id + "/restore", status: 409, code: rag.CodeConflict},
	})
}
