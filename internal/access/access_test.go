package access_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/access"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
)

func open(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestBootstrap: RAGD_ADMIN_KEY is stored once, as an admin key of user admin; a later start (with the
// same or another key) leaves the keys alone, so that revoking it sticks.
func TestBootstrap(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	if made, err := access.Bootstrap(ctx, s, "  "); made || err != nil {
		t.Fatalf("blank key: %v, %v", made, err)
	}
	const key = "bootstrap-key-of-at-least-24-chars"
	if made, err := access.Bootstrap(ctx, s, key); !made || err != nil {
		t.Fatalf("first start: %v, %v", made, err)
	}
	p, err := s.ResolveAPIKey(ctx, rag.HashAPIKey(key))
	if err != nil || p.ID != "user:admin" || !p.Admin {
		t.Fatalf("bootstrap key resolves to %+v, %v", p, err)
	}
	if _, err := s.RevokeAPIKey(ctx, access.RevocationTarget(key)); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{key, "another-bootstrap-key-0123456789"} {
		if made, err := access.Bootstrap(ctx, s, k); made || err != nil {
			t.Fatalf("later start with %q: %v, %v", k, made, err)
		}
		if _, err := s.ResolveAPIKey(ctx, rag.HashAPIKey(k)); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("after revocation, %q resolves: %v", k, err)
		}
	}
}

func TestCreateKeyAndOwner(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	if _, err := access.AddUser(ctx, s, "olive", "eng", ""); !errors.Is(err, rag.ErrNotFound) {
		t.Fatalf("user in a missing team: %v", err)
	}
	if users, _ := s.ListUsers(ctx); len(users) != 0 {
		t.Fatalf("a failed add left %v", users)
	}
	if err := s.CreateTeam(ctx, &rag.Team{Name: "eng"}); err != nil {
		t.Fatal(err)
	}
	if u, err := access.AddUser(ctx, s, "olive", "eng", ""); err != nil || u.Teams[0] != "eng" {
		t.Fatalf("AddUser = %+v, %v", u, err)
	}
	now := time.Now()
	for _, ttl := range []time.Duration{-time.Second, access.MaxKeyTTL + time.Hour} {
		if _, _, err := access.CreateKey(ctx, s, "olive", []rag.Scope{rag.ScopeRead}, ttl, now); rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("ttl %s: %v, want invalid_request", ttl, err)
		}
	}
	key, rec, err := access.CreateKey(ctx, s, "olive", []rag.Scope{rag.ScopeRead}, access.MaxKeyTTL, now)
	if err != nil || rec.ExpiresAt == nil || key[:rag.KeyPrefixLen] != rec.Prefix {
		t.Fatalf("CreateKey = %q, %+v, %v", key, rec, err)
	}
	for owner, want := range map[string]rag.Code{"user:olive": "", "team:eng": "", "user:zed": rag.CodeNotFound, "team:ops": rag.CodeNotFound, "olive": rag.CodeInvalid, "group:eng": rag.CodeInvalid} {
		if got := rag.ErrorCode(access.CheckOwner(ctx, s, owner)); got != want {
			t.Errorf("CheckOwner(%s) = %q, want %q", owner, got, want)
		}
	}
}
