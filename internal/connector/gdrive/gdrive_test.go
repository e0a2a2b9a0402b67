package gdrive

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

func fakeDrive(t *testing.T) *fakeapi.Drive {
	f := fakeapi.NewDrive()
	t.Cleanup(f.Close)
	f.SetPageSize(2)
	f.Put(fakeapi.DriveFile{ID: "doc1", Name: "Travel policy", MimeType: fakeapi.DriveDoc, Content: []byte("Trains are booked in second class.\n\nFlights need approval.")})
	f.Put(fakeapi.DriveFile{ID: "sheet1", Name: "Budget 2026", MimeType: fakeapi.DriveSheet, Content: []byte("item,amount\nlaptops,12000\n")})
	f.Put(fakeapi.DriveFile{ID: "md1", Name: "README.md", MimeType: "text/markdown", Content: []byte("# Team\nWe ship on Fridays.")})
	f.Put(fakeapi.DriveFile{ID: "pdf1", Name: "scan", MimeType: "application/pdf", Content: []byte("%PDF-1.4 not really")})
	f.Put(fakeapi.DriveFile{ID: "img1", Name: "photo.jpg", MimeType: "image/jpeg", Content: []byte("\xff\xd8")})
	f.Put(fakeapi.DriveFile{ID: "dir1", Name: "Folder", MimeType: fakeapi.DriveFolder})
	return f
}

func open(t *testing.T, f *fakeapi.Drive, creds []byte, waits *fakeapi.Waits) connector.Source {
	t.Helper()
	src, err := Factory(f.Endpoint(), waits.Sleep)(connector.Config{Credentials: creds, HTTP: netguard.Options{AllowPrivate: true}.Client(), MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func byID(l connector.Listing) map[string]connector.Item {
	out := map[string]connector.Item{}
	for _, it := range l.Items {
		out[it.ID] = it
	}
	return out
}

func TestSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := fakeDrive(t)
	key, err := f.ServiceAccount("ragd@ragd-test.iam.gserviceaccount.com")
	if err != nil {
		t.Fatal(err)
	}
	waits := &fakeapi.Waits{}
	src := open(t, f, key, waits)

	first, err := src.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	items := byID(first)
	ids := make([]string, 0, len(items))
	for id := range items {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if !first.Full || first.Cursor == "" || !slices.Equal(ids, []string{"doc1", "md1", "pdf1", "sheet1"}) {
		t.Fatalf("first listing: full %v cursor %q items %v (no image, no folder)", first.Full, first.Cursor, ids)
	}
	if f.Calls("token") != 1 || f.Calls("list") != 3 {
		t.Errorf("%d token and %d list calls, want 1 and 3 (page size 2)", f.Calls("token"), f.Calls("list"))
	}
	if it := items["doc1"]; it.Name != "Travel policy.html" || it.Title != "Travel policy" || !strings.HasPrefix(it.Version, "gdoc:") ||
		!strings.HasPrefix(it.Source, "https://docs.google.com/") {
		t.Errorf("doc item %+v", it)
	}
	if it := items["pdf1"]; it.Name != "scan.pdf" || !strings.HasPrefix(it.Version, "md5:") {
		t.Errorf("pdf item %+v", it)
	}
	if it := items["sheet1"]; it.Name != "Budget 2026.csv" {
		t.Errorf("sheet item %+v", it)
	}
	for id, want := range map[string]string{"doc1": "<p>Flights need approval.</p>", "sheet1": "laptops,12000", "md1": "We ship on Fridays."} {
		data, err := src.Fetch(ctx, items[id])
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("fetch %s: %v %q", id, err, data)
		}
	}

	cursor := first.Cursor
	t.Run("NoChange", func(t *testing.T) {
		l, err := src.List(ctx, cursor)
		if err != nil || l.Full || len(l.Items)+len(l.Deleted) != 0 || l.Cursor != cursor {
			t.Fatalf("%+v %v", l, err)
		}
	})
	t.Run("Edit", func(t *testing.T) {
		f.Put(fakeapi.DriveFile{ID: "doc1", Name: "Travel policy", MimeType: fakeapi.DriveDoc, Content: []byte("Trains are booked in first class.")})
		f.Put(fakeapi.DriveFile{ID: "md1", Name: "README.md", MimeType: "text/markdown", Content: []byte("# Team\nWe ship on Fridays.")}) // touched, same bytes
		l, err := src.List(ctx, cursor)
		if err != nil {
			t.Fatal(err)
		}
		got := byID(l)
		if l.Full || len(got) != 2 || got["doc1"].Version == items["doc1"].Version || got["md1"].Version != items["md1"].Version {
			t.Fatalf("changes %+v: the doc has a new version, the same bytes keep theirs", l.Items)
		}
		cursor = l.Cursor
	})
	t.Run("Delete", func(t *testing.T) {
		f.Trash("pdf1")
		f.Remove("sheet1")
		f.Put(fakeapi.DriveFile{ID: "new1", Name: "notes.txt", MimeType: "text/plain", Content: []byte("new notes")})
		l, err := src.List(ctx, cursor)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(l.Deleted)
		if !slices.Equal(l.Deleted, []string{"pdf1", "sheet1"}) || len(l.Items) != 1 || l.Items[0].ID != "new1" {
			t.Fatalf("deleted %v, items %+v", l.Deleted, l.Items)
		}
		cursor = l.Cursor
	})
	t.Run("RateLimitBurst", func(t *testing.T) {
		f.Throttle(2, 0) // Drive sends no Retry-After: exponential back-off
		f.Put(fakeapi.DriveFile{ID: "new2", Name: "more.txt", MimeType: "text/plain", Content: []byte("more")})
		l, err := src.List(ctx, cursor)
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("through a 429 burst: %v %+v", err, l.Items)
		}
		if got := waits.All(); !slices.Equal(got, []time.Duration{time.Second, 2 * time.Second}) {
			t.Fatalf("waits %v", got)
		}
		f.Throttle(3, 5*time.Second)
		data, err := src.Fetch(ctx, l.Items[0])
		if err != nil || string(data) != "more" {
			t.Fatalf("download through a 429 burst: %v %q", err, data)
		}
		if got := waits.All()[2:]; !slices.Equal(got, []time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second}) {
			t.Fatalf("waits %v: Retry-After is honoured", got)
		}
		cursor = l.Cursor
	})
	t.Run("ExpiredToken", func(t *testing.T) {
		f.ExpireTokens()
		if _, err := src.List(ctx, cursor); !errors.Is(err, connector.ErrUnauthorized) {
			t.Fatalf("list with an expired token: %v", err)
		}
	})
	t.Run("BadPageToken", func(t *testing.T) {
		src := open(t, f, key, &fakeapi.Waits{})
		l, err := src.List(ctx, "999999")
		if err != nil || !l.Full {
			t.Fatalf("a page token Drive refuses relists everything: %v full %v", err, l.Full)
		}
	})
	if v := f.Violations(); len(v) != 0 {
		t.Fatalf("requests the real API would reject: %v", v)
	}
}

