package rag

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// QuestionStatus is where a board question stands.
type QuestionStatus string

// Question statuses. A question is open until it has an AI answer (answered) or the answer job gave up on
// it after its maximum attempts (failed). People's answers do not change the status.
const (
	QuestionOpen     QuestionStatus = "open"
	QuestionAnswered QuestionStatus = "answered"
	QuestionFailed   QuestionStatus = "failed"
)

// Limits of a question and of a person's answer (runes).
const (
	MaxQuestionTitle = 200
	MaxQuestionBody  = 4000
	MaxAnswerBody    = 20000
)

// Question is a question posted on a collection's Q&A board.
type Question struct {
	ID           string `json:"id"`
	CollectionID string `json:"collection_id"`
	Title        string `json:"title"`
	Body         string `json:"body"`
	// Author is the principal that asked ("" for anonymous).
	Author    string         `json:"author"`
	Status    QuestionStatus `json:"status"`
	Attempts  int            `json:"attempts"`
	LastError string         `json:"last_error,omitempty"`
	// Space is the ID of the embedding space of Vector ("" until the question is embedded).
	Space  string    `json:"space,omitempty"`
	Vector []float32 `json:"-"`
	// Passages are the passages of the collection that best matched the question when it was embedded,
	// best first (the board compares two questions by the documents they touch).
	Passages  []QuestionPassage `json:"-"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
}

// Text is what is embedded and answered: the title and the body.
func (q *Question) Text() string {
	if q.Body == "" || q.Body == q.Title {
		return q.Title
	}
	if q.Title == "" {
		return q.Body
	}
	return q.Title + "\n" + q.Body
}

// QuestionPassage is a passage a question matched: the chunk and its document.
type QuestionPassage struct {
	ChunkID    int64  `json:"chunk_id"`
	DocumentID string `json:"document_id"`
}

// MaxQuestionPassages is the most passages a question keeps.
const MaxQuestionPassages = 10

// QuestionPassagesJSON is the stored form of a question's passages (a JSON list; nil is []). CodeInvalid
// beyond MaxQuestionPassages.
func QuestionPassagesJSON(ps []QuestionPassage) (string, error) {
	if len(ps) > MaxQuestionPassages {
		return "", Errorf(CodeInvalid, "%d passages; a question keeps at most %d", len(ps), MaxQuestionPassages)
	}
	if ps == nil {
		ps = []QuestionPassage{}
	}
	b, err := json.Marshal(ps)
	return string(b), err
}

// SourceRef is a passage an AI answer cites: the document, its metadata (e.g. lecture_name and week), the
// chunk and the similarity that retrieved it.
type SourceRef struct {
	DocumentID string         `json:"document_id"`
	Title      string         `json:"title"`
	Source     string         `json:"source"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	ChunkID    int64          `json:"chunk_id"`
	ChunkIndex int            `json:"chunk_index"`
	Page       int            `json:"page,omitempty"`
	Similarity float64        `json:"similarity"`
}

// BoardAnswer is an answer to a board question: a person's (Author set) or the answer job's (IsAI, no
// author). A question has at most one AI answer.
type BoardAnswer struct {
	ID         string      `json:"id"`
	QuestionID string      `json:"question_id"`
	Author     *string     `json:"author"`
	IsAI       bool        `json:"is_ai"`
	Body       string      `json:"body"`
	SourceRefs []SourceRef `json:"source_refs"`
	NotFound   bool        `json:"not_found,omitempty"`
	CreatedAt  time.Time   `json:"created_at"`
	UpdatedAt  time.Time   `json:"updated_at"`
}

// Refs checks a before it is stored — an AI answer has no author, a person's answer has one — and returns
// its source references, never nil. CodeInvalid.
func (a *BoardAnswer) Refs() ([]SourceRef, error) {
	switch {
	case a.IsAI && a.Author != nil:
		return nil, Errorf(CodeInvalid, "an AI answer has no author")
	case !a.IsAI && a.Author == nil:
		return nil, Errorf(CodeInvalid, "a person's answer needs an author")
	case a.SourceRefs == nil:
		return []SourceRef{}, nil
	}
	return a.SourceRefs, nil
}

// QuestionQuery selects questions: of a collection (ID, "" for all) and a status ("" for any), newest
// first, at most Limit (100 when ≤ 0).
type QuestionQuery struct {
	CollectionID string
	Status       QuestionStatus
	Limit        int
	// Viewer, when set, restricts the list inside the query to the boards of collections it sees whole
	// (owner and visibility, docs/security.md); nil lists every board (the answer pass, the operator).
	Viewer *Principal
}

