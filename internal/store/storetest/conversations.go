package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// conversationStore returns the store's rag.ConversationStore; every store implements it.
func conversationStore(t *testing.T, s rag.Store) rag.ConversationStore {
	t.Helper()
	cs, ok := s.(rag.ConversationStore)
	if !ok {
		t.Fatalf("%T does not implement rag.ConversationStore", s)
	}
	return cs
}

func exchange(question, answer string) []*rag.Message {
	return []*rag.Message{
		{Role: rag.RoleUser, Content: question},
		{Role: rag.RoleAssistant, Content: answer, Sources: json.RawMessage(`[{"n":1,"title":"lease"}]`),
			SearchInfo: json.RawMessage(`{"chunks_retrieved":3}`), Details: json.RawMessage(`{"generator":"extractive"}`)},
	}
}

func testConversations(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("CreateAppendGet", func(t *testing.T) {
		cs := conversationStore(t, open(t))
		ctx := t.Context()
		c := &rag.Conversation{Principal: alice.ID, Title: "  deposit  ", Collections: []string{"lease"}}
		if err := cs.CreateConversation(ctx, c); err != nil {
			t.Fatal(err)
		}
		if c.ID == "" || c.Title != "deposit" || c.CreatedAt.IsZero() || c.DocumentIDs == nil {
			t.Fatalf("created %+v", c)
		}
		msgs := exchange("when is the deposit returned?", "In 30 days [1].")
		if err := cs.AppendMessages(ctx, alice.ID, c.ID, "", msgs); err != nil {
			t.Fatal(err)
		}
		if msgs[0].ID == "" || msgs[0].Seq != 1 || msgs[1].Seq != 2 {
			t.Fatalf("appended %+v %+v", msgs[0], msgs[1])
		}
		got, err := cs.GetConversation(ctx, alice.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.MessageCount != 2 || len(got.Messages) != 2 || got.UpdatedAt.Before(c.UpdatedAt) {
			t.Fatalf("got %+v", got)
		}
		a := got.Messages[1]
		if a.Role != rag.RoleAssistant || a.Content != "In 30 days [1]." || got.Messages[0].Role != rag.RoleUser {
			t.Fatalf("messages %+v %+v", got.Messages[0], a)
		}
		var sources []map[string]any
		if err := json.Unmarshal(a.Sources, &sources); err != nil || len(sources) != 1 || sources[0]["title"] != "lease" {
			t.Fatalf("sources %s: %v", a.Sources, err)
		}
		var info map[string]any
		if err := json.Unmarshal(a.SearchInfo, &info); err != nil || info["chunks_retrieved"] != 3.0 {
			t.Fatalf("search_info %s: %v", a.SearchInfo, err)
		}
		if !strings.Contains(string(a.Details), `"generator"`) {
			t.Fatalf("details %s", a.Details)
		}
		if got.Messages[0].Sources != nil || a.Passages != nil {
			t.Fatalf("absent JSON read back as %q, %q", got.Messages[0].Sources, a.Passages)
		}
		if len(got.Collections) != 1 || got.Collections[0] != "lease" {
			t.Fatalf("collections %v", got.Collections)
		}
	})
	t.Run("PerPrincipal", func(t *testing.T) {
		cs := conversationStore(t, open(t))
		ctx := t.Context()
		mine := &rag.Conversation{Principal: alice.ID, Title: "alice's"}
		theirs := &rag.Conversation{Principal: bob.ID, Title: "bob's"}
		for _, c := range []*rag.Conversation{mine, theirs} {
			if err := cs.CreateConversation(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		list, err := cs.ListConversations(ctx, alice.ID, 0)
		if err != nil || len(list) != 1 || list[0].ID != mine.ID {
			t.Fatalf("alice lists %v, %v; want only hers", list, err)
		}
		if _, err := cs.GetConversation(ctx, alice.ID, theirs.ID); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("alice reads bob's: %v, want ErrNotFound", err)
		}
		title := "mine now"
		if _, err := cs.UpdateConversation(ctx, alice.ID, theirs.ID, rag.ConversationUpdate{Title: &title}); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("alice renames bob's: %v, want ErrNotFound", err)
		}
		if err := cs.AppendMessages(ctx, alice.ID, theirs.ID, "", exchange("q", "a")); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("alice appends to bob's: %v, want ErrNotFound", err)
		}
		if err := cs.DeleteConversation(ctx, alice.ID, theirs.ID); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("alice deletes bob's: %v, want ErrNotFound", err)
		}
		if got, err := cs.GetConversation(ctx, bob.ID, theirs.ID); err != nil || got.Title != "bob's" || got.MessageCount != 0 {
			t.Fatalf("bob's conversation after alice's attempts: %+v, %v", got, err)
		}
	})
	t.Run("ListNewestFirst", func(t *testing.T) {
		cs := conversationStore(t, open(t))
		ctx := t.Context()
		var ids []string
		for _, title := range []string{"one", "two", "three"} {
			c := &rag.Conversation{Principal: alice.ID, Title: title}
			if err := cs.CreateConversation(ctx, c); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, c.ID)
		}
		// A new message makes the first conversation the most recent.
		if err := cs.AppendMessages(ctx, alice.ID, ids[0], "", exchange("q", "a")); err != nil {
			t.Fatal(err)
		}
		list, err := cs.ListConversations(ctx, alice.ID, 2)
		if err != nil || len(list) != 2 {
			t.Fatalf("listed %v, %v", list, err)
		}
		if list[0].ID != ids[0] || list[0].MessageCount != 2 || list[0].Messages != nil {
			t.Fatalf("first listed %+v, want %s with 2 messages and none attached", list[0], ids[0])
		}
	})
	t.Run("UpdateAndDelete", func(t *testing.T) {
		cs := conversationStore(t, open(t))
		ctx := t.Context()
		c := &rag.Conversation{Principal: alice.ID, Title: "old"}
		if err := cs.CreateConversation(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := cs.AppendMessages(ctx, alice.ID, c.ID, "", exchange("q", "a")); err != nil {
			t.Fatal(err)
		}
		title, colls := "new", []string{"a", "b"}
		got, err := cs.UpdateConversation(ctx, alice.ID, c.ID, rag.ConversationUpdate{Title: &title, Collections: &colls})
		if err != nil || got.Title != "new" || len(got.Collections) != 2 || got.MessageCount != 2 {
			t.Fatalf("updated %+v, %v", got, err)
		}
		// A nil field is kept.
		got, err = cs.UpdateConversation(ctx, alice.ID, c.ID, rag.ConversationUpdate{})
		if err != nil || got.Title != "new" || len(got.Collections) != 2 {
			t.Fatalf("empty update %+v, %v", got, err)
		}
		long := strings.Repeat("가", rag.MaxConversationTitle+1)
		if _, err := cs.UpdateConversation(ctx, alice.ID, c.ID, rag.ConversationUpdate{Title: &long}); !isCode(err, rag.CodeInvalid) {
			t.Fatalf("title of %d characters: %v, want CodeInvalid", rag.MaxConversationTitle+1, err)
		}
		if got, _ := cs.GetConversation(ctx, alice.ID, c.ID); got.Title != "new" {
			t.Fatalf("a refused rename changed the title to %q", got.Title)
		}
		if err := cs.DeleteConversation(ctx, alice.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.GetConversation(ctx, alice.ID, c.ID); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("after delete: %v, want ErrNotFound", err)
		}
		if err := cs.DeleteConversation(ctx, alice.ID, c.ID); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("second delete: %v, want ErrNotFound", err)
		}
	})
	t.Run("Limits", func(t *testing.T) {
		cs := conversationStore(t, open(t))
		ctx := t.Context()
		exact := &rag.Conversation{Principal: alice.ID, Title: strings.Repeat("가", rag.MaxConversationTitle)}
		if err := cs.CreateConversation(ctx, exact); err != nil {
			t.Fatalf("title of %d characters: %v", rag.MaxConversationTitle, err)
		}
		over := &rag.Conversation{Principal: alice.ID, Title: exact.Title + "가"}
		if err := cs.CreateConversation(ctx, over); !isCode(err, rag.CodeInvalid) {
			t.Fatalf("title of %d characters: %v, want CodeInvalid", rag.MaxConversationTitle+1, err)
		}
		if err := cs.CreateConversation(ctx, &rag.Conversation{Title: "nobody's"}); !isCode(err, rag.CodeInvalid) {
			t.Fatalf("no principal: %v, want CodeInvalid", err)
		}
		// Fill to one below the limit, then one exchange of two does not fit and one message does.
		var fill []*rag.Message
		for i := 0; i < rag.MaxConversationMessages-1; i++ {
			fill = append(fill, &rag.Message{Role: rag.RoleUser, Content: "q"})
		}
		if err := cs.AppendMessages(ctx, alice.ID, exact.ID, "", fill); err != nil {
			t.Fatal(err)
		}
		if err := cs.AppendMessages(ctx, alice.ID, exact.ID, "", exchange("q", "a")); !isCode(err, rag.CodeInvalid) {
			t.Fatalf("message %d: %v, want CodeInvalid", rag.MaxConversationMessages+1, err)
		}
		if err := cs.AppendMessages(ctx, alice.ID, exact.ID, "", []*rag.Message{{Role: rag.RoleUser, Content: "last"}}); err != nil {
			t.Fatalf("message %d: %v", rag.MaxConversationMessages, err)
		}
		if err := cs.AppendMessages(ctx, alice.ID, exact.ID, "", []*rag.Message{{Role: "system", Content: "x"}}); !isCode(err, rag.CodeInvalid) {
			t.Fatalf("a system message: %v, want CodeInvalid", err)
		}
		got, err := cs.GetConversation(ctx, alice.ID, exact.ID)
		if err != nil || got.MessageCount != rag.MaxConversationMessages || got.Messages[len(got.Messages)-1].Content != "last" {
			t.Fatalf("full conversation: %d messages, %v", got.MessageCount, err)
		}
	})
	t.Run("ConcurrentAppends", func(t *testing.T) {
		cs := conversationStore(t, open(t))
		ctx := t.Context()
		c := &rag.Conversation{Principal: alice.ID}
		if err := cs.CreateConversation(ctx, c); err != nil {
			t.Fatal(err)
		}
		const n = 8
		errs := make(chan error, n)
		for i := range n {
			go func() {
				errs <- cs.AppendMessages(ctx, alice.ID, c.ID, "", exchange(fmt.Sprintf("q%d", i), fmt.Sprintf("a%d", i)))
			}()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		got, err := cs.GetConversation(ctx, alice.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != 2*n {
			t.Fatalf("%d messages, want %d", len(got.Messages), 2*n)
		}
		// Each exchange stays together: a question is followed by its own answer.
		for i := 0; i < len(got.Messages); i += 2 {
			q, a := got.Messages[i], got.Messages[i+1]
			if q.Seq != i+1 || a.Seq != i+2 || "a"+strings.TrimPrefix(q.Content, "q") != a.Content {
				t.Fatalf("messages %d and %d: %q (seq %d), %q (seq %d)", i, i+1, q.Content, q.Seq, a.Content, a.Seq)
			}
		}
	})
	t.Run("ReplaceFrom", func(t *testing.T) {
		cs := conversationStore(t, open(t))
		ctx := t.Context()
		c := &rag.Conversation{Principal: alice.ID}
		if err := cs.CreateConversation(ctx, c); err != nil {
			t.Fatal(err)
		}
		first, second := exchange("first?", "one"), exchange("second?", "two")
		if err := cs.AppendMessages(ctx, alice.ID, c.ID, "", first); err != nil {
			t.Fatal(err)
		}
		if err := cs.AppendMessages(ctx, alice.ID, c.ID, "", second); err != nil {
			t.Fatal(err)
		}
		// The second question edited: it and its answer are replaced.
		edited := exchange("second, edited?", "two again")
		if err := cs.AppendMessages(ctx, alice.ID, c.ID, second[0].ID, edited); err != nil {
			t.Fatal(err)
		}
		got, err := cs.GetConversation(ctx, alice.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, m := range got.Messages {
			texts = append(texts, m.Content)
		}
		if strings.Join(texts, "|") != "first?|one|second, edited?|two again" || got.Messages[2].Seq != 3 {
			t.Fatalf("after replacing: %v (seq %d)", texts, got.Messages[2].Seq)
		}
		if err := cs.AppendMessages(ctx, alice.ID, c.ID, second[0].ID, edited); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("replacing a removed message: %v, want ErrNotFound", err)
		}
	})
}
