package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

const questionColumns = `id, collection_id, title, body, author, status, attempts, last_error, space, created_at, updated_at`

func scanQuestion(row pgx.Row, extra ...any) (*rag.Question, error) {
	var q rag.Question
	var status string
	dst := append([]any{&q.ID, &q.CollectionID, &q.Title, &q.Body, &q.Author, &status, &q.Attempts, &q.LastError,
		&q.Space, &q.CreatedAt, &q.UpdatedAt}, extra...)
	if err := row.Scan(dst...); err != nil {
		return nil, err
	}
	q.Status, q.CreatedAt, q.UpdatedAt = rag.QuestionStatus(status), q.CreatedAt.UTC(), q.UpdatedAt.UTC()
	return &q, nil
}

func (s *Store) queryQuestions(ctx context.Context, withVector bool, sql string, args ...any) ([]*rag.Question, error) {
	return s.queryQuestionsOn(ctx, s.pool, withVector, sql, args...)
}

// queryQuestionsOn is queryQuestions on db (the pool, or a row-secured read's transaction).
func (s *Store) queryQuestionsOn(ctx context.Context, db querier, withVector bool, sql string, args ...any) ([]*rag.Question, error) {
	rows, err := db.Query(ctx, s.q(sql), args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.Question, error) {
		if !withVector {
			return scanQuestion(r)
		}
		var v []float32
		var passages []rag.QuestionPassage
		q, err := scanQuestion(r, &v, &passages)
		if err == nil {
			q.Vector, q.Passages = v, passages
		}
		return q, err
	})
}

