package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ragd/ragd/internal/rag"
)

const questionCols = `id, collection_id, title, body, author, status, attempts, last_error, space, created_at, updated_at`

func scanQuestion(row interface{ Scan(...any) error }, extra ...any) (*rag.Question, error) {
	var q rag.Question
	var status string
	var created, updated int64
	dst := append([]any{&q.ID, &q.CollectionID, &q.Title, &q.Body, &q.Author, &status, &q.Attempts, &q.LastError,
		&q.Space, &created, &updated}, extra...)
	if err := row.Scan(dst...); err != nil {
		return nil, err
	}
	q.Status, q.CreatedAt, q.UpdatedAt = rag.QuestionStatus(status), fromMicro(created), fromMicro(updated)
	return &q, nil
}

func collectQuestions(rows *sql.Rows, err error, withVector bool) ([]*rag.Question, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*rag.Question
	for rows.Next() {
		var raw []byte
		var passages sql.NullString
		var extra []any
		if withVector {
			extra = append(extra, &raw, &passages)
		}
		q, err := scanQuestion(rows, extra...)
		if err != nil {
			return nil, err
		}
		if withVector {
			q.Vector = decodeVector(nil, raw)
			if passages.Valid {
				if err := json.Unmarshal([]byte(passages.String), &q.Passages); err != nil {
					return nil, fmt.Errorf("question %s passages: %w", q.ID, err)
				}
			}
		}
		out = append(out, q)
	}
	return out, rows.Err()
}

// CreateQuestion stores q as an open question, assigning its ID and timestamps. ErrNotFound if the
// collection does not exist.
func (s *Store) CreateQuestion(ctx context.Context, q *rag.Question) error {
	if q.Title == "" {
		return rag.Errorf(rag.CodeInvalid, "a question needs a title")
	}
	id := q.ID
	if id == "" {
		id = newID()
	}
	now := s.now()
	err := s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM collections WHERE id = ?`, q.CollectionID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("collection %q: %w", q.CollectionID, rag.ErrNotFound)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO questions (id, collection_id, title, body, author, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 'open', ?, ?)`, id, q.CollectionID, q.Title, q.Body, q.Author, now.UnixMicro(), now.UnixMicro())
		return err
	})
	if err != nil {
		return dbError(err, "create question")
	}
	q.ID, q.Status, q.Attempts, q.LastError, q.Space, q.Vector = id, rag.QuestionOpen, 0, "", "", nil
	q.CreatedAt, q.UpdatedAt = now, now
	return nil
}

// GetQuestion returns a question. ErrNotFound.
func (s *Store) GetQuestion(ctx context.Context, viewer *rag.Principal, id string) (*rag.Question, error) {
	var w where
	w.add(`id = ?`, id)
	boardOf(&w, viewer, "collection_id")
	q, err := scanQuestion(s.r.QueryRowContext(ctx, `SELECT `+questionCols+` FROM questions WHERE `+w.sql(), w.args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("question %q: %w", id, rag.ErrNotFound)
	}
	if err != nil {
		return nil, dbError(err, "get question")
	}
	return q, nil
}

// boardOf restricts w to the boards viewer sees whole: collection (a column or a scalar subquery) is one
// of the collections it sees by owner and visibility. Nothing for nil or an admin.
func boardOf(w *where, viewer *rag.Principal, collection string) {
	if viewer != nil && !viewer.Admin {
		cols, args := visibleCollections(*viewer)
		w.add(collection+` IN (`+cols+`)`, args...)
	}
}

// ListQuestions returns the questions q selects, newest first.
func (s *Store) ListQuestions(ctx context.Context, q rag.QuestionQuery) ([]*rag.Question, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	var w where
	w.add(`? = '' OR collection_id = ?`, q.CollectionID, q.CollectionID)
	w.add(`? = '' OR status = ?`, string(q.Status), string(q.Status))
	boardOf(&w, q.Viewer, "collection_id")
	rows, err := s.r.QueryContext(ctx, `SELECT `+questionCols+` FROM questions WHERE `+w.sql()+`
		ORDER BY created_at DESC, id DESC LIMIT ?`, append(w.args, limit)...)
	out, err := collectQuestions(rows, err, false)
	if err != nil {
		return nil, dbError(err, "list questions")
	}
	return out, nil
}

// DeleteQuestion removes a question and its answers. ErrNotFound.
func (s *Store) DeleteQuestion(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "questions", "question", id)
}

