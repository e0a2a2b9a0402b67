package notion

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
)

const (
	idGuide = "1a2b3c4d-0000-4000-8000-000000000001"
	idNotes = "1a2b3c4d-0000-4000-8000-000000000002"
	idChild = "1a2b3c4d-0000-4000-8000-000000000003"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func workspace(t *testing.T) *fakeapi.Notion {
	f := fakeapi.NewNotion("secret_token")
	t.Cleanup(f.Close)
	f.SetPageSize(2) // every list is paginated
	f.Put(fakeapi.NotionPage{ID: idGuide, Title: "Onboarding guide", LastEdited: t0, Blocks: []fakeapi.NotionBlock{
		{Type: "heading_1", Text: "First week"},
		{Type: "paragraph", Text: "Every new engineer gets a laptop and a buddy."},
		{Type: "bulleted_list_item", Text: "Accounts", Children: []fakeapi.NotionBlock{{Type: "bulleted_list_item", Text: "VPN access"}}},
		{Type: "to_do", Text: "Read the handbook", Checked: true},
		{Type: "code", Text: "make test"},
		{Type: "table", Children: []fakeapi.NotionBlock{{Type: "table_row", Text: "Day | Task"}, {Type: "table_row", Text: "Monday | Setup"}}},
	}})
	f.Put(fakeapi.NotionPage{ID: idNotes, Title: "Meeting notes", LastEdited: t0.Add(time.Hour), Blocks: []fakeapi.NotionBlock{
		{Type: "paragraph", Text: "We agreed on quarterly planning."},
	}})
	f.Put(fakeapi.NotionPage{ID: idChild, Title: "Sub page", ParentID: idGuide, LastEdited: t0.Add(2 * time.Hour), Blocks: []fakeapi.NotionBlock{
		{Type: "quote", Text: "A page inside the guide."},
	}})
	return f
}

func open(t *testing.T, f *fakeapi.Notion, waits *fakeapi.Waits, settings string, token string) connector.Source {
	t.Helper()
	src, err := Factory(f.URL(), waits.Sleep)(connector.Config{Settings: json.RawMessage(settings), Credentials: []byte(token),
		HTTP: netguard.Options{AllowPrivate: true}.Client(), MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func versions(l connector.Listing) map[string]string {
	out := map[string]string{}
	for _, it := range l.Items {
		out[it.ID] = it.Version
	}
	return out
}

func TestSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := workspace(t)
	waits := &fakeapi.Waits{}
	src := open(t, f, waits, `{}`, "secret_token")

	first, err := src.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) != 3 || !first.Full || f.Calls("search") != 2 {
		t.Fatalf("first listing: %d items, full %v, %d search calls (page size 2)", len(first.Items), first.Full, f.Calls("search"))
	}
	guide := first.Items[slices.IndexFunc(first.Items, func(it connector.Item) bool { return it.ID == idGuide })]
	if guide.Name != "Onboarding guide.md" || guide.Title != "Onboarding guide" || guide.Version != "2026-03-01T09:00:00.000Z" ||
		!strings.HasPrefix(guide.Source, "https://www.notion.so/") {
		t.Fatalf("guide item %+v", guide)
	}
	md, err := src.Fetch(ctx, guide)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Onboarding guide\n\n## First week\n\nEvery new engineer gets a laptop and a buddy.\n\n- Accounts\n  - VPN access\n- [x] Read the handbook\n```go\nmake test\n```\n\n| Day | Task |\n| --- | --- |\n| Monday | Setup |\n\n"
	if string(md) != want {
		t.Fatalf("markdown:\n%s\nwant:\n%s", md, want)
	}

	t.Run("Edit", func(t *testing.T) {
		f.Put(fakeapi.NotionPage{ID: idNotes, Title: "Meeting notes", LastEdited: t0.Add(3 * time.Hour), Blocks: []fakeapi.NotionBlock{
			{Type: "paragraph", Text: "We agreed on monthly planning."},
		}})
		l, err := src.List(ctx, first.Cursor)
		if err != nil {
			t.Fatal(err)
		}
		before, after := versions(first), versions(l)
		if after[idNotes] == before[idNotes] || after[idGuide] != before[idGuide] || after[idChild] != before[idChild] {
			t.Fatalf("versions before %v after %v: only the edited page may change", before, after)
		}
		md, err := src.Fetch(ctx, l.Items[slices.IndexFunc(l.Items, func(it connector.Item) bool { return it.ID == idNotes })])
		if err != nil || !strings.Contains(string(md), "monthly") {
			t.Fatalf("edited page: %v %q", err, md)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		f.Delete(idChild)
		l, err := src.List(ctx, first.Cursor)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := versions(l)[idChild]; ok || len(l.Items) != 2 || !l.Full {
			t.Fatalf("after a deletion: %v", versions(l))
		}
	})
	t.Run("RateLimitBurst", func(t *testing.T) {
		f.Throttle(3, 2*time.Second)
		l, err := src.List(ctx, "")
		if err != nil || len(l.Items) != 2 {
			t.Fatalf("through a 429 burst: %v, %d items", err, len(l.Items))
		}
		if got := waits.All(); !slices.Equal(got, []time.Duration{2 * time.Second, 2 * time.Second, 2 * time.Second}) {
			t.Fatalf("waits %v, want Retry-After three times", got)
		}
		f.Throttle(100, time.Second)
		defer f.Throttle(0, 0)
		if _, err := src.List(ctx, ""); rag.ErrorCode(err) != rag.CodeRateLimited {
			t.Fatalf("a 429 that does not end: %v", err)
		}
	})
	t.Run("ExpiredToken", func(t *testing.T) {
		f.SetToken("secret_rotated")
		if _, err := src.List(ctx, ""); !errors.Is(err, connector.ErrUnauthorized) {
			t.Fatalf("list with an expired token: %v", err)
		}
		if _, err := src.Fetch(ctx, guide); !errors.Is(err, connector.ErrUnauthorized) {
			t.Fatalf("fetch with an expired token: %v", err)
		}
	})
	if v := f.Violations(); len(v) != 0 {
		t.Fatalf("requests the real API would reject: %v", v)
	}
}

func TestPagesSetting(t *testing.T) {
	t.Parallel()
	f := workspace(t)
	l, err := open(t, f, &fakeapi.Waits{}, `{"pages": ["1a2b3c4d000040008000000000000001"]}`, "secret_token").List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	v := versions(l)
	if _, ok := v[idNotes]; ok || len(v) != 2 {
		t.Fatalf("listed %v: want the guide and its sub page", v)
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	for _, c := range []connector.Config{
		{Settings: json.RawMessage(`{}`)}, // no token
		{Settings: json.RawMessage(`{"pages": ["nope"]}`), Credentials: []byte("t")},
		{Settings: json.RawMessage(`{"page": []}`), Credentials: []byte("t")},
	} {
		if _, err := New(c); rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("%s: %v", c.Settings, err)
		}
	}
}

func TestPrivateRefused(t *testing.T) {
	t.Parallel()
	f := workspace(t)
	src, err := Factory(f.URL(), nil)(connector.Config{Credentials: []byte("secret_token"), HTTP: netguard.Options{}.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.List(context.Background(), ""); rag.ErrorCode(err) != rag.CodeForbidden || f.Calls("search") != 0 {
		t.Fatalf("err %v", err)
	}
}
