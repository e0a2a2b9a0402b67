package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// DataKeyIDs returns the IDs of the data keys that sealed stored blobs and chunk texts ("" for data in the
// clear), from the key_id indexes, and those of sources' credentials.
func (s *Store) DataKeyIDs(ctx context.Context) ([]string, error) {
	rows, _ := s.pool.Query(ctx, s.q(`SELECT DISTINCT key_id FROM {S}.blobs UNION SELECT DISTINCT key_id FROM {S}.chunks
		UNION SELECT DISTINCT credentials_key FROM {S}.sources WHERE credentials IS NOT NULL`))
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, interpretError(fmt.Errorf("data key ids: %w", err))
	}
	return ids, nil
}

// RekeyData re-seals with the current key (Options.Keys; nil stores in the clear) up to limit blobs and
// up to limit chunk texts sealed otherwise, and returns how many it changed: 0 when every row is under the
// current key. Each batch is one transaction, so a rotation can stop and resume anywhere.
func (s *Store) RekeyData(ctx context.Context, limit int) (int, error) {
	keys := s.opts.Keys
	cur := keys.ID()
	n := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		type row struct {
			id, key string
			data    []byte
		}
		rows, _ := tx.Query(ctx, s.q(`SELECT hash, key_id, data FROM {S}.blobs WHERE (key_id < $1 OR key_id > $1) LIMIT $2 FOR UPDATE`), cur, limit)
		blobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var b row
			err := r.Scan(&b.id, &b.key, &b.data)
			return b, err
		})
		if err != nil {
			return fmt.Errorf("re-seal blobs: %w", err)
		}
		for _, b := range blobs {
			plain, err := keys.Open(b.data, b.key)
			if err != nil {
				return err
			}
			sealed, id := keys.Seal(plain)
			if _, err := tx.Exec(ctx, s.q(`UPDATE {S}.blobs SET data = $2, key_id = $3 WHERE hash = $1`), b.id, sealed, id); err != nil {
				return fmt.Errorf("re-seal blobs: %w", err)
			}
		}
		rows, _ = tx.Query(ctx, s.q(`SELECT id::text, key_id, text FROM {S}.chunks WHERE (key_id < $1 OR key_id > $1) LIMIT $2 FOR UPDATE`), cur, limit)
		chunks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var c row
			var text string
			err := r.Scan(&c.id, &c.key, &text)
			c.data = []byte(text)
			return c, err
		})
		if err != nil {
			return fmt.Errorf("re-seal chunks: %w", err)
		}
		for _, c := range chunks {
			plain, err := keys.OpenText(string(c.data), c.key)
			if err != nil {
				return err
			}
			text, id := keys.SealText(plain)
			if _, err := tx.Exec(ctx, s.q(`UPDATE {S}.chunks SET text = $2, key_id = $3 WHERE id = $1::bigint`), c.id, text, id); err != nil {
				return fmt.Errorf("re-seal chunks: %w", err)
			}
		}
		rows, _ = tx.Query(ctx, s.q(`SELECT id, credentials_key, credentials FROM {S}.sources
			WHERE credentials IS NOT NULL AND (credentials_key < $1 OR credentials_key > $1) LIMIT $2 FOR UPDATE`), cur, limit)
		creds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var c row
			err := r.Scan(&c.id, &c.key, &c.data)
			return c, err
		})
		if err != nil {
			return fmt.Errorf("re-seal source credentials: %w", err)
		}
		for _, c := range creds {
			plain, err := keys.Open(c.data, c.key)
			if err != nil {
				return err
			}
			sealed, id := keys.Seal(plain)
			if _, err := tx.Exec(ctx, s.q(`UPDATE {S}.sources SET credentials = $2, credentials_key = $3 WHERE id = $1`), c.id, sealed, id); err != nil {
				return fmt.Errorf("re-seal source credentials: %w", err)
			}
		}
		n = len(blobs) + len(chunks) + len(creds)
		return nil
	})
	if err != nil {
		return 0, interpretError(err)
	}
	return n, nil
}