// CreateQuestion stores q as an open question, assigning its ID and timestamps. ErrNotFound if the
// collection does not exist.
func (s *Store) CreateQuestion(ctx context.Context, q *rag.Question) error {
	if q.Title == "" {
		return rag.Errorf(rag.CodeInvalid, "a question needs a title")
	}
	id := q.ID
	if id == "" {
		id = uuid.NewString()
	}
	now := s.now()
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {S}.questions (id, collection_id, title, body, author, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, 'open', $6, $6)`), id, q.CollectionID, q.Title, q.Body, q.Author, now)
	if err != nil {
		return interpretError(fmt.Errorf("create question: %w", err))
	}
	q.ID, q.Status, q.Attempts, q.LastError, q.Space, q.Vector = id, rag.QuestionOpen, 0, "", "", nil
	q.CreatedAt, q.UpdatedAt = now, now
	return nil
}

// boardOf is the condition that restricts collection (a column or a scalar subquery) to the boards viewer
// sees whole, and the principal the read runs as (row-secured for a non-admin viewer): "TRUE" and the
// whole store's for nil or an admin.
func boardOf(a *args, viewer *rag.Principal, collection string) (string, rag.Principal) {
	if viewer == nil || viewer.Admin {
		return "TRUE", rag.LocalPrincipal
	}
	if unrestricted(*viewer) {
		return "TRUE", *viewer
	}
	return collection + " IN (" + visibleCollections(a, *viewer) + ")", *viewer
}

// GetQuestion returns a question. ErrNotFound, also when viewer does not see its board.
func (s *Store) GetQuestion(ctx context.Context, viewer *rag.Principal, id string) (*rag.Question, error) {
	a := args{id}
	board, reader := boardOf(&a, viewer, "collection_id")
	var q *rag.Question
	err := s.read(ctx, reader, func(db querier) error {
		var err error
		q, err = scanQuestion(db.QueryRow(ctx, s.q(`SELECT `+questionColumns+` FROM {S}.questions WHERE id = $1 AND `+board), a...))
		return err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("get question: %w", err))
	}
	return q, nil
}

// ListQuestions returns the questions q selects, newest first.
func (s *Store) ListQuestions(ctx context.Context, q rag.QuestionQuery) ([]*rag.Question, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	a := args{q.CollectionID, string(q.Status), limit}
	viewer, reader := boardOf(&a, q.Viewer, "collection_id")
	var out []*rag.Question
	err := s.read(ctx, reader, func(db querier) error {
		var err error
		out, err = s.queryQuestionsOn(ctx, db, false, `SELECT `+questionColumns+` FROM {S}.questions
			WHERE ($1 = '' OR collection_id = $1) AND ($2 = '' OR status = $2) AND `+viewer+`
			ORDER BY created_at DESC, id DESC LIMIT $3`, a...)
		return err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("list questions: %w", err))
	}
	return out, nil
}

// DeleteQuestion removes a question and its answers. ErrNotFound.
func (s *Store) DeleteQuestion(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "questions", "question", id)
}

// QuestionVectors returns a collection's questions that have a vector in space, with it and their passages;
// none when viewer (nil: anyone) does not see the board. Read as viewer (under row security when it is on).
func (s *Store) QuestionVectors(ctx context.Context, viewer *rag.Principal, collectionID string, space rag.Space) ([]*rag.Question, error) {
	a := args{collectionID, space.ID()}
	board, reader := boardOf(&a, viewer, "collection_id")
	var out []*rag.Question
	err := s.read(ctx, reader, func(db querier) error {
		var err error
		out, err = s.queryQuestionsOn(ctx, db, true, `SELECT `+questionColumns+`, vector, passages FROM {S}.questions
		WHERE collection_id = $1 AND space = $2 AND vector IS NOT NULL AND `+board+` ORDER BY created_at, id`, a...)
		return err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("question vectors: %w", err))
	}
	return out, nil
}

// QuestionsWithoutVector returns up to limit questions, oldest first, with no vector in space or no passages.
func (s *Store) QuestionsWithoutVector(ctx context.Context, space rag.Space, limit int) ([]*rag.Question, error) {
	if limit <= 0 {
		limit = 100
	}
	out, err := s.queryQuestions(ctx, false, `SELECT `+questionColumns+` FROM {S}.questions
		WHERE space <> $1 OR vector IS NULL OR passages IS NULL ORDER BY created_at, id LIMIT $2`, space.ID(), limit)
	if err != nil {
		return nil, interpretError(fmt.Errorf("questions without vector: %w", err))
	}
	return out, nil
}

// SetQuestionVector records a question's vector in space and its passages. ErrNotFound.
func (s *Store) SetQuestionVector(ctx context.Context, id string, space rag.Space, vector []float32, passages []rag.QuestionPassage) error {
	if space.Dim <= 0 || space.Provider == "" {
		return rag.Errorf(rag.CodeInvalid, "embedding space %q is not valid", space.ID())
	}
	if len(vector) != space.Dim {
		return rag.Errorf(rag.CodeInvalid, "vector has %d dimensions, space %s has %d", len(vector), space.ID(), space.Dim)
	}
	ps, err := rag.QuestionPassagesJSON(passages)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {S}.questions SET space = $1, vector = $2, passages = $3 WHERE id = $4`), space.ID(), vector, ps, id)
	if err != nil {
		return interpretError(fmt.Errorf("set question vector: %w", err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("question %q: %w", id, rag.ErrNotFound)
	}
	return nil
}

const answerColumns = `id, question_id, author, is_ai, body, source_refs, not_found, created_at, updated_at`

// liveAnswerColumns reads answerColumns with the source references to deleted documents left out (they are
// hidden at once; the purge removes them).
const liveAnswerColumns = `id, question_id, author, is_ai, body, (SELECT COALESCE(jsonb_agg(r.e ORDER BY r.n), '[]')
	FROM jsonb_array_elements(answers.source_refs) WITH ORDINALITY AS r(e, n)
	WHERE NOT EXISTS (SELECT 1 FROM {S}.documents d WHERE d.id = r.e ->> 'document_id' AND d.deleted_at IS NOT NULL)),
	not_found, created_at, updated_at`

func scanAnswer(row pgx.Row) (*rag.BoardAnswer, error) {
	var a rag.BoardAnswer
	if err := row.Scan(&a.ID, &a.QuestionID, &a.Author, &a.IsAI, &a.Body, &a.SourceRefs, &a.NotFound, &a.CreatedAt, &a.UpdatedAt); err != nil {
		return nil, err
	}
	if a.SourceRefs == nil {
		a.SourceRefs = []rag.SourceRef{}
	}
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return &a, nil
}

// AddAnswer stores a; an AI answer also marks its question answered and ends the claim. ErrConflict for a
// second AI answer (the partial unique index), ErrNotFound when the question does not exist.
func (s *Store) AddAnswer(ctx context.Context, a *rag.BoardAnswer) error {
	refs, err := a.Refs()
	if err != nil {
		return err
	}
	id := a.ID
	if id == "" {
		id = uuid.NewString()
	}
	now := s.now()
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.q(`INSERT INTO {S}.answers (`+answerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`),
			id, a.QuestionID, a.Author, a.IsAI, a.Body, refs, a.NotFound, now); err != nil {
			return fmt.Errorf("add answer: %w", err)
		}
		if !a.IsAI {
			return nil
		}
		_, err := tx.Exec(ctx, s.q(`UPDATE {S}.questions SET status = 'answered', last_error = '', claimed_by = '',
			claimed_until = '-infinity', updated_at = $1 WHERE id = $2`), now, a.QuestionID)
		return err
	})
	if err != nil {
		return err
	}
	a.ID, a.SourceRefs, a.CreatedAt, a.UpdatedAt = id, refs, now, now
	return nil
}

// ListAnswers returns a question's answers, oldest first.
func (s *Store) ListAnswers(ctx context.Context, viewer *rag.Principal, questionID string) ([]*rag.BoardAnswer, error) {
	a := args{questionID}
	board, reader := boardOf(&a, viewer, "(SELECT q.collection_id FROM {S}.questions q WHERE q.id = answers.question_id)")
	var out []*rag.BoardAnswer
	err := s.read(ctx, reader, func(db querier) error {
		rows, err := db.Query(ctx, s.q(`SELECT `+liveAnswerColumns+` FROM {S}.answers WHERE question_id = $1 AND `+board+
			` ORDER BY created_at, id`), a...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.BoardAnswer, error) { return scanAnswer(r) })
		return err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("list answers: %w", err))
	}
	if out == nil {
		out = []*rag.BoardAnswer{}
	}
	return out, nil
}

// ClaimQuestions claims open questions without an AI answer and without a live claim, oldest first. FOR
// UPDATE SKIP LOCKED makes concurrent claimers take different questions.
func (s *Store) ClaimQuestions(ctx context.Context, c rag.Claim) ([]*rag.Question, error) {
	c, err := c.Checked()
	if err != nil {
		return nil, err
	}
	limit := c.Limit
	out, err := s.queryQuestions(ctx, false, `UPDATE {S}.questions SET claimed_by = $1, claimed_until = $2
		WHERE id IN (SELECT id FROM {S}.questions q WHERE status = 'open' AND claimed_until < $3
			AND NOT EXISTS (SELECT 1 FROM {S}.answers a WHERE a.question_id = q.id AND a.is_ai)
			ORDER BY created_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
		RETURNING `+questionColumns, c.Worker, c.Until.UTC(), s.now(), limit)
	if err != nil {
		return nil, interpretError(fmt.Errorf("claim questions: %w", err))
	}
	rag.SortOldest(out)
	return out, nil
}

// ReleaseQuestion ends worker's claim on a question.
func (s *Store) ReleaseQuestion(ctx context.Context, id, worker string) error {
	_, err := s.pool.Exec(ctx, s.q(`UPDATE {S}.questions SET claimed_by = '', claimed_until = '-infinity'
		WHERE id = $1 AND claimed_by = $2`), id, worker)
	return interpretError(err)
}

// FailQuestion counts a failed attempt on a question claimed by worker.
func (s *Store) FailQuestion(ctx context.Context, id, worker, reason string, maxAttempts int) (*rag.Question, error) {
	q, err := scanQuestion(s.pool.QueryRow(ctx, s.q(`UPDATE {S}.questions SET attempts = attempts + 1, last_error = $1,
		status = CASE WHEN attempts + 1 >= $2 THEN 'failed' ELSE status END,
		claimed_by = '', claimed_until = '-infinity', updated_at = $3
		WHERE id = $4 AND claimed_by = $5 AND status = 'open' RETURNING `+questionColumns), reason, maxAttempts, s.now(), id, worker))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("question %q is not claimed by %s: %w", id, worker, rag.ErrConflict)
	}
	if err != nil {
		return nil, interpretError(fmt.Errorf("fail question: %w", err))
	}
	return q, nil
}

const runColumns = `id, trigger, worker, started_at, finished_at, answered, failed, skipped, errors`

func scanRun(row pgx.Row) (*rag.QARun, error) {
	var r rag.QARun
	var finished *time.Time
	if err := row.Scan(&r.ID, &r.Trigger, &r.Worker, &r.StartedAt, &finished, &r.Answered, &r.Failed, &r.Skipped, &r.Errors); err != nil {
		return nil, err
	}
	r.StartedAt = r.StartedAt.UTC()
	if finished != nil {
		t := finished.UTC()
		r.FinishedAt = &t
	}
	if r.Errors == nil {
		r.Errors = []string{}
	}
	return &r, nil
}

// CreateRun stores a started run, assigning its ID and start time.
func (s *Store) CreateRun(ctx context.Context, r *rag.QARun) error {
	id := uuid.NewString()
	now := s.now()
	if _, err := s.pool.Exec(ctx, s.q(`INSERT INTO {S}.qa_runs (id, trigger, worker, started_at) VALUES ($1, $2, $3, $4)`),
		id, r.Trigger, r.Worker, now); err != nil {
		return interpretError(fmt.Errorf("create run: %w", err))
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
	now := s.now()
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {S}.qa_runs SET finished_at = $1, answered = $2, failed = $3, skipped = $4,
		errors = $5 WHERE id = $6`), now, r.Answered, r.Failed, r.Skipped, errs, r.ID)
	if err != nil {
		return interpretError(fmt.Errorf("finish run: %w", err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("run %q: %w", r.ID, rag.ErrNotFound)
	}
	r.FinishedAt, r.Errors = &now, errs
	return nil
}

// GetRun returns a run. ErrNotFound.
func (s *Store) GetRun(ctx context.Context, id string) (*rag.QARun, error) {
	r, err := scanRun(s.pool.QueryRow(ctx, s.q(`SELECT `+runColumns+` FROM {S}.qa_runs WHERE id = $1`), id))
	if err != nil {
		return nil, interpretError(fmt.Errorf("get run: %w", err))
	}
	return r, nil
}

// ListRuns returns the latest runs, newest first.
func (s *Store) ListRuns(ctx context.Context, limit int) ([]*rag.QARun, error) {
	if limit <= 0 {
		limit = 20
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+runColumns+` FROM {S}.qa_runs ORDER BY started_at DESC, id DESC LIMIT $1`), limit)
	if err != nil {
		return nil, interpretError(fmt.Errorf("list runs: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.QARun, error) { return scanRun(r) })
	if err != nil {
		return nil, interpretError(fmt.Errorf("list runs: %w", err))
	}
	if out == nil {
		out = []*rag.QARun{}
	}
	return out, nil
}
