package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ragd/ragd/internal/rag"
)

const collectionCols = `id, name, description, owner, settings, profile, created_at, updated_at, visibility`

func scanCollection(row interface{ Scan(...any) error }) (*rag.Collection, error) {
	var c rag.Collection
	var settings, profile string
	var created, updated int64
	if err := row.Scan(&c.ID, &c.Name, &c.Description, &c.Owner, &settings, &profile, &created, &updated, &c.Visibility); err != nil {
		return nil, err
	}
	if profile != "" {
		c.Profile = []byte(profile)
	}
	m, err := unmarshalMap(settings)
	if err != nil {
		return nil, fmt.Errorf("collection %s settings: %w", c.ID, err)
	}
	c.Settings, c.CreatedAt, c.UpdatedAt = m, fromMicro(created), fromMicro(updated)
	return &c, nil
}

// CreateCollection stores c, assigning its ID (when empty) and timestamps. ErrConflict if the name exists.
func (s *Store) CreateCollection(ctx context.Context, c *rag.Collection) error {
	if c.Name == "" {
		return rag.Errorf(rag.CodeInvalid, "a collection needs a name")
	}
	settings, err := marshalJSON(c.Settings, "{}")
	if err != nil {
		return err
	}
	vis, err := rag.CheckVisibility(c.Visibility)
	if err != nil {
		return err
	}
	id := c.ID
	if id == "" {
		id = newID()
	}
	now := s.now()
	err = s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO collections (`+collectionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, c.Name, c.Description, c.Owner, settings, string(c.Profile), now.UnixMicro(), now.UnixMicro(), string(vis))
		return err
	})
	if err != nil {
		return dbError(err, "create collection %q", c.Name)
	}
	c.ID, c.CreatedAt, c.UpdatedAt, c.Visibility = id, now, now, vis
	return nil
}

// GetCollection returns the collection with that ID or, failing that, that name. ErrNotFound.
func (s *Store) GetCollection(ctx context.Context, idOrName string) (*rag.Collection, error) {
	c, err := scanCollection(s.r.QueryRowContext(ctx, `SELECT `+collectionCols+` FROM collections
		WHERE id = ?1 OR name = ?1 ORDER BY id = ?1 DESC LIMIT 1`, idOrName))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("collection %q: %w", idOrName, rag.ErrNotFound)
	}
	if err != nil {
		return nil, dbError(err, "get collection")
	}
	return c, nil
}

// EnsureCollection returns the collection named name, creating it owned by owner if it does not exist.
func (s *Store) EnsureCollection(ctx context.Context, name, owner string) (*rag.Collection, error) {
	if name == "" {
		return nil, rag.Errorf(rag.CodeInvalid, "a collection needs a name")
	}
	var c *rag.Collection
	now := s.now().UnixMicro()
	err := s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO collections (`+collectionCols+`) VALUES (?, ?, '', ?, '{}', '', ?, ?, 'private')
			ON CONFLICT (name) DO NOTHING`, newID(), name, owner, now, now); err != nil {
			return err
		}
		var err error
		c, err = scanCollection(tx.QueryRowContext(ctx, `SELECT `+collectionCols+` FROM collections WHERE name = ?`, name))
		return err
	})
	if err != nil {
		return nil, dbError(err, "ensure collection %q", name)
	}
	return c, nil
}

// UpdateCollection replaces the description, settings and profile of the collection with c.ID and sets
// c.UpdatedAt. ErrNotFound.
func (s *Store) UpdateCollection(ctx context.Context, c *rag.Collection) error {
	settings, err := marshalJSON(c.Settings, "{}")
	if err != nil {
		return err
	}
	now := s.now()
	err = s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE collections SET description = ?, settings = ?, profile = ?, updated_at = ?
			WHERE id = ?`, c.Description, settings, string(c.Profile), now.UnixMicro(), c.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, fmt.Errorf("collection %q: %w", c.ID, rag.ErrNotFound))
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, rag.ErrNotFound) {
			return err
		}
		return dbError(err, "update collection %q", c.Name)
	}
	c.UpdatedAt = now
	return nil
}

// ListCollections returns all collections ordered by name.
func (s *Store) ListCollections(ctx context.Context) ([]*rag.Collection, error) {
	// Every search lists the collections (for their synonyms): the statement is prepared once.
	st, err := s.qstmts.get(ctx, `SELECT `+collectionCols+` FROM collections ORDER BY name`)
	if err != nil {
		return nil, dbError(err, "list collections")
	}
	rows, err := st.QueryContext(ctx)
	if err != nil {
		return nil, dbError(err, "list collections")
	}
	defer rows.Close()
	var out []*rag.Collection
	for rows.Next() {
		c, err := scanCollection(rows)
		if err != nil {
			return nil, dbError(err, "list collections")
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(err, "list collections")
	}
	return out, nil
}
