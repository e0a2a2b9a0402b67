// Package feedback records users' thumbs up and down, with an optional comment, on answers and on their
// sources (per principal: the API key's or the local user's), and turns them into eval items (Export): a
// source rated up becomes an answerable question with that file and page, a source or answer rated down a
// regression question whose passages must stay out of the top 5. The ratings of sources also feed the
// re-ranking stage's importance (rerank.FeedbackSignals).
package feedback

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// Passages reads the passages a rating names: Hits by chunk ID, and the document, to check that the
// principal sees it (rag.Store implements it).
type Passages interface {
	Hits(ctx context.Context, p rag.Principal, ids []int64) ([]rag.Hit, error)
	GetDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error)
}

// Service rates answers and sources.
type Service struct {
	store    rag.FeedbackStore
	passages Passages
}

// New returns a Service over st, reading passages through ps.
func New(st rag.FeedbackStore, ps Passages) *Service { return &Service{store: st, passages: ps} }

// Request is a rating as the API takes it. The passages are named by chunk ID (the sources' chunk_id of
// an answer) and read from the store, so a rating records what the principal was shown.
type Request struct {
	rag.Vote
	// ChunkID is the rated source (target source); ChunkIDs are the answer's cited sources (target answer).
	ChunkID  int64   `json:"chunk_id"`
	ChunkIDs []int64 `json:"chunk_ids"`
}

// Rate stores p's rating, replacing p's earlier rating of the same target, question and passage.
// CodeInvalid for a missing or over-long field, a source that is not given, a passage that does not exist
// or that p does not see.
func (s *Service) Rate(ctx context.Context, p rag.Principal, req Request) (*rag.Feedback, error) {
	q := strings.TrimSpace(req.Question)
	switch {
	case q == "":
		return nil, rag.Errorf(rag.CodeQuestionRequired, "question is required")
	case utf8.RuneCountInString(q) > rag.MaxQuestionChars:
		return nil, rag.Errorf(rag.CodeInvalid, "question is over %d characters", rag.MaxQuestionChars)
	case utf8.RuneCountInString(req.Comment) > rag.MaxFeedbackComment:
		return nil, rag.Errorf(rag.CodeInvalid, "comment is over %d characters", rag.MaxFeedbackComment)
	case utf8.RuneCountInString(req.Answer) > rag.MaxFeedbackAnswer:
		return nil, rag.Errorf(rag.CodeInvalid, "answer is over %d characters", rag.MaxFeedbackAnswer)
	case len(req.ChunkIDs) > rag.MaxFeedbackPassages:
		return nil, rag.Errorf(rag.CodeInvalid, "chunk_ids has %d passages, at most %d", len(req.ChunkIDs), rag.MaxFeedbackPassages)
	case req.Rating != 1 && req.Rating != -1:
		return nil, rag.Errorf(rag.CodeInvalid, "rating must be 1 (up) or -1 (down)")
	}
	var ids []int64
	switch req.Target {
	case rag.FeedbackSource:
		if req.ChunkID <= 0 || len(req.ChunkIDs) > 0 {
			return nil, rag.Errorf(rag.CodeInvalid, "a source rating names its passage by chunk_id (and no chunk_ids)")
		}
		ids = []int64{req.ChunkID}
	case rag.FeedbackAnswer:
		if req.ChunkID != 0 {
			return nil, rag.Errorf(rag.CodeInvalid, "an answer rating names its cited passages by chunk_ids (not chunk_id)")
		}
		ids = req.ChunkIDs
	default:
		return nil, rag.Errorf(rag.CodeInvalid, "target must be %q or %q", rag.FeedbackAnswer, rag.FeedbackSource)
	}
	passages, err := s.read(ctx, p, ids)
	if err != nil {
		return nil, err
	}
	f := &rag.Feedback{Principal: p.ID, Vote: req.Vote, Passages: passages}
	f.Comment, f.Question = strings.TrimSpace(f.Comment), q
	if err := s.store.PutFeedback(ctx, f); err != nil {
		return nil, err
	}
	return f, nil
}

