package qa

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// Run triggers.
const (
	TriggerSchedule = "schedule"
	TriggerAPI      = "api"
	TriggerCLI      = "cli"
)

// maxRunErrors bounds the errors one run log keeps.
const maxRunErrors = 20

// Pass runs one pass of the answer job and returns its log: it embeds questions that have no vector yet,
// claims up to Batch open questions (oldest first) and answers each, waiting Delay between model calls.
// A question the model fails on (after Tries tries with back-off) counts an attempt and stays open for the
// next pass, until MaxAttempts, when it is marked failed with the reason. A question answered meanwhile by
// another worker is skipped. The run is logged whatever happens; the error is the store's, when the pass
// could not run at all.
func (s *Service) Pass(ctx context.Context, trigger string) (*rag.QARun, error) {
	run, err := s.Begin(ctx, trigger)
	if err != nil {
		return nil, err
	}
	return run, s.Complete(ctx, run)
}

// Begin logs the start of a pass; Complete runs it. Callers that answer before the pass ends (POST
// /api/qa/runs without wait) call them apart.
func (s *Service) Begin(ctx context.Context, trigger string) (*rag.QARun, error) {
	run := &rag.QARun{Trigger: trigger, Worker: s.opt.Worker}
	if err := s.store.CreateRun(ctx, run); err != nil {
		return nil, err
	}
	return run, nil
}

// Complete runs the pass begun as run and records its end (see Pass).
func (s *Service) Complete(ctx context.Context, run *rag.QARun) error {
	err := s.pass(ctx, run)
	if err != nil {
		run.Errors = appendError(run.Errors, err.Error())
	}
	// The log is written even when ctx ended (a stopping worker), so that the run does not look unfinished.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if ferr := s.store.FinishRun(fctx, run); ferr != nil {
		return errors.Join(err, ferr)
	}
	s.opt.Logger.Info("qa: pass done", slog.String("run", run.ID), slog.String("trigger", run.Trigger),
		slog.Int("answered", run.Answered), slog.Int("failed", run.Failed), slog.Int("skipped", run.Skipped))
	return err
}

// Runs returns the latest runs, newest first (limit ≤ 0: 20). Run returns one. ErrNotFound.
func (s *Service) Runs(ctx context.Context, limit int) ([]*rag.QARun, error) {
	return s.store.ListRuns(ctx, limit)
}

// Run returns a run's log. ErrNotFound.
func (s *Service) Run(ctx context.Context, id string) (*rag.QARun, error) {
	return s.store.GetRun(ctx, id)
}

func appendError(errs []string, msg string) []string {
	if len(errs) >= maxRunErrors {
		return errs
	}
	return append(errs, msg)
}

func (s *Service) pass(ctx context.Context, run *rag.QARun) error {
	if _, err := s.Backfill(ctx, s.opt.Batch); err != nil {
		// Similar-question search needs the vectors, answering does not: log and go on.
		run.Errors = appendError(run.Errors, "backfill: "+err.Error())
	}
	qs, err := s.store.ClaimQuestions(ctx, rag.Claim{Worker: s.opt.Worker, Limit: s.opt.Batch, Until: time.Now().Add(s.opt.Lease)})
	if err != nil {
		return err
	}
	for i, q := range qs {
		if ctx.Err() != nil {
			// Stopping: the rest go back to the board at once rather than when their claims expire.
			s.releaseAll(qs[i:])
			return ctx.Err()
		}
		if i > 0 && s.opt.Delay > 0 {
			if err := sleep(ctx, s.opt.Delay); err != nil {
				s.releaseAll(qs[i:])
				return err
			}
		}
		s.answerOne(ctx, run, q)
	}
	return nil
}

func (s *Service) releaseAll(qs []*rag.Question) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, q := range qs {
		if err := s.store.ReleaseQuestion(ctx, q.ID, s.opt.Worker); err != nil {
			s.opt.Logger.Warn("qa: release question", slog.String("question", q.ID), slog.Any("err", err))
		}
	}
}