// Claim asks for open questions to answer: at most Limit, oldest first, that have no AI answer and no live
// claim of another worker. Each is claimed by Worker until Until.
type Claim struct {
	Worker string
	Limit  int
	Until  time.Time
}

// Checked returns c with its default Limit (10 when ≤ 0); CodeInvalid without a Worker.
func (c Claim) Checked() (Claim, error) {
	if c.Worker == "" {
		return c, Errorf(CodeInvalid, "a claim needs a worker")
	}
	if c.Limit <= 0 {
		c.Limit = 10
	}
	return c, nil
}

// QARun is the log of one pass of the answer job.
type QARun struct {
	ID         string     `json:"id"`
	Trigger    string     `json:"trigger"` // "schedule", "api", "cli"
	Worker     string     `json:"worker"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Answered   int        `json:"answered"`
	Failed     int        `json:"failed"`
	Skipped    int        `json:"skipped"`
	Errors     []string   `json:"errors"`
}

// QuestionStore persists the Q&A boards: questions, their answers and the answer job's run log. Both
// stores implement it and pass internal/store/storetest. Errors: ErrNotFound, ErrConflict, CodeInvalid,
// CodeDBError as for Store.
type QuestionStore interface {
	// CreateQuestion stores q (status open), assigning ID and timestamps. ErrNotFound if the collection
	// does not exist.
	CreateQuestion(ctx context.Context, q *Question) error
	// GetQuestion returns a question. viewer, when set, is who reads it: the question is returned only when
	// it sees the question's board (its collection, whole — as QuestionQuery.Viewer), decided inside the
	// query; ErrNotFound otherwise, as for a question that does not exist. nil: any board's (the answer job,
	// the CLI).
	GetQuestion(ctx context.Context, viewer *Principal, id string) (*Question, error)
	// ListQuestions returns the questions q selects, newest first (vectors not filled).
	ListQuestions(ctx context.Context, q QuestionQuery) ([]*Question, error)
	// DeleteQuestion removes a question with its answers. ErrNotFound.
	DeleteQuestion(ctx context.Context, id string) error
	// QuestionVectors returns the questions of a collection that have a vector in space, with it and their
	// passages; none when viewer (nil: anyone) does not see the board.
	QuestionVectors(ctx context.Context, viewer *Principal, collectionID string, space Space) ([]*Question, error)
	// QuestionsWithoutVector returns up to limit questions (any collection, oldest first) with no vector in
	// space, or whose passages were never recorded (questions embedded before the passages were kept): the
	// work list of the embedding backfill.
	QuestionsWithoutVector(ctx context.Context, space Space, limit int) ([]*Question, error)
	// SetQuestionVector records a question's vector in space (replacing one of another space) and its
	// passages (nil: none; at most MaxQuestionPassages, CodeInvalid beyond). ErrNotFound.
	SetQuestionVector(ctx context.Context, id string, space Space, vector []float32, passages []QuestionPassage) error

	// AddAnswer stores a, assigning ID and timestamps. An AI answer also marks the question answered and
	// ends its claim, in the same transaction; a second AI answer to a question is ErrConflict. ErrNotFound
	// if the question does not exist.
	AddAnswer(ctx context.Context, a *BoardAnswer) error
	// ListAnswers returns a question's answers, oldest first (the AI answer first when it is the oldest).
	// viewer as for GetQuestion: none when it does not see the question's board.
	ListAnswers(ctx context.Context, viewer *Principal, questionID string) ([]*BoardAnswer, error)

	// ClaimQuestions claims open questions for c.Worker (see Claim). Two concurrent callers never get the
	// same question while a claim lives.
	ClaimQuestions(ctx context.Context, c Claim) ([]*Question, error)
	// ReleaseQuestion ends worker's claim on a question without counting an attempt.
	ReleaseQuestion(ctx context.Context, id, worker string) error
	// FailQuestion counts a failed attempt on a question claimed by worker, records reason and ends the
	// claim; at maxAttempts attempts the question becomes failed. ErrConflict when worker no longer holds
	// the claim.
	FailQuestion(ctx context.Context, id, worker, reason string, maxAttempts int) (*Question, error)

	// CreateRun stores a run that started, assigning ID. FinishRun records its end and counts.
	CreateRun(ctx context.Context, r *QARun) error
	FinishRun(ctx context.Context, r *QARun) error
	// GetRun returns a run. ErrNotFound. ListRuns returns the latest runs, newest first, at most limit
	// (20 when ≤ 0).
	GetRun(ctx context.Context, id string) (*QARun, error)
	ListRuns(ctx context.Context, limit int) ([]*QARun, error)
}

// SortOldest orders questions oldest first (created, then ID): the order the answer job takes them in.
func SortOldest(qs []*Question) {
	slices.SortFunc(qs, func(a, b *Question) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
