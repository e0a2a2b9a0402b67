package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

var _ rag.PrincipalStore = (*Store)(nil)

// CreateUser stores a new enabled user. ErrConflict.
func (s *Store) CreateUser(ctx context.Context, u *rag.User) error {
	if err := rag.ValidName("user", u.Name); err != nil {
		return err
	}
	now := s.now()
	if _, err := s.pool.Exec(ctx, s.q(`INSERT INTO {S}.users (name, disabled, created_at) VALUES ($1, false, $2)`), u.Name, now); err != nil {
		return interpretError(fmt.Errorf("create user %q: %w", u.Name, err))
	}
	u.Disabled, u.Teams, u.CreatedAt = false, nil, now
	return nil
}

// ListUsers returns every user with its teams, by name.
func (s *Store) ListUsers(ctx context.Context) ([]*rag.User, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT u.name, u.disabled, u.created_at,
			coalesce((SELECT array_agg(team ORDER BY team) FROM {S}.team_members m WHERE m.user_name = u.name), '{}')
		FROM {S}.users u ORDER BY u.name`))
	if err != nil {
		return nil, interpretError(fmt.Errorf("list users: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.User, error) {
		var u rag.User
		err := r.Scan(&u.Name, &u.Disabled, &u.CreatedAt, &u.Teams)
		if len(u.Teams) == 0 {
			u.Teams = nil
		}
		u.CreatedAt = u.CreatedAt.UTC()
		return &u, err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("list users: %w", err))
	}
	return append([]*rag.User{}, out...), nil
}

// SetUserDisabled disables or enables a user. ErrNotFound.
func (s *Store) SetUserDisabled(ctx context.Context, name string, disabled bool) error {
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {S}.users SET disabled = $1 WHERE name = $2`), disabled, name)
	if err != nil {
		return interpretError(fmt.Errorf("change user %q: %w", name, err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("user %q: %w", name, rag.ErrNotFound)
	}
	return nil
}

// CreateTeam stores a new team. ErrConflict.
func (s *Store) CreateTeam(ctx context.Context, t *rag.Team) error {
	if err := rag.ValidName("team", t.Name); err != nil {
		return err
	}
	now := s.now()
	if _, err := s.pool.Exec(ctx, s.q(`INSERT INTO {S}.teams (name, created_at) VALUES ($1, $2)`), t.Name, now); err != nil {
		return interpretError(fmt.Errorf("create team %q: %w", t.Name, err))
	}
	t.Members, t.CreatedAt = 0, now
	return nil
}

// ListTeams returns every team with its member count, by name.
func (s *Store) ListTeams(ctx context.Context) ([]*rag.Team, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT t.name, t.created_at, (SELECT count(*) FROM {S}.team_members m WHERE m.team = t.name)
		FROM {S}.teams t ORDER BY t.name`))
	if err != nil {
		return nil, interpretError(fmt.Errorf("list teams: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.Team, error) {
		var t rag.Team
		err := r.Scan(&t.Name, &t.CreatedAt, &t.Members)
		t.CreatedAt = t.CreatedAt.UTC()
		return &t, err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("list teams: %w", err))
	}
	return append([]*rag.Team{}, out...), nil
}

// PutTeamMember adds a user to a team or changes its role. ErrNotFound.
func (s *Store) PutTeamMember(ctx context.Context, m rag.TeamMember) error {
	if err := m.Check(); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var team, user bool
		if err := tx.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM {S}.teams WHERE name = $1), EXISTS (SELECT 1 FROM {S}.users WHERE name = $2)`),
			m.Team, m.User).Scan(&team, &user); err != nil {
			return fmt.Errorf("add team member: %w", err)
		}
		if err := m.Missing(team, user); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, s.q(`INSERT INTO {S}.team_members (team, user_name, role) VALUES ($1, $2, $3)
			ON CONFLICT (team, user_name) DO UPDATE SET role = excluded.role`), m.Team, m.User, string(m.Role))
		return err
	})
}

