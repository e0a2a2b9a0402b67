// Package qa is the Q&A board of a collection: people post questions, a scheduled pass answers the open
// ones with the collection's retrieval and generator (the answer service), people answer beside it, and
// earlier questions like a new one are found by embedding and keyword. docs/qa.md describes the data model,
// the API and the job.
//
// The pass never gives a question two AI answers: it claims questions (a lease in the store, so two
// workers take different ones and a crashed worker's claim expires) and the store refuses a second AI
// answer to a question (a unique index), so even a worker whose lease ran out cannot add one.
package qa

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// Answerer answers a question from the documents (*answer.Service).
type Answerer interface {
	Ask(ctx context.Context, p rag.Principal, req rag.AskRequest, emit func(rag.AnswerEvent) error) (*rag.Answer, error)
}

// Passages finds a collection's passages by keyword (rag.Store).
type Passages interface {
	KeywordCandidates(ctx context.Context, p rag.Principal, q rag.KeywordQuery) ([]rag.Candidate, error)
	Hits(ctx context.Context, p rag.Principal, ids []int64) ([]rag.Hit, error)
}

// Collections looks collections up by ID or name (rag.Store).
type Collections interface {
	GetCollection(ctx context.Context, idOrName string) (*rag.Collection, error)
}

// NotFoundSetting is the collection setting whose text replaces the default reply when the documents do
// not cover a question (e.g. "강의에서 다루지 않음 …"), read for a collection without a stored profile; a
// profile's replies.not_covered takes its place (see profile.Of).
const NotFoundSetting = profile.SettingNotFound