// read returns the passages of ids, each once, in order; every one must exist and be visible to p.
func (s *Service) read(ctx context.Context, p rag.Principal, ids []int64) ([]rag.FeedbackPassage, error) {
	out := []rag.FeedbackPassage{}
	if len(ids) == 0 {
		return out, nil
	}
	var uniq []int64
	for _, id := range ids {
		if id <= 0 {
			return nil, rag.Errorf(rag.CodeInvalid, "chunk id %d is not a passage", id)
		}
		if !slices.Contains(uniq, id) {
			uniq = append(uniq, id)
		}
	}
	hits, err := s.passages.Hits(ctx, p, uniq)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, h := range hits {
		if !seen[h.DocumentID] {
			if _, err := s.passages.GetDocument(ctx, p, h.DocumentID); errors.Is(err, rag.ErrNotFound) {
				return nil, rag.Errorf(rag.CodeInvalid, "passage %d does not exist", h.ID)
			} else if err != nil {
				return nil, err
			}
			seen[h.DocumentID] = true
		}
		out = append(out, rag.FeedbackPassage{ChunkID: h.ID, DocumentID: h.DocumentID, File: cmp.Or(h.ExternalID, h.Source),
			Title: h.Title, PageStart: h.PageStart, PageEnd: h.PageEnd, Hash: rag.PassageHash(h.Text), Text: h.Text})
	}
	if len(out) != len(uniq) {
		for _, id := range uniq {
			if !containsPassage(out, id) {
				return nil, rag.Errorf(rag.CodeInvalid, "passage %d does not exist", id)
			}
		}
	}
	return out, nil
}

func containsPassage(ps []rag.FeedbackPassage, id int64) bool {
	for _, x := range ps {
		if x.ChunkID == id {
			return true
		}
	}
	return false
}

// List returns feedback, newest first: p's own, or everyone's when all is set (admins only: CodeForbidden
// for others).
func (s *Service) List(ctx context.Context, p rag.Principal, all bool, q rag.FeedbackQuery) ([]*rag.Feedback, error) {
	if all && !p.Admin {
		return nil, rag.Errorf(rag.CodeForbidden, "only an administrator lists everyone's feedback")
	}
	q.Principal = p.ID
	if all {
		q.Principal = ""
	}
	list, err := s.store.ListFeedback(ctx, q)
	if err != nil {
		return nil, err
	}
	return list, s.withholdLost(ctx, p, list)
}

// withholdLost leaves out of p's ratings the passages of documents p can no longer read (access taken away
// or the document deleted since it rated them): the passage's text, and the rated answer's text, which may
// quote it (rag.WithheldAnswer). Filtered on read: the stored rating is unchanged, and shows whole again if
// access comes back.
func (s *Service) withholdLost(ctx context.Context, p rag.Principal, list []*rag.Feedback) error {
	var ids []string
	for _, f := range list {
		for _, ps := range f.Passages {
			ids = append(ids, ps.DocumentID)
		}
	}
	readable, err := rag.ReadableDocuments(ctx, s.passages, p, ids)
	if err != nil {
		return err
	}
	for _, f := range list {
		kept := f.Passages[:0:0]
		for _, ps := range f.Passages {
			if readable[ps.DocumentID] || ps.DocumentID == "" {
				kept = append(kept, ps)
			}
		}
		if len(kept) < len(f.Passages) {
			f.Passages, f.Withheld = kept, true
			if f.Answer != "" {
				f.Answer = rag.WithheldAnswer
			}
		}
	}
	return nil
}

// Delete removes one of p's ratings. ErrNotFound.
func (s *Service) Delete(ctx context.Context, p rag.Principal, id string) error {
	return s.store.DeleteFeedback(ctx, p.ID, id)
}
