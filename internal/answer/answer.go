// Package answer is the question → retrieve → context → generate → verified citations pipeline shared by the
// CLI, the HTTP API and eval.
package answer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/followup"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/telemetry"
	"github.com/ragd/ragd/internal/textproc"
)

// Options tune the pipeline.
type Options struct {
	// Passages is how many retrieved passages the generator gets (default 5, at most 20).
	Passages int
	// SystemPrompt overrides the generator's default system prompt for every question ("" keeps it). A
	// collection's own settings take precedence (see Service.Prompt).
	SystemPrompt string
	// Collections gives the collections' profiles (package profile) to the pipeline; nil ignores them.
	Collections Collections
	// Graph answers questions over one collection that has a knowledge graph (nil: never).
	Graph Graph
	// Records reads the rows of a collection with a metadata schema (see records.go); nil answers every
	// question from passages.
	Records Records
	// CacheTTL keeps answers to questions over one collection for that long (see cache); 0 or no Records
	// turns the cache off.
	CacheTTL time.Duration
	// Expand asks a generator that completes plain prompts (rag.Completer) for other wordings of each
	// question, searched beside it (rag.SearchRequest.Expansions; RAGD_QUERY_EXPANSION=llm).
	Expand bool
	// Chunks loads a passage's next chunk when the passage ends announcing it (see continueLeadIns); nil
	// never does.
	Chunks Chunks
	// Logger logs what the answers themselves cannot say (a model's failed reading of a filter); default:
	// nowhere.
	Logger *slog.Logger
}

// Graph answers a question from a collection's knowledge graph (*graph.Service implements it).
type Graph interface {
	// AnswerGraph answers ans.Question over the collection named collection when it has a graph, filling ans
	// and emitting the sources and text; false, without emitting, when it has none.
	// req carries the profile's system prompt, not-covered reply and generation settings.
	AnswerGraph(ctx context.Context, p rag.Principal, collection string, ans *rag.Answer, gen rag.Generator, req rag.GenerateRequest,
		emit func(rag.AnswerEvent) error) (bool, error)
}

// Searcher runs retrieval: *retrieve.Retriever, or *reembed.Service, which picks the embedding space.
type Searcher interface {
	// Search is retrieve.Retriever.Search.
	Search(ctx context.Context, p rag.Principal, req rag.SearchRequest) (*rag.SearchResult, error)
}

