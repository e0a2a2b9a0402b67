// Package access holds the steps of managing principals that the CLI (ragd users|teams|keys) and the
// admin API (/api/admin/) share: adding a user to a team as it is created, making a key, and storing the
// bootstrap admin key. The model itself — who sees what — is docs/security.md; the stores enforce it.
package access

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// BootstrapUser is the user that RAGD_ADMIN_KEY's key belongs to.
const BootstrapUser = "admin"

// AddUser creates a user and, when team is not empty, makes it a member of team with role (member when
// empty). The team and role are checked first, so an unknown team creates nothing. ErrConflict when the
// user exists.
func AddUser(ctx context.Context, ps rag.PrincipalStore, name, team string, role rag.TeamRole) (*rag.User, error) {
	if role == "" {
		role = rag.RoleMember
	}
	m := rag.TeamMember{Team: team, User: name, Role: role}
	if team != "" {
		if err := m.Check(); err != nil {
			return nil, err
		}
		if _, err := ps.TeamMembers(ctx, team); err != nil {
			return nil, err
		}
	}
	u := &rag.User{Name: name}
	if err := ps.CreateUser(ctx, u); err != nil {
		if errors.Is(err, rag.ErrConflict) {
			return nil, rag.WrapError(rag.CodeConflict, err, "a user named %q already exists", name)
		}
		return nil, err
	}
	if team != "" {
		if err := ps.PutTeamMember(ctx, m); err != nil {
			return nil, err
		}
		u.Teams = []string{team}
	}
	return u, nil
}

// MaxKeyTTL is the longest expiry a key can be given (ten years); a key without one never expires.
const MaxKeyTTL = 10 * 365 * 24 * time.Hour

// CreateKey makes a new key for user with scopes, expiring ttl after now (never when ttl is 0), stores its
// hash and returns the key — the only time it is seen — with its record. CodeInvalid for a negative or too
// long ttl; ErrNotFound for an unknown user.
func CreateKey(ctx context.Context, ps rag.PrincipalStore, user string, scopes []rag.Scope, ttl time.Duration, now time.Time) (string, *rag.APIKey, error) {
	if ttl < 0 || ttl > MaxKeyTTL {
		return "", nil, rag.Errorf(rag.CodeInvalid, "a key's expiry must be between 0 (never) and %s, not %s", MaxKeyTTL, ttl)
	}
	if len(scopes) == 0 {
		return "", nil, rag.Errorf(rag.CodeInvalid, "a key needs at least one scope (read, write, admin)")
	}
	key, prefix, hash := rag.NewAPIKey()
	k := &rag.APIKey{Prefix: prefix, User: user, Scopes: scopes}
	if ttl > 0 {
		exp := now.Add(ttl)
		k.ExpiresAt = &exp
	}
	if err := ps.CreateAPIKey(ctx, k, hash); err != nil {
		return "", nil, err
	}
	return key, k, nil
}

// Bootstrap stores key (RAGD_ADMIN_KEY) as an admin key of the user "admin" (created if missing) when the
// store holds no key yet, and reports whether it did. Later starts leave the keys alone, so that revoking
// the bootstrap key sticks.
func Bootstrap(ctx context.Context, ps rag.PrincipalStore, key string) (bool, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return false, nil
	}
	if has, err := ps.HasAPIKeys(ctx); err != nil || has {
		return false, err
	}
	if err := ps.CreateUser(ctx, &rag.User{Name: BootstrapUser}); err != nil && !errors.Is(err, rag.ErrConflict) {
		return false, err
	}
	hash := rag.HashAPIKey(key)
	k := &rag.APIKey{Prefix: "ragd_" + hash[:12], User: BootstrapUser,
		Scopes: []rag.Scope{rag.ScopeAdmin, rag.ScopeRead, rag.ScopeWrite}}
	if err := ps.CreateAPIKey(ctx, k, hash); err != nil {
		if errors.Is(err, rag.ErrConflict) { // another process bootstrapped the same key at once
			return false, nil
		}
		return false, fmt.Errorf("store the bootstrap admin key: %w", err)
	}
	return true, nil
}

// RevocationTarget is what RevokeAPIKey looks a key up by: a prefix as given, or the hash of a whole key.
func RevocationTarget(prefixOrKey string) string {
	prefixOrKey = strings.TrimSpace(prefixOrKey)
	if len(prefixOrKey) > rag.KeyPrefixLen {
		return rag.HashAPIKey(prefixOrKey)
	}
	return prefixOrKey
}

// CheckOwner checks a collection owner: "user:NAME" of an existing user or "team:NAME" of an existing
// team. CodeInvalid for another form, ErrNotFound for an unknown user or team.
func CheckOwner(ctx context.Context, ps rag.PrincipalStore, owner string) error {
	if err := rag.CheckOwner("owner", owner); err != nil {
		return err
	}
	if team, ok := strings.CutPrefix(owner, rag.TeamPrefix); ok {
		_, err := ps.TeamMembers(ctx, team)
		return err
	}
	name := strings.TrimPrefix(owner, rag.UserPrefix)
	users, err := ps.ListUsers(ctx)
	if err != nil {
		return err
	}
	for _, u := range users {
		if u.Name == name {
			return nil
		}
	}
	return fmt.Errorf("user %q: %w", name, rag.ErrNotFound)
}
