package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/ragd/ragd/internal/rag"
)

var _ rag.PrincipalStore = (*Store)(nil)

// CreateUser stores a new enabled user. ErrConflict.
func (s *Store) CreateUser(ctx context.Context, u *rag.User) error {
	if err := rag.ValidName("user", u.Name); err != nil {
		return err
	}
	now := s.now()
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO users (name, disabled, created_at) VALUES (?, 0, ?)`, u.Name, now.UnixMicro())
		return err
	})
	if err != nil {
		return dbError(err, "create user %q", u.Name)
	}
	u.Disabled, u.Teams, u.CreatedAt = false, nil, now
	return nil
}

// ListUsers returns every user with its teams, by name.
func (s *Store) ListUsers(ctx context.Context) ([]*rag.User, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT u.name, u.disabled, u.created_at,
			coalesce((SELECT json_group_array(team) FROM (SELECT team FROM team_members m WHERE m.user_name = u.name ORDER BY team)), '[]')
		FROM users u ORDER BY u.name`)
	if err != nil {
		return nil, dbError(err, "list users")
	}
	defer rows.Close()
	out := []*rag.User{}
	for rows.Next() {
		var u rag.User
		var created int64
		var teams string
		if err := rows.Scan(&u.Name, &u.Disabled, &created, &teams); err != nil {
			return nil, dbError(err, "list users")
		}
		if u.Teams, err = unmarshalStrings(teams); err != nil {
			return nil, dbError(err, "list users")
		}
		u.CreatedAt = fromMicro(created)
		out = append(out, &u)
	}
	return out, dbError(rows.Err(), "list users")
}

// SetUserDisabled disables or enables a user. ErrNotFound.
func (s *Store) SetUserDisabled(ctx context.Context, name string, disabled bool) error {
	return s.changeOne(ctx, fmt.Sprintf("user %q", name), `UPDATE users SET disabled = ? WHERE name = ?`, disabled, name)
}

// changeOne runs a statement that must change one row; ErrNotFound (naming what) when it changes none.
func (s *Store) changeOne(ctx context.Context, what, stmt string, args ...any) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, stmt, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, fmt.Errorf("%s: %w", what, rag.ErrNotFound))
		}
		return nil
	})
	return dbError(err, "change %s", what)
}

// CreateTeam stores a new team. ErrConflict.
func (s *Store) CreateTeam(ctx context.Context, t *rag.Team) error {
	if err := rag.ValidName("team", t.Name); err != nil {
		return err
	}
	now := s.now()
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO teams (name, created_at) VALUES (?, ?)`, t.Name, now.UnixMicro())
		return err
	})
	if err != nil {
		return dbError(err, "create team %q", t.Name)
	}
	t.Members, t.CreatedAt = 0, now
	return nil
}

// ListTeams returns every team with its member count, by name.
func (s *Store) ListTeams(ctx context.Context) ([]*rag.Team, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT t.name, t.created_at, (SELECT count(*) FROM team_members m WHERE m.team = t.name)
		FROM teams t ORDER BY t.name`)
	if err != nil {
		return nil, dbError(err, "list teams")
	}
	defer rows.Close()
	out := []*rag.Team{}
	for rows.Next() {
		var t rag.Team
		var created int64
		if err := rows.Scan(&t.Name, &created, &t.Members); err != nil {
			return nil, dbError(err, "list teams")
		}
		t.CreatedAt = fromMicro(created)
		out = append(out, &t)
	}
	return out, dbError(rows.Err(), "list teams")
}

// PutTeamMember adds a user to a team or changes its role. ErrNotFound.
func (s *Store) PutTeamMember(ctx context.Context, m rag.TeamMember) error {
	if err := m.Check(); err != nil {
		return err
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		var team, user bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM teams WHERE name = ?), EXISTS (SELECT 1 FROM users WHERE name = ?)`,
			m.Team, m.User).Scan(&team, &user); err != nil {
			return err
		}
		if err := m.Missing(team, user); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO team_members (team, user_name, role) VALUES (?, ?, ?)
			ON CONFLICT (team, user_name) DO UPDATE SET role = excluded.role`, m.Team, m.User, string(m.Role))
		return err
	})
	return dbError(err, "add %s to team %s", m.User, m.Team)
}