// QuestionVectors returns a collection's questions that have a vector in space, with it and their passages.
func (s *Store) QuestionVectors(ctx context.Context, viewer *rag.Principal, collectionID string, space rag.Space) ([]*rag.Question, error) {
	w := where{}
	w.add(`collection_id = ?`, collectionID)
	w.add(`space = ?`, space.ID())
	w.add(`vector IS NOT NULL`)
	boardOf(&w, viewer, "collection_id")
	rows, err := s.r.QueryContext(ctx, `SELECT `+questionCols+`, vector, passages FROM questions WHERE `+w.sql()+` ORDER BY created_at, id`, w.args...)
	out, err := collectQuestions(rows, err, true)
	if err != nil {
		return nil, dbError(err, "question vectors")
	}
	return out, nil
}

// QuestionsWithoutVector returns up to limit questions, oldest first, with no vector in space or no passages.
func (s *Store) QuestionsWithoutVector(ctx context.Context, space rag.Space, limit int) ([]*rag.Question, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+questionCols+` FROM questions
		WHERE space <> ? OR vector IS NULL OR passages IS NULL ORDER BY created_at, id LIMIT ?`, space.ID(), limit)
	out, err := collectQuestions(rows, err, false)
	if err != nil {
		return nil, dbError(err, "questions without vector")
	}
	return out, nil
}

// SetQuestionVector records a question's vector in space and its passages. ErrNotFound.
func (s *Store) SetQuestionVector(ctx context.Context, id string, space rag.Space, vector []float32, passages []rag.QuestionPassage) error {
	if err := checkSpace(space); err != nil {
		return err
	}
	if len(vector) != space.Dim {
		return rag.Errorf(rag.CodeInvalid, "vector has %d dimensions, space %s has %d", len(vector), space.ID(), space.Dim)
	}
	ps, err := rag.QuestionPassagesJSON(passages)
	if err != nil {
		return err
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE questions SET space = ?, vector = ?, passages = ? WHERE id = ?`, space.ID(), encodeVector(vector), ps, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("question %q: %w", id, rag.ErrNotFound)
		}
		return nil
	})
	return dbError(err, "set question vector")
}

const answerCols = `id, question_id, author, is_ai, body, source_refs, not_found, created_at, updated_at`

// liveAnswerCols reads answerCols with the source references to deleted documents left out (they are
// hidden at once; the purge removes them).
const liveAnswerCols = `id, question_id, author, is_ai, body, (SELECT json_group_array(json(r.value)) FROM json_each(answers.source_refs) r
	WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.id = r.value ->> 'document_id' AND d.deleted_at IS NOT NULL)),
	not_found, created_at, updated_at`

func scanAnswer(row interface{ Scan(...any) error }) (*rag.BoardAnswer, error) {
	var a rag.BoardAnswer
	var author sql.NullString
	var refs string
	var created, updated int64
	if err := row.Scan(&a.ID, &a.QuestionID, &author, &a.IsAI, &a.Body, &refs, &a.NotFound, &created, &updated); err != nil {
		return nil, err
	}
	if author.Valid {
		a.Author = &author.String
	}
	if err := json.Unmarshal([]byte(refs), &a.SourceRefs); err != nil {
		return nil, fmt.Errorf("answer %s source refs: %w", a.ID, err)
	}
	if a.SourceRefs == nil {
		a.SourceRefs = []rag.SourceRef{}
	}
	a.CreatedAt, a.UpdatedAt = fromMicro(created), fromMicro(updated)
	return &a, nil
}

// AddAnswer stores a; an AI answer also marks its question answered and ends the claim. ErrConflict for a
// second AI answer, ErrNotFound when the question does not exist.
func (s *Store) AddAnswer(ctx context.Context, a *rag.BoardAnswer) error {
	refs, err := a.Refs()
	if err != nil {
		return err
	}
	b, err := json.Marshal(refs)
	if err != nil {
		return rag.WrapError(rag.CodeInvalid, err, "source refs cannot be stored")
	}
	id := a.ID
	if id == "" {
		id = newID()
	}
	now := s.now()
	var author sql.NullString
	if a.Author != nil {
		author = sql.NullString{String: *a.Author, Valid: true}
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM questions WHERE id = ?`, a.QuestionID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("question %q: %w", a.QuestionID, rag.ErrNotFound)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO answers (`+answerCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, a.QuestionID, author, a.IsAI, a.Body, string(b), a.NotFound, now.UnixMicro(), now.UnixMicro()); err != nil {
			return err
		}
		if !a.IsAI {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE questions SET status = 'answered', last_error = '', claimed_by = '',
			claimed_until = 0, updated_at = ? WHERE id = ?`, now.UnixMicro(), a.QuestionID)
		return err
	})
	if err != nil {
		return dbError(err, "add answer")
	}
	a.ID, a.SourceRefs, a.CreatedAt, a.UpdatedAt = id, refs, now, now
	return nil
}