// RemoveTeamMember takes a user out of a team. ErrNotFound when it is not a member.
func (s *Store) RemoveTeamMember(ctx context.Context, team, user string) error {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {S}.team_members WHERE team = $1 AND user_name = $2`), team, user)
	if err != nil {
		return interpretError(fmt.Errorf("remove %s from team %s: %w", user, team, err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("user %q in team %q: %w", user, team, rag.ErrNotFound)
	}
	return nil
}

// TeamMembers returns a team's members by user name. ErrNotFound.
func (s *Store) TeamMembers(ctx context.Context, team string) ([]rag.TeamMember, error) {
	var exists bool
	if err := s.pool.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM {S}.teams WHERE name = $1)`), team).Scan(&exists); err != nil {
		return nil, interpretError(fmt.Errorf("team members: %w", err))
	}
	if !exists {
		return nil, fmt.Errorf("team %q: %w", team, rag.ErrNotFound)
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT team, user_name, role FROM {S}.team_members WHERE team = $1 ORDER BY user_name`), team)
	if err != nil {
		return nil, interpretError(fmt.Errorf("team members: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rag.TeamMember, error) {
		var m rag.TeamMember
		err := r.Scan(&m.Team, &m.User, &m.Role)
		return m, err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("team members: %w", err))
	}
	return append([]rag.TeamMember{}, out...), nil
}

// CreateAPIKey stores a key record under hash. ErrNotFound for an unknown user.
func (s *Store) CreateAPIKey(ctx context.Context, k *rag.APIKey, hash string) error {
	if len(k.Scopes) == 0 {
		return rag.Errorf(rag.CodeInvalid, "a key needs at least one scope")
	}
	var expires *time.Time
	if k.ExpiresAt != nil {
		e := k.ExpiresAt.UTC().Truncate(time.Microsecond)
		expires = &e
	}
	now := s.now()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM {S}.users WHERE name = $1)`), k.User).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("user %q: %w", k.User, rag.ErrNotFound)
		}
		_, err := tx.Exec(ctx, s.q(`INSERT INTO {S}.api_keys (prefix, hash, user_name, scopes, expires_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`), k.Prefix, hash, k.User, scopeStrings(k.Scopes), expires, now)
		return err
	})
	if err != nil {
		return err
	}
	k.CreatedAt, k.RevokedAt, k.ExpiresAt = now, nil, expires
	return nil
}

func scopeStrings(sc []rag.Scope) []string {
	out := make([]string, len(sc))
	for i, s := range sc {
		out[i] = string(s)
	}
	return out
}

const apiKeyCols = `prefix, user_name, scopes, expires_at, revoked_at, created_at`

func scanAPIKey(row pgx.Row) (*rag.APIKey, error) {
	var k rag.APIKey
	var scopes []string
	if err := row.Scan(&k.Prefix, &k.User, &scopes, &k.ExpiresAt, &k.RevokedAt, &k.CreatedAt); err != nil {
		return nil, err
	}
	for _, sc := range scopes {
		k.Scopes = append(k.Scopes, rag.Scope(sc))
	}
	for _, t := range []*time.Time{k.ExpiresAt, k.RevokedAt, &k.CreatedAt} {
		if t != nil {
			*t = t.UTC()
		}
	}
	return &k, nil
}

// ListAPIKeys returns every key record, newest first.
func (s *Store) ListAPIKeys(ctx context.Context) ([]*rag.APIKey, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+apiKeyCols+` FROM {S}.api_keys ORDER BY created_at DESC, prefix`))
	if err != nil {
		return nil, interpretError(fmt.Errorf("list keys: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.APIKey, error) { return scanAPIKey(r) })
	if err != nil {
		return nil, interpretError(fmt.Errorf("list keys: %w", err))
	}
	return append([]*rag.APIKey{}, out...), nil
}

// RevokeAPIKey revokes the key with that prefix or hash. ErrNotFound.
func (s *Store) RevokeAPIKey(ctx context.Context, prefixOrHash string) (*rag.APIKey, error) {
	k, err := scanAPIKey(s.pool.QueryRow(ctx, s.q(`UPDATE {S}.api_keys SET revoked_at = coalesce(revoked_at, $1)
		WHERE prefix = $2 OR hash = $2 RETURNING `+apiKeyCols), s.now(), prefixOrHash))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("key %q: %w", rag.ShortKey(prefixOrHash), rag.ErrNotFound)
	}
	if err != nil {
		return nil, interpretError(fmt.Errorf("revoke key: %w", err))
	}
	return k, nil
}

// ResolveAPIKey returns the principal of a valid key. ErrNotFound.
func (s *Store) ResolveAPIKey(ctx context.Context, hash string) (rag.Principal, error) {
	var name string
	var scopes, teams []string
	err := s.pool.QueryRow(ctx, s.q(`SELECT k.user_name, k.scopes,
			coalesce((SELECT array_agg(team ORDER BY team) FROM {S}.team_members m WHERE m.user_name = k.user_name), '{}')
		FROM {S}.api_keys k JOIN {S}.users u ON u.name = k.user_name
		WHERE k.hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $2) AND NOT u.disabled`),
		hash, s.now()).Scan(&name, &scopes, &teams)
	if errors.Is(err, pgx.ErrNoRows) {
		return rag.Principal{}, fmt.Errorf("key: %w", rag.ErrNotFound)
	}
	if err != nil {
		return rag.Principal{}, interpretError(fmt.Errorf("resolve key: %w", err))
	}
	p := rag.Principal{ID: rag.UserPrefix + name}
	for _, sc := range scopes {
		p.Scopes = append(p.Scopes, rag.Scope(sc))
	}
	if len(teams) > 0 {
		p.Groups = teams
	}
	p.Admin = slices.Contains(p.Scopes, rag.ScopeAdmin)
	return p, nil
}

// HasAPIKeys reports whether any key is stored.
func (s *Store) HasAPIKeys(ctx context.Context) (bool, error) {
	var ok bool
	if err := s.pool.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM {S}.api_keys)`)).Scan(&ok); err != nil {
		return false, interpretError(fmt.Errorf("count keys: %w", err))
	}
	return ok, nil
}
