package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ragd/ragd/internal/rag"
)

const feedbackCols = `id, principal, target, rating, comment, question, answer, not_found, collection, passages, created_at, updated_at`

func scanFeedback(row interface{ Scan(...any) error }) (*rag.Feedback, error) {
	var f rag.Feedback
	var target, passages string
	var created, updated int64
	if err := row.Scan(&f.ID, &f.Principal, &target, &f.Rating, &f.Comment, &f.Question, &f.Answer, &f.NotFound,
		&f.Collection, &passages, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(passages), &f.Passages); err != nil {
		return nil, fmt.Errorf("feedback %s: passages: %w", f.ID, err)
	}
	f.Target, f.CreatedAt, f.UpdatedAt = rag.FeedbackTarget(target), fromMicro(created), fromMicro(updated)
	return &f, nil
}

// PutFeedback stores f, replacing the principal's earlier rating of the same target, question and passage.
func (s *Store) PutFeedback(ctx context.Context, f *rag.Feedback) error {
	passages, docID, hash, err := f.Prepare()
	if err != nil {
		return err
	}
	now := s.now()
	var id string
	var created int64
	err = s.write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO feedback (id, principal, target, rating, comment, question, answer,
			not_found, collection, document_id, passage_hash, passages, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (principal, target, question, document_id, passage_hash) DO UPDATE SET
				rating = excluded.rating, comment = excluded.comment, answer = excluded.answer,
				not_found = excluded.not_found, collection = excluded.collection, passages = excluded.passages,
				updated_at = excluded.updated_at
			RETURNING id, created_at`,
			newID(), f.Principal, string(f.Target), f.Rating, f.Comment, f.Question, f.Answer, f.NotFound, f.Collection,
			docID, hash, string(passages), now.UnixMicro(), now.UnixMicro()).Scan(&id, &created)
	})
	if err != nil {
		return dbError(err, "put feedback")
	}
	f.ID, f.CreatedAt, f.UpdatedAt = id, fromMicro(created), now
	return nil
}

// ListFeedback returns the feedback q selects, newest first.
func (s *Store) ListFeedback(ctx context.Context, q rag.FeedbackQuery) ([]*rag.Feedback, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, rag.MaxFeedbackList)
	rows, err := s.r.QueryContext(ctx, `SELECT `+feedbackCols+` FROM feedback
		WHERE (?1 = '' OR principal = ?1) AND (?2 = '' OR target = ?2) AND (?3 = 0 OR rating = ?3)
		ORDER BY updated_at DESC, id DESC LIMIT ?4`, q.Principal, string(q.Target), q.Rating, limit)
	if err != nil {
		return nil, dbError(err, "list feedback")
	}
	defer rows.Close()
	out := []*rag.Feedback{}
	for rows.Next() {
		f, err := scanFeedback(rows)
		if err != nil {
			return nil, dbError(err, "list feedback")
		}
		out = append(out, f)
	}
	return out, dbError(rows.Err(), "list feedback")
}

// DeleteFeedback removes a rating of principal. ErrNotFound.
func (s *Store) DeleteFeedback(ctx context.Context, principal, id string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM feedback WHERE id = ? AND principal = ?`, id, principal)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("feedback %q: %w", id, rag.ErrNotFound)
		}
		return nil
	})
	return dbError(err, "delete feedback")
}

// FeedbackTallies counts the source ratings of the passages of the given documents.
func (s *Store) FeedbackTallies(ctx context.Context, documentIDs []string) ([]rag.FeedbackTally, error) {
	out := []rag.FeedbackTally{}
	if len(documentIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(documentIDs))
	for i, id := range documentIDs {
		args[i] = id
	}
	rows, err := s.r.QueryContext(ctx, `SELECT document_id, passage_hash,
			sum(CASE WHEN rating > 0 THEN 1 ELSE 0 END), sum(CASE WHEN rating < 0 THEN 1 ELSE 0 END)
		FROM feedback WHERE target = 'source' AND document_id IN (?`+strings.Repeat(", ?", len(args)-1)+`)
		GROUP BY document_id, passage_hash ORDER BY document_id, passage_hash`, args...)
	if err != nil {
		return nil, dbError(err, "feedback tallies")
	}
	defer rows.Close()
	for rows.Next() {
		var t rag.FeedbackTally
		if err := rows.Scan(&t.DocumentID, &t.Hash, &t.Up, &t.Down); err != nil {
			return nil, dbError(err, "feedback tallies")
		}
		out = append(out, t)
	}
	return out, dbError(rows.Err(), "feedback tallies")
}