// ListAnswers returns a question's answers, oldest first.
func (s *Store) ListAnswers(ctx context.Context, viewer *rag.Principal, questionID string) ([]*rag.BoardAnswer, error) {
	var w where
	w.add(`question_id = ?`, questionID)
	boardOf(&w, viewer, "(SELECT q.collection_id FROM questions q WHERE q.id = answers.question_id)")
	rows, err := s.r.QueryContext(ctx, `SELECT `+liveAnswerCols+` FROM answers WHERE `+w.sql()+` ORDER BY created_at, id`, w.args...)
	if err != nil {
		return nil, dbError(err, "list answers")
	}
	defer rows.Close()
	out := []*rag.BoardAnswer{}
	for rows.Next() {
		a, err := scanAnswer(rows)
		if err != nil {
			return nil, dbError(err, "list answers")
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(err, "list answers")
	}
	return out, nil
}

// ClaimQuestions claims open questions without an AI answer and without a live claim, oldest first. The
// single writer connection makes the select-and-update atomic.
func (s *Store) ClaimQuestions(ctx context.Context, c rag.Claim) ([]*rag.Question, error) {
	c, err := c.Checked()
	if err != nil {
		return nil, err
	}
	limit := c.Limit
	now := s.now().UnixMicro()
	var out []*rag.Question
	err = s.write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `UPDATE questions SET claimed_by = ?1, claimed_until = ?2
			WHERE id IN (SELECT id FROM questions q WHERE status = 'open' AND claimed_until < ?3
				AND NOT EXISTS (SELECT 1 FROM answers a WHERE a.question_id = q.id AND a.is_ai = 1)
				ORDER BY created_at, id LIMIT ?4)
			RETURNING `+questionCols, c.Worker, c.Until.UnixMicro(), now, limit)
		out, err = collectQuestions(rows, err, false)
		return err
	})
	if err != nil {
		return nil, dbError(err, "claim questions")
	}
	rag.SortOldest(out)
	return out, nil
}

