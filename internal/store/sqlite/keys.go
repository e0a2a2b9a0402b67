package sqlite

import (
	"context"
	"database/sql"
)

// DataKeyIDs returns the IDs of the data keys that sealed stored blobs and chunk texts ("" for data in the
// clear), from the key_id indexes, and those of sources' credentials and webhooks' secrets.
func (s *Store) DataKeyIDs(ctx context.Context) ([]string, error) {
	rows, err := s.w.QueryContext(ctx, `SELECT DISTINCT key_id FROM blobs UNION SELECT DISTINCT key_id FROM chunks
		UNION SELECT DISTINCT credentials_key FROM sources WHERE credentials IS NOT NULL
		UNION SELECT DISTINCT secret_key FROM webhooks`)
	if err != nil {
		return nil, dbError(err, "data key ids")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, dbError(err, "data key ids")
		}
		out = append(out, id)
	}
	return out, dbError(rows.Err(), "data key ids")
}

// RekeyData re-seals with the current key (Options.Keys; nil stores in the clear) up to limit blobs and
// up to limit chunk texts sealed otherwise, and returns how many it changed: 0 when every row is under the
// current key. Each batch is one transaction, so a rotation can stop and resume anywhere.
func (s *Store) RekeyData(ctx context.Context, limit int) (int, error) {
	keys := s.opts.Keys
	cur := keys.ID()
	n := 0
	err := s.write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT hash, data, key_id FROM blobs WHERE key_id < ?1 OR key_id > ?1 LIMIT ?2`, cur, limit)
		if err != nil {
			return err
		}
		type blob struct {
			hash, key string
			data      []byte
		}
		var blobs []blob
		for rows.Next() {
			var b blob
			if err := rows.Scan(&b.hash, &b.data, &b.key); err != nil {
				rows.Close()
				return err
			}
			blobs = append(blobs, b)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, b := range blobs {
			plain, err := keys.Open(b.data, b.key)
			if err != nil {
				return err
			}
			sealed, id := keys.Seal(plain)
			if _, err := tx.ExecContext(ctx, `UPDATE blobs SET data = ?, key_id = ? WHERE hash = ?`, sealed, id, b.hash); err != nil {
				return err
			}
		}
		crows, err := tx.QueryContext(ctx, `SELECT id, text, key_id FROM chunks WHERE key_id < ?1 OR key_id > ?1 LIMIT ?2`, cur, limit)
		if err != nil {
			return err
		}
		type chunk struct {
			id        int64
			text, key string
		}
		var chunks []chunk
		for crows.Next() {
			var c chunk
			if err := crows.Scan(&c.id, &c.text, &c.key); err != nil {
				crows.Close()
				return err
			}
			chunks = append(chunks, c)
		}
		crows.Close()
		if err := crows.Err(); err != nil {
			return err
		}
		for _, c := range chunks {
			plain, err := keys.OpenText(c.text, c.key)
			if err != nil {
				return err
			}
			text, id := keys.SealText(plain)
			if _, err := tx.ExecContext(ctx, `UPDATE chunks SET text = ?, key_id = ? WHERE id = ?`, text, id, c.id); err != nil {
				return err
			}
		}
		creds, err := s.rekeySecrets(ctx, tx, "sources", "credentials", "credentials_key", limit)
		if err != nil {
			return err
		}
		secrets, err := s.rekeySecrets(ctx, tx, "webhooks", "secret", "secret_key", limit)
		n = len(blobs) + len(chunks) + creds + secrets
		return err
	})
	if err != nil {
		return 0, dbError(err, "re-seal data")
	}
	return n, nil
}

// rekeySecrets re-seals with the current key up to limit secrets sealed otherwise in column col of table
// (sources' credentials, webhooks' secrets), whose key ID is in keyCol.
func (s *Store) rekeySecrets(ctx context.Context, tx *sql.Tx, table, col, keyCol string, limit int) (int, error) {
	keys := s.opts.Keys
	cur := keys.ID()
	rows, err := tx.QueryContext(ctx, `SELECT id, `+col+`, `+keyCol+` FROM `+table+`
		WHERE `+col+` IS NOT NULL AND (`+keyCol+` < ?1 OR `+keyCol+` > ?1) LIMIT ?2`, cur, limit)
	if err != nil {
		return 0, err
	}
	type secret struct {
		id, key string
		data    []byte
	}
	var secrets []secret
	for rows.Next() {
		var c secret
		if err := rows.Scan(&c.id, &c.data, &c.key); err != nil {
			rows.Close()
			return 0, err
		}
		secrets = append(secrets, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, c := range secrets {
		plain, err := keys.Open(c.data, c.key)
		if err != nil {
			return 0, err
		}
		sealed, id := keys.Seal(plain)
		if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET `+col+` = ?, `+keyCol+` = ? WHERE id = ?`, sealed, id, c.id); err != nil {
			return 0, err
		}
	}
	return len(secrets), nil
}
