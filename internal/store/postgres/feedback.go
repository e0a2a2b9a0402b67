package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

const feedbackColumns = `id, principal, target, rating, comment, question, answer, not_found, collection, passages, created_at, updated_at`

func scanFeedback(row pgx.Row) (*rag.Feedback, error) {
	var f rag.Feedback
	var target string
	var passages []byte
	if err := row.Scan(&f.ID, &f.Principal, &target, &f.Rating, &f.Comment, &f.Question, &f.Answer, &f.NotFound,
		&f.Collection, &passages, &f.CreatedAt, &f.UpdatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(passages, &f.Passages); err != nil {
		return nil, fmt.Errorf("feedback %s: passages: %w", f.ID, err)
	}
	f.Target, f.CreatedAt, f.UpdatedAt = rag.FeedbackTarget(target), f.CreatedAt.UTC(), f.UpdatedAt.UTC()
	return &f, nil
}

// PutFeedback stores f, replacing the principal's earlier rating of the same target, question and passage.
func (s *Store) PutFeedback(ctx context.Context, f *rag.Feedback) error {
	passages, docID, hash, err := f.Prepare()
	if err != nil {
		return err
	}
	now := s.now()
	err = s.pool.QueryRow(ctx, s.q(`INSERT INTO {S}.feedback (id, principal, target, rating, comment, question, answer,
			not_found, collection, document_id, passage_hash, passages, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)
		ON CONFLICT (principal, target, question, document_id, passage_hash) DO UPDATE SET
			rating = excluded.rating, comment = excluded.comment, answer = excluded.answer,
			not_found = excluded.not_found, collection = excluded.collection, passages = excluded.passages,
			updated_at = excluded.updated_at
		RETURNING id, created_at`),
		uuid.NewString(), f.Principal, string(f.Target), f.Rating, f.Comment, f.Question, f.Answer, f.NotFound,
		f.Collection, docID, hash, string(passages), now).Scan(&f.ID, &f.CreatedAt)
	if err != nil {
		return interpretError(fmt.Errorf("put feedback: %w", err))
	}
	f.CreatedAt, f.UpdatedAt = f.CreatedAt.UTC(), now
	return nil
}

// ListFeedback returns the feedback q selects, newest first.
func (s *Store) ListFeedback(ctx context.Context, q rag.FeedbackQuery) ([]*rag.Feedback, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, rag.MaxFeedbackList)
	var out []*rag.Feedback
	err := s.read(ctx, ownRows(q.Principal), func(db querier) error {
		rows, err := db.Query(ctx, s.q(`SELECT `+feedbackColumns+` FROM {S}.feedback
			WHERE ($1 = '' OR principal = $1) AND ($2 = '' OR target = $2) AND ($3 = 0 OR rating = $3)
			ORDER BY updated_at DESC, id DESC LIMIT $4`), q.Principal, string(q.Target), q.Rating, limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.Feedback, error) { return scanFeedback(r) })
		return err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("list feedback: %w", err))
	}
	if out == nil {
		out = []*rag.Feedback{}
	}
	return out, nil
}

// DeleteFeedback removes a rating of principal. ErrNotFound.
func (s *Store) DeleteFeedback(ctx context.Context, principal, id string) error {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {S}.feedback WHERE id = $1 AND principal = $2`), id, principal)
	if err != nil {
		return interpretError(fmt.Errorf("delete feedback: %w", err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("feedback %q: %w", id, rag.ErrNotFound)
	}
	return nil
}

// FeedbackTallies counts the source ratings of the passages of the given documents.
func (s *Store) FeedbackTallies(ctx context.Context, documentIDs []string) ([]rag.FeedbackTally, error) {
	out := []rag.FeedbackTally{}
	if len(documentIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT document_id, passage_hash,
			count(*) FILTER (WHERE rating > 0), count(*) FILTER (WHERE rating < 0)
		FROM {S}.feedback WHERE target = 'source' AND document_id = ANY($1)
		GROUP BY document_id, passage_hash ORDER BY document_id, passage_hash`), documentIDs)
	if err != nil {
		return nil, interpretError(fmt.Errorf("feedback tallies: %w", err))
	}
	tallies, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rag.FeedbackTally, error) {
		var t rag.FeedbackTally
		err := r.Scan(&t.DocumentID, &t.Hash, &t.Up, &t.Down)
		return t, err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("feedback tallies: %w", err))
	}
	return append(out, tallies...), nil
}