// ReleaseQuestion ends worker's claim on a question.
func (s *Store) ReleaseQuestion(ctx context.Context, id, worker string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE questions SET claimed_by = '', claimed_until = 0 WHERE id = ? AND claimed_by = ?`, id, worker)
		return err
	})
	return dbError(err, "release question")
}

// FailQuestion counts a failed attempt on a question claimed by worker.
func (s *Store) FailQuestion(ctx context.Context, id, worker, reason string, maxAttempts int) (*rag.Question, error) {
	now := s.now().UnixMicro()
	var q *rag.Question
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		q, err = scanQuestion(tx.QueryRowContext(ctx, `UPDATE questions SET attempts = attempts + 1, last_error = ?1,
			status = CASE WHEN attempts + 1 >= ?2 THEN 'failed' ELSE status END,
			claimed_by = '', claimed_until = 0, updated_at = ?3
			WHERE id = ?4 AND claimed_by = ?5 AND status = 'open' RETURNING `+questionCols, reason, maxAttempts, now, id, worker))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("question %q is not claimed by %s: %w", id, worker, rag.ErrConflict)
		}
		return err
	})
	if err != nil {
		return nil, dbError(err, "fail question")
	}
	return q, nil
}

const runCols = `id, trigger, worker, started_at, finished_at, answered, failed, skipped, errors`

func scanRun(row interface{ Scan(...any) error }) (*rag.QARun, error) {
	var r rag.QARun
	var started int64
	var finished sql.NullInt64
	var errs string
	if err := row.Scan(&r.ID, &r.Trigger, &r.Worker, &started, &finished, &r.Answered, &r.Failed, &r.Skipped, &errs); err != nil {
		return nil, err
	}
	r.StartedAt = fromMicro(started)
	if finished.Valid {
		t := fromMicro(finished.Int64)
		r.FinishedAt = &t
	}
	if err := json.Unmarshal([]byte(errs), &r.Errors); err != nil {
		return nil, fmt.Errorf("run %s errors: %w", r.ID, err)
	}
	if r.Errors == nil {
		r.Errors = []string{}
	}
	return &r, nil
}

// CreateRun stores a started run, assigning its ID and start time.
func (s *Store) CreateRun(ctx context.Context, r *rag.QARun) error {
	id := newID()
	now := s.now()
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO qa_runs (id, trigger, worker, started_at) VALUES (?, ?, ?, ?)`,
			id, r.Trigger, r.Worker, now.UnixMicro())
		return err
	})
	if err != nil {
		return dbError(err, "create run")
	}
	r.ID, r.StartedAt, r.FinishedAt, r.Errors = id, now, nil, []string{}
	return nil
}

// FinishRun records a run's end and counts. ErrNotFound.
func (s *Store) FinishRun(ctx context.Context, r *rag.QARun) error {
	errs := r.Errors
	if errs == nil {
		errs = []string{}
	}
	b, err := json.Marshal(errs)
	if err != nil {
		return rag.WrapError(rag.CodeInvalid, err, "run errors cannot be stored")
	}
	now := s.now()
	err = s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE qa_runs SET finished_at = ?, answered = ?, failed = ?, skipped = ?, errors = ?
			WHERE id = ?`, now.UnixMicro(), r.Answered, r.Failed, r.Skipped, string(b), r.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("run %q: %w", r.ID, rag.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return dbError(err, "finish run")
	}
	r.FinishedAt, r.Errors = &now, errs
	return nil
}

// GetRun returns a run. ErrNotFound.
func (s *Store) GetRun(ctx context.Context, id string) (*rag.QARun, error) {
	r, err := scanRun(s.r.QueryRowContext(ctx, `SELECT `+runCols+` FROM qa_runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %q: %w", id, rag.ErrNotFound)
	}
	if err != nil {
		return nil, dbError(err, "get run")
	}
	return r, nil
}

// ListRuns returns the latest runs, newest first.
func (s *Store) ListRuns(ctx context.Context, limit int) ([]*rag.QARun, error) {
	if limit <= 0 {
		limit = 20
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+runCols+` FROM qa_runs ORDER BY started_at DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, dbError(err, "list runs")
	}
	defer rows.Close()
	out := []*rag.QARun{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, dbError(err, "list runs")
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(err, "list runs")
	}
	return out, nil
}
