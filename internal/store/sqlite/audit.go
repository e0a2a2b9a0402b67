package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/audit"
)

// AppendAudit stores events in one transaction.
func (s *Store) AppendAudit(ctx context.Context, events []audit.Event) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO audit_log (at, principal, action, target, documents, client, outcome,
			status, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for _, e := range events {
			docs, err := marshalJSON(e.Documents, "[]")
			if err != nil {
				return err
			}
			if _, err := ins.ExecContext(ctx, e.At.UnixMicro(), e.Principal, e.Action, e.Target, docs, e.Client, e.Outcome,
				e.Status, e.Detail); err != nil {
				return err
			}
		}
		return nil
	})
	return dbError(err, "append audit events")
}

// ListAudit returns the events q selects, newest first.
func (s *Store) ListAudit(ctx context.Context, q audit.Query) ([]audit.Event, error) {
	var conds []string
	var args []any
	add := func(cond string, a ...any) { conds, args = append(conds, cond), append(args, a...) }
	for col, v := range map[string]string{"principal": q.Principal, "action": q.Action, "target": q.Target, "outcome": q.Outcome} {
		if v != "" {
			add(col+` = ?`, v)
		}
	}
	if q.Document != "" {
		add(`target = ? OR EXISTS (SELECT 1 FROM json_each(documents) WHERE value = ?)`, q.Document, q.Document)
	}
	if !q.Since.IsZero() {
		add(`at >= ?`, q.Since.UnixMicro())
	}
	if !q.Until.IsZero() {
		add(`at < ?`, q.Until.UnixMicro())
	}
	if q.BeforeID > 0 {
		add(`id < ?`, q.BeforeID)
	}
	where := "1"
	if len(conds) > 0 {
		where = "(" + strings.Join(conds, ") AND (") + ")"
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, at, principal, action, target, documents, client, outcome, status, detail
		FROM audit_log WHERE `+where+` ORDER BY id DESC LIMIT ?`, append(args, q.Size())...)
	if err != nil {
		return nil, dbError(err, "list audit events")
	}
	defer rows.Close()
	out := []audit.Event{}
	for rows.Next() {
		var e audit.Event
		var at int64
		var docs string
		if err := rows.Scan(&e.ID, &at, &e.Principal, &e.Action, &e.Target, &docs, &e.Client, &e.Outcome, &e.Status, &e.Detail); err != nil {
			return nil, dbError(err, "list audit events")
		}
		e.At = fromMicro(at)
		if err := json.Unmarshal([]byte(docs), &e.Documents); err != nil {
			return nil, fmt.Errorf("audit event %d: %w", e.ID, err)
		}
		if len(e.Documents) == 0 {
			e.Documents = nil
		}
		out = append(out, e)
	}
	return out, dbError(rows.Err(), "list audit events")
}

// PruneAudit removes the events older than before.
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM audit_log WHERE at < ?`, before.UnixMicro())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), dbError(err, "prune audit events")
}
