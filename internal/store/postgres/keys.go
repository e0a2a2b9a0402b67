package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// DataKeyIDs returns the IDs of the data keys that sealed stored blobs and chunk texts ("" for data in the
// clear), from the key_id indexes, and those of sources' credentials and webhooks' secrets.
func (s *Store) DataKeyIDs(ctx context.Context) ([]string, error) {
	rows, _ := s.pool.Query(ctx, s.q(`SELECT DISTINCT key_id FROM {S}.blobs UNION SELECT DISTINCT key_id FROM {S}.chunks
		UNION SELECT DISTINCT credentials_key FROM {S}.sources WHERE credentials IS NOT NULL
		UNION SELECT DISTINCT secret_key FROM {S}.webhooks`))
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
		creds, err := s.rekeySecrets(ctx, tx, "sources", "credentials", "credentials_key", limit)
		if err != nil {
			return fmt.Errorf("re-seal source credentials: %w", err)
		}
		secrets, err := s.rekeySecrets(ctx, tx, "webhooks", "secret", "secret_key", limit)
		if err != nil {
			return fmt.Errorf("re-seal webhook secrets: %w", err)
		}
		n = len(blobs) + len(chunks) + creds + secrets
		return nil
	})
	if err != nil {
		return 0, interpretError(err)
	}
	return n, nil
}

// rekeySecrets re-seals with the current key up to limit secrets sealed otherwise in column col of table
// (sources' credentials, webhooks' secrets), whose key ID is in keyCol.
func (s *Store) rekeySecrets(ctx context.Context, tx pgx.Tx, table, col, keyCol string, limit int) (int, error) {
	keys := s.opts.Keys
	cur := keys.ID()
	type secret struct {
		id, key string
		data    []byte
	}
	rows, _ := tx.Query(ctx, s.q(`SELECT id, `+keyCol+`, `+col+` FROM {S}.`+table+`
		WHERE `+col+` IS NOT NULL AND (`+keyCol+` < $1 OR `+keyCol+` > $1) LIMIT $2 FOR UPDATE`), cur, limit)
	secrets, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (secret, error) {
		var c secret
		err := r.Scan(&c.id, &c.key, &c.data)
		return c, err
	})
	if err != nil {
		return 0, err
	}
	for _, c := range secrets {
		plain, err := keys.Open(c.data, c.key)
		if err != nil {
			return 0, err
		}
		sealed, id := keys.Seal(plain)
		if _, err := tx.Exec(ctx, s.q(`UPDATE {S}.`+table+` SET `+col+` = $2, `+keyCol+` = $3 WHERE id = $1`), c.id, sealed, id); err != nil {
			return 0, err
		}
	}
	return len(secrets), nil
}