func (s *Service) answerOne(ctx context.Context, run *rag.QARun, q *rag.Question) {
	a, err := s.generate(ctx, q)
	if err == nil {
		err = s.store.AddAnswer(ctx, a)
		switch {
		case err == nil:
			run.Answered++
			s.answered(ctx, a)
			return
		case errors.Is(err, rag.ErrConflict), errors.Is(err, rag.ErrNotFound):
			// Answered by another worker whose lease had run out, or deleted meanwhile.
			run.Skipped++
			return
		}
	}
	if errors.Is(err, rag.ErrNotFound) {
		run.Skipped++ // the question or its collection was deleted meanwhile
		return
	}
	reason := rag.ErrorMessage(err)
	if ctx.Err() != nil {
		s.releaseAll([]*rag.Question{q})
		run.Errors = appendError(run.Errors, fmt.Sprintf("%s: %s", q.ID, reason))
		return
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	fq, ferr := s.store.FailQuestion(fctx, q.ID, s.opt.Worker, reason, s.opt.MaxAttempts)
	switch {
	case errors.Is(ferr, rag.ErrConflict):
		run.Skipped++ // the claim passed to another worker
		return
	case ferr != nil:
		run.Errors = appendError(run.Errors, fmt.Sprintf("%s: %s; recording it: %v", q.ID, reason, ferr))
		return
	}
	run.Failed++
	state := "stays open"
	if fq.Status == rag.QuestionFailed {
		state = "marked failed"
	}
	run.Errors = appendError(run.Errors, fmt.Sprintf("%s: %s (attempt %d, %s)", q.ID, reason, fq.Attempts, state))
	s.opt.Logger.Warn("qa: question not answered", slog.String("question", q.ID), slog.Int("attempts", fq.Attempts),
		slog.String("status", string(fq.Status)), slog.Any("err", err))
}

// generate answers q with the collection's retrieval and generator, trying the model up to Tries times.
func (s *Service) generate(ctx context.Context, q *rag.Question) (*rag.BoardAnswer, error) {
	c, err := s.collections.GetCollection(ctx, q.CollectionID)
	if err != nil {
		return nil, err
	}
	req := rag.AskRequest{Question: q.Text(), Filter: rag.Filter{Collections: []string{c.ID}}}
	var ans *rag.Answer
	wait := s.opt.RetryBase
	for try := 1; ; try++ {
		ans, err = s.answers.Ask(ctx, *s.opt.Principal, req, nil)
		if err == nil || try >= s.opt.Tries || !retryable(err) {
			break
		}
		s.opt.Logger.Info("qa: model call failed; retrying", slog.String("question", q.ID), slog.Int("try", try), slog.Any("err", err))
		if serr := sleep(ctx, wait); serr != nil {
			return nil, err
		}
		wait *= 2
	}
	if err != nil {
		return nil, err
	}
	a := &rag.BoardAnswer{QuestionID: q.ID, IsAI: true, Body: ans.Text, SourceRefs: []rag.SourceRef{}}
	if ans.NotFound {
		// Nothing above the threshold: say so plainly, in the collection's words, and cite nothing.
		a.NotFound, a.Body = true, notFoundReply(c, ans.Language)
		return a, nil
	}
	for _, src := range ans.Sources {
		a.SourceRefs = append(a.SourceRefs, RefOf(src.Hit))
	}
	return a, nil
}

// RefOf is the source reference of a retrieved passage.
func RefOf(h rag.Hit) rag.SourceRef {
	return rag.SourceRef{DocumentID: h.DocumentID, Title: h.Title, Source: h.Source, Metadata: h.Metadata,
		ChunkID: h.ID, ChunkIndex: h.Index, Page: h.PageStart, Similarity: h.VectorScore}
}

// retryable reports whether err is a model's (worth another try): the generator's or the embedder's.
func retryable(err error) bool {
	switch rag.ErrorCode(err) {
	case rag.CodeLLMFailed, rag.CodeEmbeddingFailed:
		return true
	}
	return false
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
