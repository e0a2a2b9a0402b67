package rag

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// FeedbackTarget is what a rating is about: a whole answer or one of its sources.
type FeedbackTarget string

// Feedback targets.
const (
	FeedbackAnswer FeedbackTarget = "answer"
	FeedbackSource FeedbackTarget = "source"
)

// Limits of one feedback record, checked by the API (400 invalid_request beyond them).
const (
	MaxFeedbackComment  = 2000  // characters of a comment
	MaxFeedbackAnswer   = 20000 // characters of the rated answer's text
	MaxFeedbackPassages = 50    // passages an answer's rating carries (its cited sources)
)

// FeedbackPassage is a passage a rating refers to, as it was when rated: a source rated on its own, or a
// source the rated answer cited. Hash is PassageHash(text), which survives re-ingestion of an unchanged
// passage (chunk IDs do not).
type FeedbackPassage struct {
	ChunkID    int64  `json:"chunk_id"`
	DocumentID string `json:"document_id"`
	// File is the document's external ID when it has one, else its source (file name): what an eval set's
	// "file" names.
	File      string `json:"file"`
	Title     string `json:"title"`
	PageStart int    `json:"page_start"`
	PageEnd   int    `json:"page_end"`
	Hash      string `json:"hash"`
	Text      string `json:"text"`
}

// Vote is what a principal says of an answer or of one of its sources: thumbs up or down, an optional
// comment, and the exchange rated.
type Vote struct {
	Target FeedbackTarget `json:"target"`
	// Rating is +1 (thumbs up) or -1 (thumbs down).
	Rating  int    `json:"rating"`
	Comment string `json:"comment"`
	// Question, Answer and NotFound are the rated exchange (Answer is the answer's text, NotFound that it
	// was the not-covered reply); Collection the collection the question was asked in ("" for all).
	Question   string `json:"question"`
	Answer     string `json:"answer"`
	NotFound   bool   `json:"not_found"`
	Collection string `json:"collection"`
}

// Feedback is one principal's vote, as stored. A principal has at most one rating per (target, question,
// passage): rating again replaces it.
type Feedback struct {
	ID string `json:"id"`
	// Principal is who rated (the API key's or the local user's principal ID).
	Principal string `json:"principal"`
	Vote
	// Passages are the rated source (target source: exactly one) or the answer's cited sources.
	Passages []FeedbackPassage `json:"passages"`
	// Withheld: read back by a principal who can no longer read some of the passages' documents, which
	// were left out, and the answer's text (which may quote them) replaced by WithheldAnswer.
	Withheld  bool      `json:"withheld,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// FeedbackQuery selects feedback, newest first.
type FeedbackQuery struct {
	Principal string         // "" for everyone's
	Target    FeedbackTarget // "" for both
	Rating    int            // 0 for both
	Limit     int            // default 100, at most 10000
}

// MaxFeedbackList is the most records one ListFeedback returns.
const MaxFeedbackList = 10000

// FeedbackTally counts the source ratings of one passage (by its hash) of one document.
type FeedbackTally struct {
	DocumentID string
	Hash       string
	Up, Down   int
}

// FeedbackStore persists ratings. Both stores implement it and pass internal/store/storetest. Errors:
// ErrNotFound, CodeInvalid, CodeDBError as for Store.
type FeedbackStore interface {
	// PutFeedback stores f, replacing the principal's earlier rating of the same target, question and
	// passage (f keeps that record's ID and creation time); it assigns ID and timestamps. CodeInvalid when
	// the principal, question or rating (±1) is missing, or a source rating does not carry exactly one
	// passage.
	PutFeedback(ctx context.Context, f *Feedback) error
	// ListFeedback returns the feedback q selects, newest (updated) first.
	ListFeedback(ctx context.Context, q FeedbackQuery) ([]*Feedback, error)
	// DeleteFeedback removes a rating of principal. ErrNotFound when it has none with that ID.
	DeleteFeedback(ctx context.Context, principal, id string) error
	// FeedbackTallies counts, per passage of the given documents, the up and down ratings of sources
	// (answers' ratings are not counted), over every principal.
	FeedbackTallies(ctx context.Context, documentIDs []string) ([]FeedbackTally, error)
}

// PassageHash identifies a passage by its text (whitespace runs collapsed): 32 hex digits of its SHA-256.
func PassageHash(text string) string {
	h := sha256.Sum256([]byte(strings.Join(strings.Fields(text), " ")))
	return hex.EncodeToString(h[:16])
}

// CheckFeedback checks what every store requires of f before storing it.
func CheckFeedback(f *Feedback) error {
	switch {
	case f.Principal == "":
		return Errorf(CodeInvalid, "feedback needs a principal")
	case strings.TrimSpace(f.Question) == "":
		return Errorf(CodeInvalid, "feedback needs the question")
	case f.Rating != 1 && f.Rating != -1:
		return Errorf(CodeInvalid, "rating must be up (1) or down (-1), got %d", f.Rating)
	case f.Target == FeedbackSource && len(f.Passages) != 1:
		return Errorf(CodeInvalid, "a source rating carries exactly one passage, got %d", len(f.Passages))
	case f.Target != FeedbackSource && f.Target != FeedbackAnswer:
		return Errorf(CodeInvalid, "feedback target must be %q or %q, got %q", FeedbackAnswer, FeedbackSource, f.Target)
	}
	return nil
}

// Prepare is what every store does before storing f: it checks f (CheckFeedback) and returns its passages
// as JSON (an empty list for none) and what makes it unique for its principal besides target and question —
// the rated passage's document and hash for a source, "" for an answer.
func (f *Feedback) Prepare() (passages []byte, documentID, hash string, err error) {
	if err := CheckFeedback(f); err != nil {
		return nil, "", "", err
	}
	if f.Passages == nil {
		f.Passages = []FeedbackPassage{}
	}
	if passages, err = json.Marshal(f.Passages); err != nil {
		return nil, "", "", WrapError(CodeInvalid, err, "feedback passages: %v", err)
	}
	if f.Target == FeedbackSource {
		documentID, hash = f.Passages[0].DocumentID, f.Passages[0].Hash
	}
	return passages, documentID, hash, nil
}
