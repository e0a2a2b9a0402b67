package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

var _ rag.AccessStore = (*Store)(nil)

// DocumentAccess says whether p may write a document it sees. ErrNotFound.
func (s *Store) DocumentAccess(ctx context.Context, p rag.Principal, id string) (rag.GrantAccess, error) {
	var a args
	write := writable(&a, p)
	conds, _ := docConditions(&a, p, rag.Filter{})
	conds = append(conds, "d.id = "+a.add(id))
	var ok bool
	err := s.read(ctx, p, func(db querier) error {
		if err := db.QueryRow(ctx, s.q(`SELECT `+write+` FROM {S}.documents d WHERE `+where(conds)), a...).Scan(&ok); err != nil {
			return fmt.Errorf("document %s access: %w", id, err)
		}
		return nil
	})
	return rag.GrantAccess{Write: ok}, err
}

// visibleCollectionsOrHolding is a query of the IDs of the collections p sees: visible by their
// visibility, or holding a document p sees.
func visibleCollectionsOrHolding(a *args, p rag.Principal) string {
	cols := visibleCollections(a, p)
	conds, _ := docConditions(a, p, rag.Filter{})
	return cols + ` UNION SELECT d.collection_id FROM {S}.documents d WHERE ` + where(conds)
}

// CollectionAccess returns a collection p sees and whether p adds documents to it. ErrNotFound.
func (s *Store) CollectionAccess(ctx context.Context, p rag.Principal, idOrName string) (*rag.Collection, rag.GrantAccess, error) {
	var a args
	cond, wcond, vcond := "TRUE", "TRUE", "TRUE"
	if !p.Admin {
		wcond = "c.id IN (" + writableCollections(&a, p) + ")"
		vcond = "c.id IN (" + visibleCollections(&a, p) + ")"
		cond = "c.id IN (" + visibleCollectionsOrHolding(&a, p) + ")"
	}
	key := a.add(idOrName)
	var acc rag.GrantAccess
	c, err := scanCollection(rowWithExtra{s.pool.QueryRow(ctx, s.q(`SELECT `+collectionColumns+`, `+wcond+`, `+vcond+` FROM {S}.collections c
		WHERE (c.id = `+key+` OR c.name = `+key+`) AND `+cond+` ORDER BY c.id = `+key+` DESC LIMIT 1`), a...), []any{&acc.Write, &acc.Whole}})
	if err != nil {
		return nil, rag.GrantAccess{}, interpretError(fmt.Errorf("collection %q access: %w", idOrName, err))
	}
	return c, acc, nil
}

// VisibleCollections returns the collections p sees, by name.
func (s *Store) VisibleCollections(ctx context.Context, p rag.Principal) ([]*rag.Collection, error) {
	var a args
	cond := "TRUE"
	if !p.Admin {
		cond = "id IN (" + visibleCollectionsOrHolding(&a, p) + ")"
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+collectionColumns+` FROM {S}.collections WHERE `+cond+` ORDER BY name`), a...)
	if err != nil {
		return nil, interpretError(fmt.Errorf("list collections: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.Collection, error) { return scanCollection(r) })
	if err != nil {
		return nil, interpretError(fmt.Errorf("list collections: %w", err))
	}
	return append([]*rag.Collection{}, out...), nil
}

// rowWithExtra scans a row's leading columns into the caller's destinations and its last ones into extra.
type rowWithExtra struct {
	row   pgx.Row
	extra []any
}

func (e rowWithExtra) Scan(dest ...any) error { return e.row.Scan(append(dest, e.extra...)...) }

// SetCollectionAccess changes a collection's owner and visibility. ErrNotFound.
func (s *Store) SetCollectionAccess(ctx context.Context, idOrName, owner string, v rag.Visibility) (*rag.Collection, error) {
	if err := rag.CheckAccessChange(owner, v); err != nil {
		return nil, err
	}
	c, err := scanCollection(s.pool.QueryRow(ctx, s.q(`UPDATE {S}.collections SET owner = coalesce(nullif($1, ''), owner),
		visibility = coalesce(nullif($2, ''), visibility), updated_at = $3
		WHERE id = (SELECT id FROM {S}.collections WHERE id = $4 OR name = $4 ORDER BY id = $4 DESC LIMIT 1)
		RETURNING `+collectionColumns), owner, string(v), s.now(), idOrName))
	if err != nil {
		return nil, interpretError(fmt.Errorf("collection %q access: %w", idOrName, err))
	}
	return c, nil
}