func TestAccessToken(t *testing.T) {
	t.Parallel()
	f := fakeDrive(t)
	f.AddToken("ya29.user-token")
	src := open(t, f, []byte(`{"access_token": "ya29.user-token"}`), &fakeapi.Waits{})
	if l, err := src.List(context.Background(), ""); err != nil || len(l.Items) != 4 {
		t.Fatalf("%v %d", err, len(l.Items))
	}
	bad := open(t, f, []byte(`{"access_token": "ya29.stale"}`), &fakeapi.Waits{})
	if _, err := bad.List(context.Background(), ""); !errors.Is(err, connector.ErrUnauthorized) {
		t.Fatalf("a stale token: %v", err)
	}
}

func TestRefusedKey(t *testing.T) {
	t.Parallel()
	f := fakeDrive(t)
	other := fakeapi.NewDrive() // a key the fake's token endpoint does not know
	defer other.Close()
	key, err := other.ServiceAccount("stranger@example.iam.gserviceaccount.com")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	_ = json.Unmarshal(key, &m)
	m["token_uri"] = f.TokenURL()
	key, _ = json.Marshal(m)
	if _, err := open(t, f, key, &fakeapi.Waits{}).List(context.Background(), ""); !errors.Is(err, connector.ErrUnauthorized) {
		t.Fatalf("a key the token endpoint refuses: %v", err)
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	for _, c := range []connector.Config{
		{},
		{Credentials: []byte("not json")},
		{Credentials: []byte(`{"type": "external_account"}`)},
		{Credentials: []byte(`{"access_token": "x"}`), Settings: json.RawMessage(`{"folder": "x"}`)},
	} {
		if _, err := New(c); rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("%s %s: %v", c.Credentials, c.Settings, err)
		}
	}
}

func TestPrivateRefused(t *testing.T) {
	t.Parallel()
	f := fakeDrive(t)
	f.AddToken("ya29.user-token")
	src, err := Factory(f.Endpoint(), nil)(connector.Config{Credentials: []byte(`{"access_token": "ya29.user-token"}`), HTTP: netguard.Options{}.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.List(context.Background(), ""); rag.ErrorCode(err) != rag.CodeForbidden || f.Calls("start") != 0 {
		t.Fatalf("err %v", err)
	}
}
