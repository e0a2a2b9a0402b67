package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/audit"
)

// AppendAudit stores events in one statement.
func (s *Store) AppendAudit(ctx context.Context, events []audit.Event) error {
	n := len(events)
	at, principal, action, target, docs, client, outcome, detail := make([]time.Time, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	status := make([]int32, n)
	for i, e := range events {
		at[i], principal[i], action[i], target[i], client[i], outcome[i], detail[i] = e.At, e.Principal, e.Action, e.Target, e.Client, e.Outcome, e.Detail
		status[i] = int32(e.Status)
		// Document IDs travel as one text per event (unnest cannot take a ragged array).
		docs[i] = strings.Join(e.Documents, "\n")
	}
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {S}.audit_log (at, principal, action, target, documents, client, outcome, status, detail)
		SELECT u.at, u.principal, u.action, u.target, CASE WHEN u.docs = '' THEN '{}'::text[] ELSE string_to_array(u.docs, E'\n') END,
			u.client, u.outcome, u.status, u.detail
		FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[])
			WITH ORDINALITY AS u(at, principal, action, target, docs, client, outcome, status, detail, n) ORDER BY u.n`),
		at, principal, action, target, docs, client, outcome, status, detail)
	if err != nil {
		return interpretError(fmt.Errorf("append audit events: %w", err))
	}
	return nil
}

// ListAudit returns the events q selects, newest first.
func (s *Store) ListAudit(ctx context.Context, q audit.Query) ([]audit.Event, error) {
	var a args
	var conds []string
	for col, v := range map[string]string{"principal": q.Principal, "action": q.Action, "target": q.Target, "outcome": q.Outcome} {
		if v != "" {
			conds = append(conds, col+" = "+a.add(v))
		}
	}
	if q.Document != "" {
		p := a.add(q.Document)
		conds = append(conds, "(target = "+p+" OR "+p+" = ANY(documents))")
	}
	if !q.Since.IsZero() {
		conds = append(conds, "at >= "+a.add(q.Since))
	}
	if !q.Until.IsZero() {
		conds = append(conds, "at < "+a.add(q.Until))
	}
	if q.BeforeID > 0 {
		conds = append(conds, "id < "+a.add(q.BeforeID))
	}
	rows, _ := s.pool.Query(ctx, s.q(`SELECT id, at, principal, action, target, documents, client, outcome, status, detail
		FROM {S}.audit_log WHERE `+where(conds)+fmt.Sprintf(` ORDER BY id DESC LIMIT %d`, q.Size())), a...)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (audit.Event, error) {
		var e audit.Event
		err := r.Scan(&e.ID, &e.At, &e.Principal, &e.Action, &e.Target, &e.Documents, &e.Client, &e.Outcome, &e.Status, &e.Detail)
		e.At = e.At.UTC()
		if len(e.Documents) == 0 {
			e.Documents = nil
		}
		return e, err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("list audit events: %w", err))
	}
	if out == nil {
		out = []audit.Event{}
	}
	return out, nil
}

// PruneAudit removes the events older than before.
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {S}.audit_log WHERE at < $1`), before)
	if err != nil {
		return 0, interpretError(fmt.Errorf("prune audit events: %w", err))
	}
	return int(tag.RowsAffected()), nil
}