// RemoveTeamMember takes a user out of a team. ErrNotFound when it is not a member.
func (s *Store) RemoveTeamMember(ctx context.Context, team, user string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM team_members WHERE team = ? AND user_name = ?`, team, user)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return cmp.Or(err, fmt.Errorf("user %q in team %q: %w", user, team, rag.ErrNotFound))
		}
		return nil
	})
	return dbError(err, "remove %s from team %s", user, team)
}

// TeamMembers returns a team's members by user name. ErrNotFound.
func (s *Store) TeamMembers(ctx context.Context, team string) ([]rag.TeamMember, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM teams WHERE name = ?`, team).Scan(&n); err != nil {
		return nil, dbError(err, "team members")
	}
	if n == 0 {
		return nil, fmt.Errorf("team %q: %w", team, rag.ErrNotFound)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT team, user_name, role FROM team_members WHERE team = ? ORDER BY user_name`, team)
	if err != nil {
		return nil, dbError(err, "team members")
	}
	defer rows.Close()
	out := []rag.TeamMember{}
	for rows.Next() {
		var m rag.TeamMember
		if err := rows.Scan(&m.Team, &m.User, &m.Role); err != nil {
			return nil, dbError(err, "team members")
		}
		out = append(out, m)
	}
	return out, dbError(rows.Err(), "team members")
}

// CreateAPIKey stores a key record under hash. ErrNotFound for an unknown user.
func (s *Store) CreateAPIKey(ctx context.Context, k *rag.APIKey, hash string) error {
	if len(k.Scopes) == 0 {
		return rag.Errorf(rag.CodeInvalid, "a key needs at least one scope")
	}
	scopes, err := json.Marshal(k.Scopes)
	if err != nil {
		return err
	}
	var expires any
	if k.ExpiresAt != nil {
		expires = k.ExpiresAt.UnixMicro()
	}
	now := s.now()
	err = s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE name = ?`, k.User).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("user %q: %w", k.User, rag.ErrNotFound)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (prefix, hash, user_name, scopes, expires_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, k.Prefix, hash, k.User, string(scopes), expires, now.UnixMicro())
		return err
	})
	if err != nil {
		return dbError(err, "create key for %q", k.User)
	}
	k.CreatedAt, k.RevokedAt = now, nil
	if k.ExpiresAt != nil {
		e := fromMicro(k.ExpiresAt.UnixMicro())
		k.ExpiresAt = &e
	}
	return nil
}

const apiKeyCols = `prefix, user_name, scopes, expires_at, revoked_at, created_at`

func scanAPIKey(row interface{ Scan(...any) error }) (*rag.APIKey, error) {
	var k rag.APIKey
	var scopes string
	var expires, revoked sql.NullInt64
	var created int64
	if err := row.Scan(&k.Prefix, &k.User, &scopes, &expires, &revoked, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(scopes), &k.Scopes); err != nil {
		return nil, fmt.Errorf("key %s scopes: %w", k.Prefix, err)
	}
	if expires.Valid {
		t := fromMicro(expires.Int64)
		k.ExpiresAt = &t
	}
	if revoked.Valid {
		t := fromMicro(revoked.Int64)
		k.RevokedAt = &t
	}
	k.CreatedAt = fromMicro(created)
	return &k, nil
}

// ListAPIKeys returns every key record, newest first.
func (s *Store) ListAPIKeys(ctx context.Context) ([]*rag.APIKey, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+apiKeyCols+` FROM api_keys ORDER BY created_at DESC, prefix`)
	if err != nil {
		return nil, dbError(err, "list keys")
	}
	defer rows.Close()
	out := []*rag.APIKey{}
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, dbError(err, "list keys")
		}
		out = append(out, k)
	}
	return out, dbError(rows.Err(), "list keys")
}

// RevokeAPIKey revokes the key with that prefix or hash. ErrNotFound.
func (s *Store) RevokeAPIKey(ctx context.Context, prefixOrHash string) (*rag.APIKey, error) {
	var k *rag.APIKey
	now := s.now().UnixMicro()
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		k, err = scanAPIKey(tx.QueryRowContext(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?)
			WHERE prefix = ?2 OR hash = ?2 RETURNING `+apiKeyCols, now, prefixOrHash))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("key %q: %w", rag.ShortKey(prefixOrHash), rag.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return nil, dbError(err, "revoke key")
	}
	return k, nil
}

// ResolveAPIKey returns the principal of a valid key. ErrNotFound.
func (s *Store) ResolveAPIKey(ctx context.Context, hash string) (rag.Principal, error) {
	var name, scopes, teams string
	err := s.q.QueryRowContext(ctx, `SELECT k.user_name, k.scopes,
			coalesce((SELECT json_group_array(team) FROM (SELECT team FROM team_members m WHERE m.user_name = k.user_name ORDER BY team)), '[]')
		FROM api_keys k JOIN users u ON u.name = k.user_name
		WHERE k.hash = ? AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?) AND u.disabled = 0`,
		hash, s.now().UnixMicro()).Scan(&name, &scopes, &teams)
	if errors.Is(err, sql.ErrNoRows) {
		return rag.Principal{}, fmt.Errorf("key: %w", rag.ErrNotFound)
	}
	if err != nil {
		return rag.Principal{}, dbError(err, "resolve key")
	}
	p := rag.Principal{ID: rag.UserPrefix + name}
	if err := json.Unmarshal([]byte(scopes), &p.Scopes); err != nil {
		return rag.Principal{}, dbError(err, "resolve key")
	}
	if p.Groups, err = unmarshalStrings(teams); err != nil {
		return rag.Principal{}, dbError(err, "resolve key")
	}
	p.Admin = slices.Contains(p.Scopes, rag.ScopeAdmin)
	return p, nil
}

// HasAPIKeys reports whether any key is stored.
func (s *Store) HasAPIKeys(ctx context.Context) (bool, error) {
	var n int
	if err := s.q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM api_keys)`).Scan(&n); err != nil {
		return false, dbError(err, "count keys")
	}
	return n > 0, nil
}