// Options configure a Service; zero fields take their defaults (WithDefaults).
type Options struct {
	Batch       int           // questions per pass (default 10)
	Delay       time.Duration // pause between two model calls of a pass
	MaxAttempts int           // failed passes before a question is marked failed (default 5)
	// Tries is how many times one pass calls the model for a question before it counts a failed attempt
	// (default 3); RetryBase is the first back-off, doubled after each try (default 1s).
	Tries     int
	RetryBase time.Duration
	// Lease is how long a claim on a question lasts (default 10m): a worker that dies mid-pass leaves its
	// questions to the next pass after that.
	Lease time.Duration
	// Worker names this process in claims and runs (default a random ID).
	Worker string
	// Principal is who the pass answers as (default rag.LocalPrincipal, which sees every document).
	Principal *rag.Principal
	// Answered, when set, is told of every answer stored — the pass's and people's — with its question as
	// then stored (the collections' question.answered webhooks).
	Answered func(ctx context.Context, q *rag.Question, a *rag.BoardAnswer)
	Logger   *slog.Logger
}

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.Batch <= 0 {
		o.Batch = 10
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.Tries <= 0 {
		o.Tries = 3
	}
	if o.RetryBase <= 0 {
		o.RetryBase = time.Second
	}
	if o.Lease <= 0 {
		o.Lease = 10 * time.Minute
	}
	if o.Worker == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		o.Worker = "qa-" + hex.EncodeToString(b[:])
	}
	if o.Principal == nil {
		o.Principal = &rag.LocalPrincipal
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Service runs the boards.
type Service struct {
	store       rag.QuestionStore
	collections Collections
	embedder    rag.Embedder
	passages    Passages
	answers     Answerer
	opt         Options
}

// New returns a Service.
func New(store rag.QuestionStore, collections Collections, embedder rag.Embedder, passages Passages, answers Answerer, opt Options) *Service {
	return &Service{store: store, collections: collections, embedder: embedder, passages: passages, answers: answers, opt: opt.WithDefaults()}
}

// NewQuestion is what a person posts.
type NewQuestion struct {
	Collection string `json:"collection"` // ID or name
	Title      string `json:"title"`
	Body       string `json:"body"`
}

// Ask posts a question on a collection's board and embeds it in the configured space (a failed embedding
// leaves the question to the backfill). Errors: CodeQuestionRequired, CodeInvalid (too long), ErrNotFound
// (collection).
func (s *Service) Ask(ctx context.Context, p rag.Principal, nq NewQuestion) (*rag.Question, error) {
	title, body := strings.TrimSpace(textproc.Normalize(nq.Title)), strings.TrimSpace(textproc.Normalize(nq.Body))
	if title == "" && body == "" {
		return nil, rag.Errorf(rag.CodeQuestionRequired, "a question needs a title or a body")
	}
	if title == "" {
		title = firstLine(body, rag.MaxQuestionTitle)
	}
	if n := utf8.RuneCountInString(title); n > rag.MaxQuestionTitle {
		return nil, rag.Errorf(rag.CodeInvalid, "title is %d characters; at most %d", n, rag.MaxQuestionTitle)
	}
	if n := utf8.RuneCountInString(body); n > rag.MaxQuestionBody {
		return nil, rag.Errorf(rag.CodeInvalid, "body is %d characters; at most %d", n, rag.MaxQuestionBody)
	}
	c, err := s.collection(ctx, nq.Collection)
	if err != nil {
		return nil, err
	}
	author := p.ID
	if author == rag.LocalPrincipal.ID {
		author = "" // the single user of an installation without keys is anonymous on its boards
	}
	q := &rag.Question{CollectionID: c.ID, Title: title, Body: body, Author: author}
	if err := s.store.CreateQuestion(ctx, q); err != nil {
		return nil, err
	}
	if err := s.embed(ctx, q); err != nil {
		s.opt.Logger.Warn("qa: question not embedded; the backfill will retry", slog.String("question", q.ID), slog.Any("err", err))
	}
	return q, nil
}

func (s *Service) collection(ctx context.Context, idOrName string) (*rag.Collection, error) {
	if idOrName == "" {
		idOrName = rag.DefaultCollection
	}
	c, err := s.collections.GetCollection(ctx, idOrName)
	if errors.Is(err, rag.ErrNotFound) {
		return nil, rag.WrapError(rag.CodeNotFound, err, "no collection %q", idOrName)
	}
	return c, err
}

func firstLine(s string, n int) string {
	line, _, _ := strings.Cut(s, "\n")
	if r := []rune(line); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return line
}

func (s *Service) embed(ctx context.Context, q *rag.Question) error {
	v, ps, err := s.signature(ctx, q.CollectionID, q.Text())
	if err != nil {
		return err
	}
	sp := s.embedder.Space()
	if err := s.store.SetQuestionVector(ctx, q.ID, sp, v, ps); err != nil {
		return err
	}
	q.Space, q.Vector, q.Passages = sp.ID(), v, ps
	return nil
}

// Backfill embeds up to limit questions that have no vector in the configured space (older questions, or
// all of them after a change of embedder) or no passages, and returns how many it embedded.
func (s *Service) Backfill(ctx context.Context, limit int) (int, error) {
	todo, err := s.store.QuestionsWithoutVector(ctx, s.embedder.Space(), limit)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, q := range todo {
		if err := s.embed(ctx, q); err != nil {
			return n, fmt.Errorf("embed question %s: %w", q.ID, err)
		}
		n++
	}
	return n, nil
}

// Thread is a question with its answers.
type Thread struct {
	*rag.Question
	Answers []*rag.BoardAnswer `json:"answers"`
}

// Get returns a question with its answers as viewer reads them (nil: any board's; see
// rag.QuestionStore.GetQuestion). ErrNotFound, also when viewer does not see the question's board.
func (s *Service) Get(ctx context.Context, viewer *rag.Principal, id string) (*Thread, error) {
	q, err := s.store.GetQuestion(ctx, viewer, id)
	if err != nil {
		return nil, err
	}
	as, err := s.store.ListAnswers(ctx, viewer, id)
	if err != nil {
		return nil, err
	}
	return &Thread{Question: q, Answers: as}, nil
}

// List returns a board's questions (collection "" for every board p sees), newest first.
func (s *Service) List(ctx context.Context, p rag.Principal, collection string, status rag.QuestionStatus, limit int) ([]*rag.Question, error) {
	q := rag.QuestionQuery{Status: status, Limit: limit, Viewer: &p}
	switch status {
	case "", rag.QuestionOpen, rag.QuestionAnswered, rag.QuestionFailed:
	default:
		return nil, rag.Errorf(rag.CodeInvalid, "status must be open, answered or failed")
	}
	if collection != "" {
		c, err := s.collection(ctx, collection)
		if err != nil {
			return nil, err
		}
		q.CollectionID = c.ID
	}
	return s.store.ListQuestions(ctx, q)
}

// Answer adds a person's answer to a question. Errors: CodeInvalid (empty or too long), ErrNotFound.
func (s *Service) Answer(ctx context.Context, p rag.Principal, questionID, body string) (*rag.BoardAnswer, error) {
	body = strings.TrimSpace(body)
	if body == "" {
		return nil, rag.Errorf(rag.CodeInvalid, "an answer needs a body")
	}
	if n := utf8.RuneCountInString(body); n > rag.MaxAnswerBody {
		return nil, rag.Errorf(rag.CodeInvalid, "answer is %d characters; at most %d", n, rag.MaxAnswerBody)
	}
	author := p.ID
	a := &rag.BoardAnswer{QuestionID: questionID, Author: &author, Body: body}
	if err := s.store.AddAnswer(ctx, a); err != nil {
		return nil, err
	}
	s.answered(ctx, a)
	return a, nil
}

// answered tells Options.Answered of a stored answer, with its question as stored now.
func (s *Service) answered(ctx context.Context, a *rag.BoardAnswer) {
	if s.opt.Answered == nil {
		return
	}
	q, err := s.store.GetQuestion(ctx, nil, a.QuestionID)
	if err != nil {
		s.opt.Logger.Warn("qa: answer not reported", slog.String("question", a.QuestionID), slog.Any("err", err))
		return
	}
	s.opt.Answered(ctx, q, a)
}

// Delete removes a question with its answers. ErrNotFound.
func (s *Service) Delete(ctx context.Context, id string) error {
	return s.store.DeleteQuestion(ctx, id)
}

// Similar is an earlier question like another, with its scores: Score is half the overlap of the
// documents the two questions' best passages come from (Passages), a quarter the cosine similarity of the
// embeddings (Similarity) and a quarter the share of keyword terms in common (Keyword).
type Similar struct {
	ID         string             `json:"id"`
	Title      string             `json:"title"`
	Status     rag.QuestionStatus `json:"status"`
	Score      float64            `json:"score"`
	Similarity float64            `json:"similarity"`
	Keyword    float64            `json:"keyword"`
	Passages   float64            `json:"passages"`
	CreatedAt  time.Time          `json:"created_at"`
}

// MaxSimilar is the most similar questions one call returns.
const MaxSimilar = 50

// SimilarTo returns the questions of the question's board most like it, best first, at most k; ErrNotFound
// when viewer (nil: anyone) does not see the board.
func (s *Service) SimilarTo(ctx context.Context, viewer *rag.Principal, id string, k int) ([]Similar, error) {
	q, err := s.store.GetQuestion(ctx, viewer, id)
	if err != nil {
		return nil, err
	}
	return s.similar(ctx, viewer, q.CollectionID, q.Text(), q.ID, k)
}

// SimilarText returns the questions of a board most like text (the ask form while typing), best first; none
// when viewer (nil: anyone) does not see the board.
func (s *Service) SimilarText(ctx context.Context, viewer *rag.Principal, collection, text string, k int) ([]Similar, error) {
	text = strings.TrimSpace(textproc.Normalize(text))
	if text == "" {
		return nil, rag.Errorf(rag.CodeQuestionRequired, "a text is required")
	}
	if n := utf8.RuneCountInString(text); n > rag.MaxQuestionBody {
		return nil, rag.Errorf(rag.CodeInvalid, "text is %d characters; at most %d", n, rag.MaxQuestionBody)
	}
	c, err := s.collection(ctx, collection)
	if err != nil {
		return nil, err
	}
	return s.similar(ctx, viewer, c.ID, text, "", k)
}

// similar scores every embedded question of the board against text: boards hold hundreds of questions,
// not millions, so a scan in memory is simpler than an index and exact.
func (s *Service) similar(ctx context.Context, viewer *rag.Principal, collectionID, text, self string, k int) ([]Similar, error) {
	if k <= 0 {
		k = 5
	}
	if k > MaxSimilar {
		return nil, rag.Errorf(rag.CodeInvalid, "k must be at most %d", MaxSimilar)
	}
	vec, ps, err := s.signature(ctx, collectionID, text)
	if err != nil {
		return nil, err
	}
	docs := documentWeights(ps)
	qs, err := s.store.QuestionVectors(ctx, viewer, collectionID, s.embedder.Space())
	if err != nil {
		return nil, err
	}
	terms := termSet(text)
	out := make([]Similar, 0, len(qs))
	for _, q := range qs {
		if q.ID == self {
			continue
		}
		cos := dot(vec, q.Vector)
		kw := overlap(terms, termSet(q.Text()))
		pas := cosine(docs, documentWeights(q.Passages))
		out = append(out, Similar{ID: q.ID, Title: q.Title, Status: q.Status, Similarity: cos, Keyword: kw, Passages: pas,
			Score: (cos+kw)/4 + pas/2, CreatedAt: q.CreatedAt})
	}
	slices.SortStableFunc(out, func(a, b Similar) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return b.CreatedAt.Compare(a.CreatedAt)
	})
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// signature is what a question is compared with: its embedding in the configured space, and the
// passages of the board's collection that best match its words (keyword candidates, so also when none
// clears the answer's relevance threshold), best first. Two students rarely ask the same thing in the same
// words ("유사타겟" and "룩어라이크 오디언스"), but their questions find the same lecture: the documents
// bridge vocabularies the question texts alone do not share. An empty collection gives no passages.
func (s *Service) signature(ctx context.Context, collectionID, text string) ([]float32, []rag.QuestionPassage, error) {
	v, err := s.embedder.EmbedQuery(ctx, text)
	if err != nil {
		return nil, nil, err
	}
	cands, err := s.passages.KeywordCandidates(ctx, *s.opt.Principal, rag.KeywordQuery{Terms: textproc.QueryTerms(text),
		K: rag.MaxQuestionPassages, Filter: rag.Filter{Collections: []string{collectionID}}})
	if err != nil || len(cands) == 0 {
		return v, nil, err
	}
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.ChunkID
	}
	hits, err := s.passages.Hits(ctx, *s.opt.Principal, ids) // in the order of ids: best first
	if err != nil {
		return nil, nil, err
	}
	ps := make([]rag.QuestionPassage, len(hits))
	for i, h := range hits {
		ps[i] = rag.QuestionPassage{ChunkID: h.ID, DocumentID: h.DocumentID}
	}
	return v, ps, nil
}