// Collections looks collections up by ID or name: rag.Store.
type Collections interface {
	// GetCollection is rag.Store.GetCollection.
	GetCollection(ctx context.Context, idOrName string) (*rag.Collection, error)
}

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.Passages == 0 {
		o.Passages = 5
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Service answers questions from the documents.
type Service struct {
	retriever Searcher
	generator rag.Generator
	opt       Options
	cache     *cache // nil: off
}

// New returns a Service.
func New(retriever Searcher, generator rag.Generator, opt Options) *Service {
	s := &Service{retriever: retriever, generator: generator, opt: opt.WithDefaults()}
	if states, ok := opt.Records.(rag.CollectionStateStore); ok && opt.CacheTTL > 0 {
		s.cache = &cache{ttl: opt.CacheTTL, states: states, entries: map[string]*cached{}}
	}
	return s
}

// Generator returns the generator's name.
func (s *Service) Generator() string { return s.generator.Name() }

// EventType names a streaming event (rag.AnswerEventType).
type EventType = rag.AnswerEventType

// Streaming events, in order: one Sources, any number of Delta, then Done (or an error from Ask).
const (
	EventSources = rag.AnswerSources
	EventDelta   = rag.AnswerDelta
	EventDone    = rag.AnswerDone
)

// Event is one step of a streamed answer (rag.AnswerEvent).
type Event = rag.AnswerEvent

// Ask answers req. emit, when non-nil, receives the answer as it is produced; an error returned by emit stops
// the pipeline and is returned. Errors: CodeQuestionRequired (blank question), CodeInvalid, CodeEmbeddingFailed,
// CodeLLMFailed, CodeDBError.
//
// A question over one collection follows its profile (profile.Of): its language (when not auto, the
// answer's), its fixed replies (the empty question's message, the not-covered reply of every generator), how
// many passages and history turns it keeps, and the temperature and output tokens of hosted generators.
func (s *Service) Ask(ctx context.Context, p rag.Principal, req rag.AskRequest, emit func(Event) error) (*rag.Answer, error) {
	ctx, done := telemetry.Stage(ctx, telemetry.StageAnswer)
	ans, err := s.askCached(ctx, p, req, emit)
	done(err)
	return ans, err
}

// askCached is Ask without its span: it answers from the cache when it can.
func (s *Service) askCached(ctx context.Context, p rag.Principal, req rag.AskRequest, emit func(Event) error) (*rag.Answer, error) {
	start := time.Now()
	prof, err := s.profileFor(ctx, req.Filter)
	if err != nil {
		return nil, err
	}
	q := strings.TrimSpace(textproc.Normalize(req.Question))
	if q == "" {
		msg := "a question is required"
		if r := strings.TrimSpace(prof.Replies.EmptyQuestion); r != "" {
			msg = r
		}
		return nil, rag.Errorf(rag.CodeQuestionRequired, "%s", msg)
	}
	ans := &rag.Answer{Generator: s.generator.Name()}
	if utf8.RuneCountInString(q) > rag.MaxQuestionChars {
		q = string([]rune(q)[:rag.MaxQuestionChars])
		ans.Truncated = true
	}
	ans.Question = q
	ans.Language = textproc.DetectLanguage(q)
	if l := prof.Language; l != "" && l != "auto" {
		ans.Language = l
	}
	if emit == nil {
		emit = func(Event) error { return nil }
	}

	// A cached answer to the same question over the same collection, if it has not changed since: checked
	// first, so that a cached answer costs the profile's read and one query. Graph answers are not cached;
	// an import that gives the collection a graph changes its generation and so drops its cached answers.
	var key string
	var state rag.CollectionState
	if s.cache != nil {
		if key = cacheKey(p, req, q); key != "" {
			hit, st, err := s.cache.get(ctx, p, key, req.Filter.Collections[0])
			if err != nil {
				return nil, err
			}
			if hit != nil {
				telemetry.CacheLookup("answer", 1, 0)
				hit.Truncated = ans.Truncated
				hit.RetrieveMS, hit.GenerateMS = 0, 0
				return s.finish(hit, start, emit)
			}
			telemetry.CacheLookup("answer", 0, 1)
			state = st
		}
	}

	// A question over exactly one collection that has a knowledge graph is answered from the graph
	// (docs/graph.md); its filters other than the collection do not apply to graph rows.
	if s.opt.Graph != nil && len(req.Filter.Collections) == 1 {
		system, err := s.Prompt(ctx, req.Filter)
		if err != nil {
			return nil, err
		}
		ok, err := s.opt.Graph.AnswerGraph(ctx, p, req.Filter.Collections[0], ans, s.generator, rag.GenerateRequest{
			SystemPrompt: system, NotCovered: prof.Replies.NotCovered, Temperature: prof.Generation.Temperature,
			MaxOutputTokens: prof.Generation.MaxOutputTokens}, emit)
		if err != nil {
			return nil, err
		}
		if ok {
			ans.TotalMS = float64(time.Since(start).Microseconds()) / 1000
			ans.GenerateMS = ans.TotalMS - ans.RetrieveMS
			if err := emit(Event{Type: EventDone, Answer: ans}); err != nil {
				return nil, err
			}
			return ans, nil
		}
	}

	k := req.K
	if k <= 0 {
		k = cmp.Or(prof.Generation.Passages, s.opt.Passages)
	}
	if err := rag.CheckK(k, rag.MaxAnswerK); err != nil {
		return nil, err
	}
	out, err := s.ask(ctx, p, req, q, k, prof, ans, start, emit)
	if err == nil && key != "" {
		s.cache.put(key, out, start, state)
	}
	return out, err
}

// ask is Ask after the question is read and the cache missed.
func (s *Service) ask(ctx context.Context, p rag.Principal, req rag.AskRequest, q string, k int, prof profile.Profile, ans *rag.Answer, start time.Time, emit func(Event) error) (_ *rag.Answer, err error) {
	// A collection with a metadata schema: the question's conditions filter the rows first; list, fact and
	// comparison questions are answered from the rows, content questions from their documents.
	pl, conds, err := s.plan(ctx, p, req, q, prof)
	if err != nil {
		return nil, err
	}
	ans.Conditions = conds
	if pl != nil {
		ans.Filters, ans.Route = &pl.filter, string(pl.query.Kind)
		done, err := s.fromRows(ctx, p, pl, ans)
		if err != nil {
			return nil, err
		}
		if done {
			return s.finish(ans, start, emit)
		}
		req.Filter = pl.filter
	}
	turns := rag.MaxHistoryTurns
	if h := prof.Generation.HistoryTurns; h != nil {
		turns = *h
	}
	history := lastTurns(req.History, turns)
	query, context := followUp(q, history)
	if c, ok := s.generator.(rag.Completer); ok && len(history) > 0 {
		query = s.rewrite(ctx, c, q, history, query)
	}
	if pl != nil && len(pl.query.Named) > 0 && len(pl.query.Focus) > 0 && len(history) == 0 {
		// Inside the named rows' documents their names say nothing: every passage shares them with the
		// title. What the question asks of them is the rest of its words.
		query = strings.Join(pl.query.Focus, " ")
	}
	ans.RetrievalQuery = query
	sreq := rag.SearchRequest{Query: query, Filter: req.Filter, K: k, Context: context, MaxPerDocument: rag.AnswerMaxPerDocument,
		DocumentWeight: rag.AnswerDocumentWeight, ForAnswer: true}
	if c, ok := s.generator.(rag.Completer); ok && s.opt.Expand {
		sreq.Expansions = s.expand(ctx, c, query)
		ans.Expansions = sreq.Expansions
	}
	var res, wide *rag.SearchResult // wide: the search before refocus, when it refocused
	comparing := Comparison(q)      // a comparison's parts are each document's passages (compare.go)
	if docs := distinct(req.Filter.DocumentIDs); len(docs) >= 2 && comparing {
		res, err = s.perDocument(ctx, p, sreq, docs)
	} else if res, err = s.retriever.Search(ctx, p, sreq); err == nil {
		// A follow-up's "그 보고서" is the conversation's document, which retrieval favours already
		// (sreq.Context), not whichever document its kind of document names.
		var focused *rag.SearchResult
		if len(history) == 0 {
			focused, err = s.refocus(ctx, p, sreq, res)
		}
		if focused != nil {
			wide, res = res, focused
		}
	}
	if err != nil {
		return nil, err
	}

	gctx, genDone := telemetry.Stage(ctx, telemetry.StageGenerate)
	generated := false
	defer func() {
		if !generated {
			genDone(err)
		}
	}()
	notCovered := generate.NotCovered(prof.Replies.NotCovered, ans.Language)
	// answerFrom gives the generator the passages of r, streaming the sources and the answer through out.
	answerFrom := func(r *rag.SearchResult, out func(Event) error) ([]rag.Source, []rag.Passage, *rag.Generation, error) {
		ans.Retrieval, ans.RetrieveMS = r, r.TotalMS
		var reserve []rag.Hit
		if len(r.Hits) > 0 && !comparing {
			var err error
			if reserve, err = s.reserve(ctx, p, sreq, r); err != nil {
				return nil, nil, nil, err
			}
		}
		hits := append(slices.Clip(r.Hits), reserve...)
		sources := make([]rag.Source, len(hits))
		passages := make([]rag.Passage, len(hits))
		for i, h := range hits {
			sources[i] = rag.Source{N: i + 1, Hit: h}
			passages[i] = rag.Passage{N: i + 1, ChunkID: h.ID, Title: h.Title, Section: h.Section,
				PageStart: h.PageStart, PageEnd: h.PageEnd, Text: h.Text, Score: h.Score}
		}
		if err := out(Event{Type: EventSources, Sources: sources}); err != nil {
			return nil, nil, nil, err
		}
		if err := continueLeadIns(ctx, p, s.opt.Chunks, passages, hits); err != nil {
			return nil, nil, nil, err
		}
		if len(passages) == 0 {
			return sources, nil, nil, nil
		}
		given, held := passages[:len(r.Hits)], passages[len(r.Hits):]
		system, err := s.Prompt(gctx, req.Filter)
		if err != nil {
			return nil, nil, nil, err
		}
		gen, err := s.generate(gctx, p, rag.GenerateRequest{
			Question:        q,
			Language:        ans.Language,
			History:         history,
			Passages:        given,
			Reserve:         held,
			SystemPrompt:    system,
			NotCovered:      prof.Replies.NotCovered,
			Temperature:     prof.Generation.Temperature,
			MaxOutputTokens: prof.Generation.MaxOutputTokens,
		}, r.Hits, req.Filter.DocumentIDs, out)
		return sources, passages, gen, err
	}
	var sources []rag.Source
	var passages []rag.Passage
	var gen *rag.Generation
	if wide == nil {
		sources, passages, gen, err = answerFrom(res, emit)
	} else {
		// The named documents' passages are answered from first, held back until they answer: when they
		// do not, the passages the question's words found answer it (their sources and text are the ones
		// streamed).
		var held []Event
		sources, passages, gen, err = answerFrom(res, func(e Event) error { held = append(held, e); return nil })
		if err == nil && strings.TrimSpace(gen.Text) == notCovered {
			sources, passages, gen, err = answerFrom(wide, emit)
		} else {
			for _, e := range held {
				if err == nil {
					err = emit(e)
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if len(passages) == 0 {
		ans.NotFound = true
		ans.Text = notCovered
		if err := emit(Event{Type: EventDelta, Delta: ans.Text}); err != nil {
			return nil, err
		}
	} else {
		rep := generate.VerifyCitations(gen.Text, passages)
		text := rep.Text
		ans.Text, ans.Citations = text, rep.Check
		for _, w := range rep.Weak {
			ans.Weak = append(ans.Weak, rag.Span{Start: w.Start, End: w.End, Citations: w.Citations, Support: w.Support})
		}
		cited := citedNumbers(text)
		for _, src := range sources {
			if cited[src.N] {
				src.PageStart, src.PageEnd = citedPages(text, src)
				ans.Sources = append(ans.Sources, src)
			}
		}
		if len(ans.Sources) == 0 && strings.TrimSpace(text) == notCovered {
			ans.NotFound = true
		}
	}
	if ans.Sources == nil {
		ans.Sources = []rag.Source{}
	}
	generated = true
	ans.GenerateMS = float64(genDone(nil).Microseconds()) / 1000
	ans.TotalMS = float64(time.Since(start).Microseconds()) / 1000
	if err := emit(Event{Type: EventDone, Answer: ans}); err != nil {
		return nil, err
	}
	return ans, nil
}

// finish sends an answer made without a generator (from a collection's rows) as the events Ask emits.
func (s *Service) finish(ans *rag.Answer, start time.Time, emit func(Event) error) (*rag.Answer, error) {
	if ans.Sources == nil {
		ans.Sources = []rag.Source{}
	}
	if err := emit(Event{Type: EventSources, Sources: ans.Sources}); err != nil {
		return nil, err
	}
	if err := emit(Event{Type: EventDelta, Delta: ans.Text}); err != nil {
		return nil, err
	}
	ans.TotalMS = float64(time.Since(start).Microseconds()) / 1000
	if err := emit(Event{Type: EventDone, Answer: ans}); err != nil {
		return nil, err
	}
	return ans, nil
}

// Prompt returns the system prompt for a question restricted by f: from the profiles of the collections it
// names (profile.Of; "" means the generator's default).
//
// A profile's system_prompt replaces the whole prompt; its domain keeps ragd's prompt and makes the model
// decline questions outside that domain (generate.SystemPromptFor), and a question over one collection gets
// its fixed not-covered and off-topic replies in the prompt. A question over one collection gets
// that collection's prompt. Over several, a system_prompt is used only when they all have the same one, since
// a prompt written for one collection may not fit the others' documents; otherwise the model is restricted to
// their domains only when each of them has a domain (a collection without one may hold anything), and to all
// of them ("A; B"). A question over every collection (no collection filter) gets Options.SystemPrompt or the
// default. Collections that do not exist are skipped: retrieval finds nothing in them anyway.
func (s *Service) Prompt(ctx context.Context, f rag.Filter) (string, error) {
	if s.opt.Collections == nil || len(f.Collections) == 0 {
		return s.opt.SystemPrompt, nil
	}
	var prompts, domains []string
	var profiles []profile.Profile
	seen := map[string]bool{}
	for _, name := range f.Collections {
		c, err := s.opt.Collections.GetCollection(ctx, name)
		if errors.Is(err, rag.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("collection %s: %w", name, err)
		}
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		pr, err := profile.Of(c)
		if err != nil {
			return "", err
		}
		profiles = append(profiles, pr)
		prompts = append(prompts, strings.TrimSpace(pr.SystemPrompt))
		domains = append(domains, strings.TrimSpace(pr.Domain))
	}
	if len(prompts) == 0 {
		return s.opt.SystemPrompt, nil
	}
	if p := prompts[0]; p != "" && allEqual(prompts) {
		return p, nil
	}
	if len(profiles) == 1 {
		r := profiles[0].Replies
		if domains[0] == "" && r.NotCovered == "" {
			return s.opt.SystemPrompt, nil
		}
		return generate.SystemPromptFor(domains[0], r.NotCovered, r.OffTopic), nil
	}
	var distinct []string
	for _, d := range domains {
		if d == "" {
			return s.opt.SystemPrompt, nil
		}
		if !slices.Contains(distinct, d) {
			distinct = append(distinct, d)
		}
	}
	return generate.SystemPrompt(strings.Join(distinct, "; ")), nil
}

// profileFor returns the profile of the one collection f restricts a question to (profile.Of), or the
// zero profile (every setting the server's) for a question over several collections, every collection, or
// one that does not exist.
func (s *Service) profileFor(ctx context.Context, f rag.Filter) (profile.Profile, error) {
	names := distinct(f.Collections)
	if s.opt.Collections == nil || len(names) != 1 {
		return profile.Profile{}, nil
	}
	c, err := s.opt.Collections.GetCollection(ctx, names[0])
	if errors.Is(err, rag.ErrNotFound) {
		return profile.Profile{}, nil
	}
	if err != nil {
		return profile.Profile{}, fmt.Errorf("collection %s: %w", names[0], err)
	}
	return profile.Of(c)
}

func allEqual(s []string) bool {
	for _, x := range s[1:] {
		if x != s[0] {
			return false
		}
	}
	return true
}

// comparison matches the words of a question that compares things ("A와 B의 차이", "compare A and B").
var comparison = regexp.MustCompile(`(?i)차이|비교|다른\s*점|공통점|다른가|다릅니|어떻게\s*다르|\bcompar|\bdiffer|\bversus\b|\bvs\.?\s`)

// margin matches what ends right before a "차이" that is an amount ("15% 차이로", "3점 차이", "몇 표차이로"), not a
// comparison.
var margin = regexp.MustCompile(`([0-9%]|몇)\s*(점|표|포인트|p|%)?\s*$`)

// Comparison reports whether q asks to compare (its answer over several chosen documents is retrieved per
// document, and laid out per document).
func Comparison(q string) bool {
	for _, m := range comparison.FindAllStringIndex(q, -1) {
		rest := q[m[0]:]
		if strings.HasPrefix(rest, "차이나") { // China (인도차이나, 차이나타운)
			continue
		}
		if !strings.HasPrefix(rest, "차이") || !margin.MatchString(q[:m[0]]) {
			return true
		}
	}
	return false
}

// distinct returns ids without repeats, in order.
func distinct(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// perDocument retrieves req within each of the documents docs, an equal share of req.K each (at least 2),
// and interleaves the hits: the first of each document, then the second of each, and so on, at most req.K
// (or one per document when there are more documents). A comparison over chosen documents then gives the
// generator passages of every one, not the best of whichever matches the question's words most.
func (s *Service) perDocument(ctx context.Context, p rag.Principal, req rag.SearchRequest, docs []string) (*rag.SearchResult, error) {
	each := max(2, (req.K+len(docs)-1)/len(docs))
	out := &rag.SearchResult{}
	lists := make([][]rag.Hit, len(docs))
	for i, id := range docs {
		dr := req
		dr.Filter.DocumentIDs = []string{id}
		dr.K = each
		res, err := s.retriever.Search(ctx, p, dr)
		if err != nil {
			return nil, err
		}
		lists[i] = res.Hits
		out.Space = res.Space
		addCosts(out, res)
	}
	for r := 0; r < each; r++ {
		for _, l := range lists {
			if r < len(l) {
				out.Hits = append(out.Hits, l[r])
			}
		}
	}
	out.Hits = out.Hits[:min(len(out.Hits), max(req.K, len(docs)))]
	return out, nil
}

// addCosts adds the candidate counts and times of res, another search made for the same answer, to out's.
func addCosts(out, res *rag.SearchResult) {
	out.VectorCandidates += res.VectorCandidates
	out.KeywordCandidates += res.KeywordCandidates
	out.EmbedMS += res.EmbedMS
	out.VectorMS += res.VectorMS
	out.KeywordMS += res.KeywordMS
	out.TotalMS += res.TotalMS
}

// followUp returns what a question asked after history is retrieved by: the question followed by the
// previous question's words (a follow-up such as "who sponsored that bill?" names its subject only through
// the earlier turn), that question itself read standalone against the ones before it (followup.Previous),
// and the documents the previous answer cited (Turn.DocumentIDs), which retrieval favours. Without history
// the question is retrieved alone.
func followUp(q string, history []rag.Turn) (string, []string) {
	var docs []string
	for i := len(history) - 1; i >= 0; i-- {
		if t := history[i]; t.Role == rag.RoleAssistant {
			docs = t.DocumentIDs[:min(len(t.DocumentIDs), rag.MaxContextDocuments)]
			break
		} else if t.Role == rag.RoleUser {
			break
		}
	}
	prev := followup.Previous(history)
	if prev == "" || prev == q {
		return q, docs
	}
	if n := utf8.RuneCountInString(prev); n > rag.MaxQuestionChars {
		prev = string([]rune(prev)[:rag.MaxQuestionChars])
	}
	return q + "\n" + prev, docs
}

// rewrite asks a generator that completes plain prompts for the follow-up question q made standalone
// (generate.RewriteSystem), for retrieval; the generator still answers q with the history. A failed or empty
// rewrite falls back to offline, the question and the previous one.
func (s *Service) rewrite(ctx context.Context, c rag.Completer, q string, history []rag.Turn, offline string) string {
	var out string
	err := s.byModel(ctx, func() (err error) {
		out, err = c.Complete(ctx, generate.RewriteSystem, generate.RewriteUser(history, q))
		return err
	})
	out = strings.TrimSpace(textproc.Normalize(out))
	if err != nil || out == "" {
		return offline
	}
	if utf8.RuneCountInString(out) > rag.MaxQuestionChars {
		out = string([]rune(out)[:rag.MaxQuestionChars])
	}
	return out
}

// expand asks the generator for other wordings of the retrieval query (generate.ExpandSystem). A failed
// expansion leaves the query alone: retrieval never fails because of it.
func (s *Service) expand(ctx context.Context, c rag.Completer, query string) []string {
	var out string
	err := s.byModel(ctx, func() (err error) {
		out, err = c.Complete(ctx, generate.ExpandSystem, generate.ExpandUser(query))
		return err
	})
	if err != nil {
		return nil
	}
	return generate.ParseExpansions(textproc.Normalize(out), query)
}

// lastTurns keeps the n most recent non-empty turns.
func lastTurns(h []rag.Turn, n int) []rag.Turn {
	var out []rag.Turn
	for _, t := range h {
		if strings.TrimSpace(t.Content) != "" && (t.Role == rag.RoleUser || t.Role == rag.RoleAssistant) {
			out = append(out, t)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// citedNumbers returns the set of n in "[n]" markers of text.
func citedNumbers(text string) map[int]bool {
	out := map[int]bool{}
	for i := 0; i < len(text); i++ {
		if text[i] != '[' {
			continue
		}
		j, n := i+1, 0
		for j < len(text) && text[j] >= '0' && text[j] <= '9' && j-i <= 4 {
			n = n*10 + int(text[j]-'0')
			j++
		}
		if j > i+1 && j < len(text) && text[j] == ']' {
			out[n] = true
		}
	}
	return out
}
