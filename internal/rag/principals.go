package rag

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Scope is what an API key may do: read (search, chat, listings), write (uploads, updates, deletes, grants),
// admin (collections, users, teams, keys; an admin also reads every document).
type Scope string

// The scopes of an API key.
const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
	ScopeAdmin Scope = "admin"
)

// ParseScopes reads a comma list of scopes ("read,write"); CodeInvalid for an unknown or missing one.
func ParseScopes(s string) ([]Scope, error) {
	var out []Scope
	for _, part := range strings.Split(s, ",") {
		sc := Scope(strings.TrimSpace(strings.ToLower(part)))
		switch sc {
		case ScopeRead, ScopeWrite, ScopeAdmin:
			if !slices.Contains(out, sc) {
				out = append(out, sc)
			}
		case "":
		default:
			return nil, Errorf(CodeInvalid, "unknown scope %q (read, write, admin)", part)
		}
	}
	if len(out) == 0 {
		return nil, Errorf(CodeInvalid, "a key needs at least one scope (read, write, admin)")
	}
	slices.Sort(out)
	return out, nil
}

// TeamRole is a user's role in a team: a member reads what the team may read; an admin of the team also
// writes to the collections the team owns.
type TeamRole string

// Team roles.
const (
	RoleMember TeamRole = "member"
	RoleAdmin  TeamRole = "admin"
)

// User is a person or service that holds API keys. Its principal ID is "user:" + Name.
type User struct {
	Name      string    `json:"name"`
	Disabled  bool      `json:"disabled"`
	Teams     []string  `json:"teams"`
	CreatedAt time.Time `json:"created_at"`
}

// Team groups users; grants and collection ownership name it as "team:" + Name.
type Team struct {
	Name      string    `json:"name"`
	Members   int       `json:"members"`
	CreatedAt time.Time `json:"created_at"`
}

// TeamMember is a user's membership of a team.
type TeamMember struct {
	Team string   `json:"team"`
	User string   `json:"user"`
	Role TeamRole `json:"role"`
}

// Check validates the role (CodeInvalid).
func (m TeamMember) Check() error {
	if m.Role != RoleMember && m.Role != RoleAdmin {
		return Errorf(CodeInvalid, "team role %q: member or admin", m.Role)
	}
	return nil
}

// Missing is the ErrNotFound of a membership whose team or user does not exist, or nil.
func (m TeamMember) Missing(teamExists, userExists bool) error {
	switch {
	case !teamExists:
		return fmt.Errorf("team %q: %w", m.Team, ErrNotFound)
	case !userExists:
		return fmt.Errorf("user %q: %w", m.User, ErrNotFound)
	}
	return nil
}

