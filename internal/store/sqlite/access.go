package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ragd/ragd/internal/rag"
)

var _ rag.AccessStore = (*Store)(nil)

// DocumentAccess says whether p may write a document it sees. ErrNotFound.
func (s *Store) DocumentAccess(ctx context.Context, p rag.Principal, id string) (rag.GrantAccess, error) {
	var w, wr where
	w.add(`d.id = ?`, id)
	w.visible(p)
	wr.writable(p)
	var write bool
	err := s.r.QueryRowContext(ctx, `SELECT `+wr.sql()+` FROM documents d WHERE `+w.sql(), append(wr.args, w.args...)...).Scan(&write)
	if errors.Is(err, sql.ErrNoRows) {
		return rag.GrantAccess{}, fmt.Errorf("document %s: %w", id, rag.ErrNotFound)
	}
	if err != nil {
		return rag.GrantAccess{}, dbError(err, "document access")
	}
	return rag.GrantAccess{Write: write}, nil
}

// CollectionAccess returns a collection p sees and whether p adds documents to it. ErrNotFound.
func (s *Store) CollectionAccess(ctx context.Context, p rag.Principal, idOrName string) (*rag.Collection, rag.GrantAccess, error) {
	cond, args, wcond, wargs, vcond, vargs := "1", []any(nil), "1", []any(nil), "1", []any(nil)
	if !p.Admin {
		cond, args = visibleCollectionsOrHolding(p)
		cond = `c.id IN (` + cond + `)`
		wcond, wargs = writableCollections(p)
		wcond = `c.id IN (` + wcond + `)`
		vcond, vargs = visibleCollections(p)
		vcond = `c.id IN (` + vcond + `)`
	}
	var acc rag.GrantAccess
	c, err := scanCollection(rowWithExtra(s.r.QueryRowContext(ctx, `SELECT `+collectionCols+`, `+wcond+`, `+vcond+` FROM collections c
		WHERE (c.id = ? OR c.name = ?) AND `+cond+` ORDER BY c.id = ? DESC LIMIT 1`,
		append(append(append(append(wargs, vargs...), idOrName, idOrName), args...), idOrName)...), &acc.Write, &acc.Whole))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rag.GrantAccess{}, fmt.Errorf("collection %q: %w", idOrName, rag.ErrNotFound)
	}
	if err != nil {
		return nil, rag.GrantAccess{}, dbError(err, "collection access")
	}
	return c, acc, nil
}

// visibleCollectionsOrHolding is a query of the IDs of the collections p sees: visible by their
// visibility, or holding a document p sees.
func visibleCollectionsOrHolding(p rag.Principal) (string, []any) {
	cols, args := visibleCollections(p)
	var w where
	w.visible(p)
	return cols + ` UNION SELECT d.collection_id FROM documents d WHERE ` + w.sql(), append(args, w.args...)
}

// VisibleCollections returns the collections p sees, by name.
func (s *Store) VisibleCollections(ctx context.Context, p rag.Principal) ([]*rag.Collection, error) {
	cond, args := "1", []any(nil)
	if !p.Admin {
		cond, args = visibleCollectionsOrHolding(p)
		cond = `id IN (` + cond + `)`
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+collectionCols+` FROM collections WHERE `+cond+` ORDER BY name`, args...)
	if err != nil {
		return nil, dbError(err, "list collections")
	}
	defer rows.Close()
	out := []*rag.Collection{}
	for rows.Next() {
		c, err := scanCollection(rows)
		if err != nil {
			return nil, dbError(err, "list collections")
		}
		out = append(out, c)
	}
	return out, dbError(rows.Err(), "list collections")
}

// extraScanner scans a row's leading columns into the caller's destinations and its last ones into extra.
type extraScanner struct {
	row   *sql.Row
	extra []any
}

func rowWithExtra(row *sql.Row, extra ...any) extraScanner { return extraScanner{row, extra} }

func (e extraScanner) Scan(dest ...any) error { return e.row.Scan(append(dest, e.extra...)...) }

// SetCollectionAccess changes a collection's owner and visibility. ErrNotFound.
func (s *Store) SetCollectionAccess(ctx context.Context, idOrName, owner string, v rag.Visibility) (*rag.Collection, error) {
	if err := rag.CheckAccessChange(owner, v); err != nil {
		return nil, err
	}
	var c *rag.Collection
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		c, err = scanCollection(tx.QueryRowContext(ctx, `UPDATE collections SET owner = coalesce(nullif(?1, ''), owner),
			visibility = coalesce(nullif(?2, ''), visibility), updated_at = ?3
			WHERE id = (SELECT id FROM collections WHERE id = ?4 OR name = ?4 ORDER BY id = ?4 DESC LIMIT 1)
			RETURNING `+collectionCols, owner, string(v), s.now().UnixMicro(), idOrName))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("collection %q: %w", idOrName, rag.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return nil, dbError(err, "change collection access")
	}
	return c, nil
}