// documentWeights weighs the documents of a question's passages by the rank of their best passage, 1/rank:
// the first passages say what a question is about, the tail is what its filler words happen to match.
// Documents rather than passages, because two questions about one topic often land on neighbouring
// passages of the lecture that covers it (measured in docs/qa.md).
func documentWeights(ps []rag.QuestionPassage) map[string]float64 {
	m := make(map[string]float64, len(ps))
	for i, p := range ps {
		w := 1 / float64(i+1)
		if w > m[p.DocumentID] {
			m[p.DocumentID] = w
		}
	}
	return m
}

// cosine is the cosine similarity of two sparse weight vectors (0 when either is empty).
func cosine(a, b map[string]float64) float64 {
	var d, na, nb float64
	for k, x := range a {
		d += x * b[k]
		na += x * x
	}
	for _, y := range b {
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}

func termSet(text string) map[string]bool {
	m := map[string]bool{}
	for _, t := range textproc.QueryTerms(text) {
		m[t] = true
	}
	return m
}

// overlap is the cosine of two term sets: |a∩b| / √(|a|·|b|).
func overlap(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	n := 0
	for t := range a {
		if b[t] {
			n++
		}
	}
	return float64(n) / math.Sqrt(float64(len(a))*float64(len(b)))
}

func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// notFoundReply is the collection's not-found reply, or the generator's default in the question's language.
func notFoundReply(c *rag.Collection, lang string) string {
	if c != nil {
		if p, err := profile.Of(c); err == nil && p.Replies.NotCovered != "" {
			return strings.TrimSpace(p.Replies.NotCovered)
		}
	}
	return generate.NotFound(lang)
}