// APIKey is a stored key's record. The key itself is never stored (only its sha256) and never shown again
// after creation; Prefix names it in listings and revocations.
type APIKey struct {
	Prefix    string     `json:"prefix"`
	User      string     `json:"user"`
	Scopes    []Scope    `json:"scopes"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
}

// PrincipalStore keeps users, teams and API keys (both stores implement it and pass
// internal/store/storetest). Names are checked with ValidName (CodeInvalid). Errors: ErrNotFound for an
// unknown user, team or key, ErrConflict for a name that exists.
type PrincipalStore interface {
	// CreateUser stores a new enabled user with no teams, setting CreatedAt. ErrConflict.
	CreateUser(ctx context.Context, u *User) error
	// ListUsers returns every user with its teams, by name.
	ListUsers(ctx context.Context) ([]*User, error)
	// SetUserDisabled disables (or enables again) a user: a disabled user's keys are refused. ErrNotFound.
	SetUserDisabled(ctx context.Context, name string, disabled bool) error
	// CreateTeam stores a new team. ErrConflict.
	CreateTeam(ctx context.Context, t *Team) error
	// ListTeams returns every team with its member count, by name.
	ListTeams(ctx context.Context) ([]*Team, error)
	// PutTeamMember adds a user to a team or changes its role. ErrNotFound when either does not exist.
	PutTeamMember(ctx context.Context, m TeamMember) error
	// TeamMembers returns a team's members by user name. ErrNotFound for an unknown team.
	TeamMembers(ctx context.Context, team string) ([]TeamMember, error)
	// RemoveTeamMember takes a user out of a team: its keys no longer carry the team from their next
	// resolution. ErrNotFound when the user is not a member of the team (or either does not exist).
	RemoveTeamMember(ctx context.Context, team, user string) error
	// CreateAPIKey stores k (Prefix, User, Scopes, ExpiresAt set) under hash, the sha256 hex of the key,
	// setting CreatedAt. ErrNotFound for an unknown user.
	CreateAPIKey(ctx context.Context, k *APIKey, hash string) error
	// ListAPIKeys returns every key record, newest first.
	ListAPIKeys(ctx context.Context) ([]*APIKey, error)
	// RevokeAPIKey revokes the key with that prefix or that hash and returns its record. ErrNotFound.
	RevokeAPIKey(ctx context.Context, prefixOrHash string) (*APIKey, error)
	// ResolveAPIKey returns the principal of the key with that hash: "user:NAME", the user's teams and
	// the key's scopes. A revoked or expired key, or a disabled user's, is ErrNotFound like an unknown one.
	ResolveAPIKey(ctx context.Context, hash string) (Principal, error)
	// HasAPIKeys reports whether any key is stored (revoked and expired ones included): with none, and none
	// configured, the server stays open.
	HasAPIKeys(ctx context.Context) (bool, error)
}

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidName checks a user or team name: 1–64 ASCII letters, digits, '.', '_' or '-', starting with a letter
// or digit. CodeInvalid otherwise.
func ValidName(kind, name string) error {
	if !validName.MatchString(name) {
		return Errorf(CodeInvalid, "%s name %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", kind, name)
	}
	return nil
}

// UserPrefix and TeamPrefix start the principal entries that name a user or a team in owners and grants.
const (
	UserPrefix = "user:"
	TeamPrefix = "team:"
)

// KeyPrefixLen is the length of an API key's shown prefix: "ragd_" and 12 hex digits.
const KeyPrefixLen = 17

// NewAPIKey returns a new random key, "ragd_<12 hex>_<43 base64url>" (256 random bits after the prefix),
// its prefix and the sha256 hex that is stored.
func NewAPIKey() (key, prefix, hash string) {
	var id [6]byte
	var secret [32]byte
	rand.Read(id[:])
	rand.Read(secret[:])
	prefix = "ragd_" + hex.EncodeToString(id[:])
	key = prefix + "_" + base64.RawURLEncoding.EncodeToString(secret[:])
	return key, prefix, HashAPIKey(key)
}

// ShortKey names a key in an error or a log line without repeating a whole secret: its prefix.
func ShortKey(s string) string {
	if len(s) > KeyPrefixLen {
		return s[:KeyPrefixLen] + "…"
	}
	return s
}

// HashAPIKey is the sha256 hex of a key, as stored.
func HashAPIKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// Allows reports whether p may act with scope s: admins may do everything; principals without scopes
// (the local user, keys from RAGD_API_KEYS) are admins.
func (p Principal) Allows(s Scope) bool {
	return p.Admin || slices.Contains(p.Scopes, s) || (s == ScopeRead && slices.Contains(p.Scopes, ScopeWrite))
}

// Visibility is who reads a collection's documents besides its owner and admins.
type Visibility string

// Collection visibilities. The owner of a collection is a user ("user:NAME") or a team ("team:NAME").
const (
	// VisibilityPrivate: the owner only — the user, or every member of the owning team.
	VisibilityPrivate Visibility = "private"
	// VisibilityTeam: also the members of the owner's teams (of a user owner, every team it is in).
	VisibilityTeam Visibility = "team"
	// VisibilityPublic: every authenticated principal.
	VisibilityPublic Visibility = "public"
)

// CheckVisibility returns v, private when empty; CodeInvalid for another value.
func CheckVisibility(v Visibility) (Visibility, error) {
	switch v {
	case "":
		return VisibilityPrivate, nil
	case VisibilityPrivate, VisibilityTeam, VisibilityPublic:
		return v, nil
	}
	return "", Errorf(CodeInvalid, "visibility %q: private, team or public", v)
}

// CheckOwner checks a collection owner or grant entry: "user:NAME" or "team:NAME". CodeInvalid otherwise.
func CheckOwner(what, s string) error {
	kind, name, ok := strings.Cut(s, ":")
	if !ok || (kind+":" != UserPrefix && kind+":" != TeamPrefix) {
		return Errorf(CodeInvalid, "%s %q: user:NAME or team:NAME", what, s)
	}
	return ValidName(kind, name)
}

// CheckAccessChange checks the owner and visibility a collection is given ("" leaves either alone).
func CheckAccessChange(owner string, v Visibility) error {
	if owner != "" {
		if err := CheckOwner("owner", owner); err != nil {
			return err
		}
	}
	if v != "" {
		if _, err := CheckVisibility(v); err != nil {
			return err
		}
	}
	return nil
}

// GrantAccess is what a principal may do with a document or collection it can see.
type GrantAccess struct {
	Write bool
	// Whole is set for a collection seen by its owner and visibility, rather than only through grants on
	// some of its documents: its graph, record tables and counts are readable.
	Whole bool
}

// AccessStore answers whether a principal may change a document or add to a collection, in one query
// applying the same predicates as reads (both stores implement it; internal/store/storetest).
type AccessStore interface {
	// DocumentAccess says whether p may write the document; ErrNotFound when p cannot see it.
	DocumentAccess(ctx context.Context, p Principal, id string) (GrantAccess, error)
	// CollectionAccess returns the collection (by ID or name) and whether p may add documents to it;
	// ErrNotFound when it does not exist or p cannot see it.
	CollectionAccess(ctx context.Context, p Principal, idOrName string) (*Collection, GrantAccess, error)
	// VisibleCollections returns the collections p sees, by name: those visible to it, and those holding a
	// document it sees.
	VisibleCollections(ctx context.Context, p Principal) ([]*Collection, error)
	// SetCollectionAccess changes a collection's owner (when not empty) and visibility (when not empty) and
	// returns it. CodeInvalid for a bad owner or visibility; ErrNotFound.
	SetCollectionAccess(ctx context.Context, idOrName, owner string, v Visibility) (*Collection, error)
}
