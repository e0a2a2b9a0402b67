package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// principalStore returns the store's rag.PrincipalStore; every store implements it.
func principalStore(t *testing.T, s rag.Store) rag.PrincipalStore {
	t.Helper()
	ps, ok := s.(rag.PrincipalStore)
	if !ok {
		t.Fatalf("%T does not implement rag.PrincipalStore", s)
	}
	return ps
}

func testPrincipals(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("UsersAndTeams", func(t *testing.T) {
		ps := principalStore(t, open(t))
		ctx := t.Context()
		for _, name := range []string{"alice", "bob"} {
			u := &rag.User{Name: name}
			if err := ps.CreateUser(ctx, u); err != nil || u.CreatedAt.IsZero() {
				t.Fatalf("CreateUser(%s) = %v, %+v", name, err, u)
			}
		}
		if err := ps.CreateUser(ctx, &rag.User{Name: "alice"}); !errors.Is(err, rag.ErrConflict) {
			t.Errorf("second alice: %v, want ErrConflict", err)
		}
		for _, bad := range []string{"", "a b", "-x", "user:alice", string(make([]byte, 65))} {
			if err := ps.CreateUser(ctx, &rag.User{Name: bad}); rag.ErrorCode(err) != rag.CodeInvalid {
				t.Errorf("CreateUser(%q) = %v, want invalid_request", bad, err)
			}
		}
		if err := ps.CreateTeam(ctx, &rag.Team{Name: "eng"}); err != nil {
			t.Fatal(err)
		}
		if err := ps.CreateTeam(ctx, &rag.Team{Name: "eng"}); !errors.Is(err, rag.ErrConflict) {
			t.Errorf("second eng: %v, want ErrConflict", err)
		}
		if err := ps.PutTeamMember(ctx, rag.TeamMember{Team: "eng", User: "bob", Role: rag.RoleMember}); err != nil {
			t.Fatal(err)
		}
		if err := ps.PutTeamMember(ctx, rag.TeamMember{Team: "eng", User: "alice", Role: rag.RoleMember}); err != nil {
			t.Fatal(err)
		}
		// Adding again changes the role.
		if err := ps.PutTeamMember(ctx, rag.TeamMember{Team: "eng", User: "alice", Role: rag.RoleAdmin}); err != nil {
			t.Fatal(err)
		}
		for _, m := range []rag.TeamMember{{Team: "ops", User: "bob", Role: rag.RoleMember}, {Team: "eng", User: "zed", Role: rag.RoleMember}} {
			if err := ps.PutTeamMember(ctx, m); !errors.Is(err, rag.ErrNotFound) {
				t.Errorf("PutTeamMember(%+v) = %v, want ErrNotFound", m, err)
			}
		}
		if err := ps.PutTeamMember(ctx, rag.TeamMember{Team: "eng", User: "bob", Role: "owner"}); rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("role owner: %v, want invalid_request", err)
		}
		members, err := ps.TeamMembers(ctx, "eng")
		want := []rag.TeamMember{{Team: "eng", User: "alice", Role: rag.RoleAdmin}, {Team: "eng", User: "bob", Role: rag.RoleMember}}
		if err != nil || !slices.Equal(members, want) {
			t.Errorf("TeamMembers = %v, %v; want %v", members, err, want)
		}
		if _, err := ps.TeamMembers(ctx, "ops"); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("TeamMembers(ops) = %v, want ErrNotFound", err)
		}
		teams, err := ps.ListTeams(ctx)
		if err != nil || len(teams) != 1 || teams[0].Name != "eng" || teams[0].Members != 2 {
			t.Errorf("ListTeams = %+v, %v", teams, err)
		}
		if err := ps.SetUserDisabled(ctx, "bob", true); err != nil {
			t.Fatal(err)
		}
		if err := ps.SetUserDisabled(ctx, "zed", true); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("disable zed: %v, want ErrNotFound", err)
		}
		users, err := ps.ListUsers(ctx)
		if err != nil || len(users) != 2 {
			t.Fatalf("ListUsers = %+v, %v", users, err)
		}
		if users[0].Name != "alice" || users[0].Disabled || !slices.Equal(users[0].Teams, []string{"eng"}) ||
			users[1].Name != "bob" || !users[1].Disabled {
			t.Errorf("ListUsers = %+v, %+v", *users[0], *users[1])
		}
		t.Run("RemoveMember", func(t *testing.T) {
			if err := ps.CreateUser(ctx, &rag.User{Name: "carl"}); err != nil {
				t.Fatal(err)
			}
			if err := ps.PutTeamMember(ctx, rag.TeamMember{Team: "eng", User: "carl", Role: rag.RoleAdmin}); err != nil {
				t.Fatal(err)
			}
			key, prefix, hash := rag.NewAPIKey()
			if err := ps.CreateAPIKey(ctx, &rag.APIKey{Prefix: prefix, User: "carl", Scopes: []rag.Scope{rag.ScopeRead}}, hash); err != nil {
				t.Fatal(err)
			}
			if p, err := ps.ResolveAPIKey(ctx, rag.HashAPIKey(key)); err != nil || !slices.Equal(p.Groups, []string{"eng"}) {
				t.Fatalf("carl before removal: %+v, %v", p, err)
			}
			if err := ps.RemoveTeamMember(ctx, "eng", "carl"); err != nil {
				t.Fatal(err)
			}
			if p, err := ps.ResolveAPIKey(ctx, rag.HashAPIKey(key)); err != nil || len(p.Groups) != 0 {
				t.Errorf("carl's key after removal: %+v, %v; want no team", p, err)
			}
			if members, err := ps.TeamMembers(ctx, "eng"); err != nil || len(members) != 2 {
				t.Errorf("members after removal: %v, %v", members, err)
			}
			for _, m := range [][2]string{{"eng", "carl"}, {"eng", "zed"}, {"ops", "bob"}} {
				if err := ps.RemoveTeamMember(ctx, m[0], m[1]); !errors.Is(err, rag.ErrNotFound) {
					t.Errorf("RemoveTeamMember(%s, %s) = %v, want ErrNotFound", m[0], m[1], err)
				}
			}
		})
	})

	t.Run("Keys", func(t *testing.T) {
		ps := principalStore(t, open(t))
		ctx := t.Context()
		if has, err := ps.HasAPIKeys(ctx); err != nil || has {
			t.Fatalf("HasAPIKeys on an empty store = %v, %v", has, err)
		}
		for _, n := range []string{"alice", "bob"} {
			if err := ps.CreateUser(ctx, &rag.User{Name: n}); err != nil {
				t.Fatal(err)
			}
		}
		for _, team := range []string{"ops", "eng"} {
			if err := ps.CreateTeam(ctx, &rag.Team{Name: team}); err != nil {
				t.Fatal(err)
			}
			if err := ps.PutTeamMember(ctx, rag.TeamMember{Team: team, User: "alice", Role: rag.RoleMember}); err != nil {
				t.Fatal(err)
			}
		}
		mk := func(user string, scopes []rag.Scope, expires *time.Time) (string, *rag.APIKey) {
			t.Helper()
			key, prefix, hash := rag.NewAPIKey()
			k := &rag.APIKey{Prefix: prefix, User: user, Scopes: scopes, ExpiresAt: expires}
			if err := ps.CreateAPIKey(ctx, k, hash); err != nil {
				t.Fatalf("CreateAPIKey(%s): %v", user, err)
			}
			return key, k
		}
		read, readRec := mk("alice", []rag.Scope{rag.ScopeRead}, nil)
		later := time.Now().Add(time.Hour)
		adminKey, _ := mk("bob", []rag.Scope{rag.ScopeAdmin, rag.ScopeRead}, &later)
		earlier := time.Now().Add(-time.Minute)
		expired, _ := mk("alice", []rag.Scope{rag.ScopeRead}, &earlier)
		if has, err := ps.HasAPIKeys(ctx); err != nil || !has {
			t.Errorf("HasAPIKeys = %v, %v", has, err)
		}
		if err := ps.CreateAPIKey(ctx, &rag.APIKey{Prefix: "ragd_000000000000", User: "zed", Scopes: []rag.Scope{rag.ScopeRead}}, "00"); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("key for an unknown user: %v, want ErrNotFound", err)
		}

		p, err := ps.ResolveAPIKey(ctx, rag.HashAPIKey(read))
		if err != nil || p.ID != "user:alice" || p.Admin || !slices.Equal(p.Groups, []string{"eng", "ops"}) || !slices.Equal(p.Scopes, []rag.Scope{rag.ScopeRead}) {
			t.Errorf("ResolveAPIKey(read) = %+v, %v", p, err)
		}
		if !p.Allows(rag.ScopeRead) || p.Allows(rag.ScopeWrite) || p.Allows(rag.ScopeAdmin) {
			t.Errorf("read key allows write or admin: %+v", p)
		}
		if p, err := ps.ResolveAPIKey(ctx, rag.HashAPIKey(adminKey)); err != nil || p.ID != "user:bob" || !p.Admin || p.Groups != nil {
			t.Errorf("ResolveAPIKey(admin) = %+v, %v", p, err)
		}
		for name, key := range map[string]string{"expired": expired, "unknown": "ragd_nothing", "empty": ""} {
			if _, err := ps.ResolveAPIKey(ctx, rag.HashAPIKey(key)); !errors.Is(err, rag.ErrNotFound) {
				t.Errorf("ResolveAPIKey(%s) = %v, want ErrNotFound", name, err)
			}
		}

		keys, err := ps.ListAPIKeys(ctx)
		if err != nil || len(keys) != 3 {
			t.Fatalf("ListAPIKeys = %v, %v", keys, err)
		}
		for _, k := range keys {
			if len(k.Prefix) != rag.KeyPrefixLen || k.RevokedAt != nil || k.CreatedAt.IsZero() {
				t.Errorf("listed key %+v", *k)
			}
			if k.Prefix == readRec.Prefix && (k.User != "alice" || k.ExpiresAt != nil || !k.CreatedAt.Equal(readRec.CreatedAt)) {
				t.Errorf("listed %+v, created %+v", *k, *readRec)
			}
		}

		// Revoking by the whole key or by its prefix; a revoked key is refused.
		rec, err := ps.RevokeAPIKey(ctx, rag.HashAPIKey(read))
		if err != nil || rec.Prefix != readRec.Prefix || rec.RevokedAt == nil {
			t.Fatalf("RevokeAPIKey = %+v, %v", rec, err)
		}
		if _, err := ps.ResolveAPIKey(ctx, rag.HashAPIKey(read)); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("revoked key resolves: %v", err)
		}
		if _, err := ps.RevokeAPIKey(ctx, adminKey[:rag.KeyPrefixLen]); err != nil {
			t.Fatal(err)
		}
		if _, err := ps.ResolveAPIKey(ctx, rag.HashAPIKey(adminKey)); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("key revoked by prefix resolves: %v", err)
		}
		if _, err := ps.RevokeAPIKey(ctx, "ragd_ffffffffffff"); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("revoking an unknown prefix: %v", err)
		}

		// A disabled user's keys are refused, and accepted again once enabled.
		fresh, _ := mk("alice", []rag.Scope{rag.ScopeRead, rag.ScopeWrite}, nil)
		if err := ps.SetUserDisabled(ctx, "alice", true); err != nil {
			t.Fatal(err)
		}
		if _, err := ps.ResolveAPIKey(ctx, rag.HashAPIKey(fresh)); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("disabled user's key resolves: %v", err)
		}
		if err := ps.SetUserDisabled(ctx, "alice", false); err != nil {
			t.Fatal(err)
		}
		if p, err := ps.ResolveAPIKey(ctx, rag.HashAPIKey(fresh)); err != nil || !p.Allows(rag.ScopeWrite) {
			t.Errorf("re-enabled user's key: %+v, %v", p, err)
		}
	})
}
