package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/ragd/ragd/internal/answer"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/retrieve"
)

// Options configure a run.
type Options struct {
	// K is how many hits each query retrieves (at least 10, the deepest cutoff measured).
	K int
	// Answers also runs the answer pipeline for questions that have gold answers.
	Answers bool
	// Workers index documents in parallel (default 2).
	Workers int
	// Collection receives the corpus (default "eval-<dataset name>").
	Collection string
	// Progress, when set, is called as documents are indexed and queries run.
	Progress func(stage string, done, total int)
	// Misses, when set, receives one JSON line (Miss) for each answerable question whose answer holds none
	// of its gold spans, refused ones included, and each unanswerable question answered.
	Misses io.Writer
}

// Miss is a question the answer pipeline got wrong, as Options.Misses writes it: an answerable question
// whose answer holds no gold span (Refused when it said "not covered"), or an unanswerable one answered.
// Cited are the external ids of the documents of the passages the answer cites, and Retrieved those of
// every passage the answerer was given; RelevantCited tells whether one of the cited ones is a relevant document — a miss with a relevant
// passage retrieved but not cited chose the wrong passage, one with it cited the wrong sentence.
type Miss struct {
	ID                string   `json:"id"`
	Question          string   `json:"question"`
	Gold              []string `json:"gold,omitempty"`
	Unanswerable      bool     `json:"unanswerable,omitempty"`
	Answer            string   `json:"answer"`
	Refused           bool     `json:"refused"`
	Cited             []string `json:"cited,omitempty"`
	Retrieved         []string `json:"retrieved,omitempty"`
	RelevantCited     bool     `json:"relevant_cited"`
	RelevantRetrieved bool     `json:"relevant_retrieved"`
	// GoldRetrieved tells whether one of the passages given to the answerer holds a gold span.
	GoldRetrieved bool `json:"gold_retrieved"`
}

// Report holds the measured figures; JSON keys are those `ragd eval --json` prints. The retrieval figures
// (by document) are averaged over the judged queries; unanswerable questions count only in the answer figures.
type Report struct {
	Dataset   string `json:"dataset"`
	Documents int    `json:"documents"`
	Queries   int    `json:"queries"`
	// Retrieval holds the figures by document (its query count, shadowed in JSON by Queries, is Judged).
	Retrieval
	LatencyP50   float64 `json:"latency_ms_p50"`
	LatencyP95   float64 `json:"latency_ms_p95"`
	IndexSeconds float64 `json:"index_seconds"`
	// Judged counts the queries with relevant documents; Unanswerable those marked unanswerable.
	Judged       int `json:"judged"`
	Unanswerable int `json:"unanswerable,omitempty"`
	// Pages are the figures by file+page, over the queries whose judgments give pages.
	Pages *Retrieval `json:"pages,omitempty"`
	// Avoided is the share of the AvoidQueries questions with passages rated down (sets exported from
	// feedback) none of whose top 5 hits is one of those passages.
	Avoided      *float64 `json:"avoided@5,omitempty"`
	AvoidQueries int      `json:"avoid_queries,omitempty"`
	// Baseline is plain BM25 (bm25.PlainTerms, k1 0.9, b 0.4) over the same passages, when asked for.
	Baseline *Baseline `json:"baseline_bm25,omitempty"`

	AnswerContains *float64 `json:"answer_contains,omitempty"`
	AnswerCharsP50 *float64 `json:"answer_chars_p50,omitempty"`
	AnswerMSP95    *float64 `json:"answer_ms_p95,omitempty"`
	// NotFound counts answerable questions the answer pipeline answered with "not covered".
	NotFound *int `json:"answers_not_found,omitempty"`
	// Answered is the share of answerable questions not refused; RefusedUnanswerable the share of
	// unanswerable ones refused, and FalseAnswers how many unanswerable ones got an answer.
	Answered            *float64 `json:"answered,omitempty"`
	RefusedUnanswerable *float64 `json:"refused_unanswerable,omitempty"`
	FalseAnswers        *int     `json:"false_answers,omitempty"`
	// FalseRefusalRate is the share of answerable questions refused (1 − Answered) and FalseRefusals their
	// ids; FalseAnswerRate the share of unanswerable questions answered and FalseAnswered their ids.
	FalseRefusalRate *float64 `json:"false_refusal_rate,omitempty"`
	FalseRefusals    []string `json:"false_refusals,omitempty"`
	FalseAnswerRate  *float64 `json:"false_answer_rate,omitempty"`
	FalseAnswered    []string `json:"false_answered,omitempty"`
	// Missed lists the judged queries with no relevant document in the top 5; PagesMissed those with no
	// relevant page (of a relevant document) in the top 5.
	Missed      []string `json:"missed@5,omitempty"`
	PagesMissed []string `json:"pages_missed@5,omitempty"`
	// GoldMissed lists the answerable questions answered (not refused) without any of their gold spans.
	GoldMissed []string `json:"gold_missed,omitempty"`
}

// Retrieval is a set of ranking figures averaged over Queries judged queries.
type Retrieval struct {
	Queries    int     `json:"queries"`
	Hit5       float64 `json:"hit@5"`
	NDCG10     float64 `json:"ndcg@10"`
	Recall5    float64 `json:"recall@5"`
	Precision5 float64 `json:"precision@5"`
	MRR10      float64 `json:"mrr@10"`
}

// Baseline holds the baseline's figures by document and, where pages are judged, by page.
type Baseline struct {
	Retrieval
	Pages *Retrieval `json:"pages,omitempty"`
}

// accumulate adds one query's ranking to the sums in r and reports whether a relevant entry is in the top 5.
func (r *Retrieval) accumulate(ranked []string, rel map[string]int) bool {
	r.Queries++
	hit := Recall(ranked, rel, 5) > 0
	if hit {
		r.Hit5++
	}
	r.NDCG10 += NDCG(ranked, rel, 10)
	r.Recall5 += Recall(ranked, rel, 5)
	r.Precision5 += Precision(ranked, rel, 5)
	r.MRR10 += MRR(ranked, rel, 10)
	return hit
}

// mean turns the sums into averages.
func (r *Retrieval) mean() {
	if r.Queries == 0 {
		return
	}
	n := float64(r.Queries)
	r.Hit5, r.NDCG10, r.Recall5, r.Precision5, r.MRR10 = r.Hit5/n, r.NDCG10/n, r.Recall5/n, r.Precision5/n, r.MRR10/n
}

// Indexed is what Index stored: the seconds it took and each corpus entry's document ID.
type Indexed struct {
	Seconds   float64
	Documents map[string]string // Doc.ID → stored document ID
}

// Index ingests the corpus through pipe (a file entry as that file, any other as a text document; its id is
// the external id). Entries already indexed with the same content are left alone.
func Index(ctx context.Context, pipe *ingest.Pipeline, ds *Dataset, opt Options) (*Indexed, error) {
	start := time.Now()
	workers := max(opt.Workers, 1)
	if opt.Workers == 0 {
		workers = 2
	}
	coll := collectionName(ds, opt)
	jobs := make(chan Doc)
	out := &Indexed{Documents: map[string]string{}}
	var (
		done     atomic.Int64
		firstErr error
		mu       sync.Mutex
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range jobs {
				req := ingest.Request{Collection: coll, ExternalID: d.ID, Name: d.ID + ".txt", Title: d.Title, Data: []byte(d.Text)}
				if strings.TrimSpace(d.Text) == "" {
					req.Data = []byte(d.Title)
				}
				if d.Path != "" {
					data, err := os.ReadFile(d.Path)
					if err != nil {
						fail(fmt.Errorf("index %s: %w", d.ID, err))
						continue
					}
					req.Name, req.Data = filepath.Base(d.Path), data
				}
				doc, _, err := pipe.Ingest(ctx, rag.LocalPrincipal, req)
				if err != nil {
					fail(fmt.Errorf("index %s: %w", d.ID, err))
				} else {
					mu.Lock()
					out.Documents[d.ID] = doc.ID
					mu.Unlock()
				}
				if n := done.Add(1); opt.Progress != nil {
					opt.Progress("index", int(n), len(ds.Docs))
				}
			}
		}()
	}
	for _, d := range ds.Docs {
		if d.Path == "" && strings.TrimSpace(d.Title+d.Text) == "" {
			// Nothing to index (Cranfield has two empty entries); it can only count as not retrieved.
			done.Add(1)
			continue
		}
		select {
		case jobs <- d:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}

// Evaluate runs every query through ret (and, with opt.Answers, through ans) restricted to the dataset's
// collection, and computes the figures. A query with history is retrieved through ans (the conversation's
// earlier questions asked first, their answers passed as history), as the server does; so sets with
// follow-ups need ans.
func Evaluate(ctx context.Context, ret *retrieve.Retriever, ans *answer.Service, ds *Dataset, opt Options) (*Report, error) {
	k := max(opt.K, 10)
	filter := rag.Filter{Collections: []string{collectionName(ds, opt)}}
	rep := &Report{Dataset: ds.Name, Documents: len(ds.Docs), Queries: len(ds.Queries)}
	lat := make([]float64, 0, len(ds.Queries))
	var docs, pages Retrieval
	avoided := 0
	history := map[string][]rag.Turn{}
	for i, q := range ds.Queries {
		if q.Unanswerable {
			rep.Unanswerable++
		}
		var hits []rag.Hit
		t := time.Now()
		if len(q.History) > 0 {
			if ans == nil {
				return nil, fmt.Errorf("query %s: a follow-up question needs the answer pipeline", q.ID)
			}
			turns, err := conversation(ctx, ans, q.History, filter)
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", q.ID, err)
			}
			history[q.ID] = turns
			t = time.Now()
			a, err := ans.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: q.Text, History: turns, Filter: filter, K: min(k, 20)}, nil)
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", q.ID, err)
			}
			if a.Retrieval != nil {
				hits = a.Retrieval.Hits
			}
		} else {
			res, err := ret.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: q.Text, Filter: filter, K: min(3*k, 100)})
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", q.ID, err)
			}
			hits = res.Hits
		}
		lat = append(lat, float64(time.Since(t).Microseconds())/1000)
		refs := make([]hitRef, len(hits))
		for j, h := range hits {
			refs[j] = hitRef{h.ExternalID, h.PageStart, h.PageEnd}
		}
		if len(q.Relevant) > 0 && !docs.accumulate(rankedDocs(refs, k), q.Relevant) {
			rep.Missed = append(rep.Missed, q.ID)
		}
		if len(q.RelevantPages) > 0 && !pages.accumulate(rankedPages(refs, k), q.RelevantPages) {
			rep.PagesMissed = append(rep.PagesMissed, q.ID)
		}
		if len(q.Avoid) > 0 {
			rep.AvoidQueries++
			if !hitsAny(refs[:min(5, len(refs))], q.Avoid) {
				avoided++
			}
		}
		if opt.Progress != nil {
			opt.Progress("search", i+1, len(ds.Queries))
		}
	}
	docs.mean()
	rep.Retrieval, rep.Judged = docs, docs.Queries
	if pages.Queries > 0 {
		pages.mean()
		rep.Pages = &pages
	}
	if rep.AvoidQueries > 0 {
		share := float64(avoided) / float64(rep.AvoidQueries)
		rep.Avoided = &share
	}
	rep.LatencyP50 = percentile(lat, 50)
	rep.LatencyP95 = percentile(lat, 95)

	if opt.Answers && ans != nil {
		if err := evaluateAnswers(ctx, ans, ds, filter, history, rep, opt); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// conversation asks the questions in order, each with the turns before it, and returns the turns (question,
// answer) to pass as the history of the next question.
func conversation(ctx context.Context, ans *answer.Service, questions []string, filter rag.Filter) ([]rag.Turn, error) {
	var turns []rag.Turn
	for _, hq := range questions {
		a, err := ans.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: hq, History: turns, Filter: filter}, nil)
		if err != nil {
			return nil, err
		}
		turns = append(turns, rag.Turn{Role: rag.RoleUser, Content: hq}, rag.Turn{Role: rag.RoleAssistant, Content: a.Text, DocumentIDs: a.DocumentIDs()})
	}
	return turns, nil
}

// Refused reports whether a is the "not covered" reply: flagged by the answer service, or the generator's
// fixed not-found text in the answer's language.
func Refused(a *rag.Answer) bool {
	return a.NotFound || squash(a.Text) == squash(generate.NotFound(a.Language))
}

func evaluateAnswers(ctx context.Context, ans *answer.Service, ds *Dataset, filter rag.Filter, history map[string][]rag.Turn, rep *Report, opt Options) error {
	var contains, notFound, total, unanswerable, refusedUn int
	var chars, times []float64
	for i, q := range ds.Queries {
		if len(q.Answers) == 0 && !q.Unanswerable {
			continue
		}
		t := time.Now()
		a, err := ans.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: q.Text, History: history[q.ID], Filter: filter}, nil)
		if err != nil {
			return fmt.Errorf("answer %s: %w", q.ID, err)
		}
		refused := Refused(a)
		found := !q.Unanswerable && ContainsAnswer(a.Text, q.Answers)
		if opt.Misses != nil && (q.Unanswerable && !refused || !q.Unanswerable && !found) {
			if err := writeMiss(opt.Misses, q, a, refused); err != nil {
				return err
			}
		}
		if q.Unanswerable {
			unanswerable++
			if refused {
				refusedUn++
			} else {
				rep.FalseAnswered = append(rep.FalseAnswered, q.ID)
			}
		} else {
			total++
			times = append(times, float64(time.Since(t).Microseconds())/1000)
			chars = append(chars, float64(utf8.RuneCountInString(a.Text)))
			if refused {
				notFound++
				rep.FalseRefusals = append(rep.FalseRefusals, q.ID)
			}
			if found {
				contains++
			} else if !refused {
				rep.GoldMissed = append(rep.GoldMissed, q.ID)
			}
		}
		if opt.Progress != nil {
			opt.Progress("answer", i+1, len(ds.Queries))
		}
	}
	if total > 0 {
		share := float64(contains) / float64(total)
		answered := float64(total-notFound) / float64(total)
		falseRefusals := float64(notFound) / float64(total)
		p50, p95 := percentile(chars, 50), percentile(times, 95)
		rep.AnswerContains, rep.AnswerCharsP50, rep.AnswerMSP95, rep.NotFound, rep.Answered = &share, &p50, &p95, &notFound, &answered
		rep.FalseRefusalRate = &falseRefusals
	}
	if unanswerable > 0 {
		refused := float64(refusedUn) / float64(unanswerable)
		falseAnswers := unanswerable - refusedUn
		falseRate := float64(falseAnswers) / float64(unanswerable)
		rep.RefusedUnanswerable, rep.FalseAnswers, rep.FalseAnswerRate = &refused, &falseAnswers, &falseRate
	}
	return nil
}

// writeMiss writes q's miss as one JSON line to w.
func writeMiss(w io.Writer, q Query, a *rag.Answer, refused bool) error {
	m := Miss{ID: q.ID, Question: q.Text, Gold: q.Answers, Unanswerable: q.Unanswerable, Answer: a.Text, Refused: refused}
	cited := map[int]bool{}
	if !refused {
		for _, n := range citationNumbers(a.Text) {
			cited[n] = true
		}
	}
	var hits []rag.Hit
	if a.Retrieval != nil {
		hits = a.Retrieval.Hits
	}
	for i, h := range hits {
		// The answer service numbers the passages it gives the generator 1, 2, … in retrieval order.
		rel := q.Relevant[h.ExternalID] > 0
		if !slices.Contains(m.Retrieved, h.ExternalID) {
			m.Retrieved = append(m.Retrieved, h.ExternalID)
		}
		m.RelevantRetrieved = m.RelevantRetrieved || rel
		m.GoldRetrieved = m.GoldRetrieved || len(q.Answers) > 0 && ContainsAnswer(h.Text, q.Answers)
		if cited[i+1] {
			if !slices.Contains(m.Cited, h.ExternalID) {
				m.Cited = append(m.Cited, h.ExternalID)
			}
			m.RelevantCited = m.RelevantCited || rel
		}
	}
	line, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = w.Write(append(line, '\n'))
	return err
}

// citationNumbers returns the n of each [n] marker in text.
func citationNumbers(text string) []int {
	var out []int
	for _, m := range citeMarker.FindAllString(text, -1) {
		if n, err := strconv.Atoi(strings.Trim(m, " []")); err == nil {
			out = append(out, n)
		}
	}
	return out
}

var citeMarker = regexp.MustCompile(`\s?\[\d+\]`)

// ContainsAnswer reports whether answer contains one of the gold spans, both NFKC-normalised (citation
// markers removed from the answer, table-cell bars read as spaces, whitespace runs collapsed): a table row
// "| Walmart | Oakland | 397 |" holds the span "Walmart Oakland 397".
func ContainsAnswer(answer string, gold []string) bool {
	a := normalizeSpan(citeMarker.ReplaceAllString(answer, ""))
	for _, g := range gold {
		if g = normalizeSpan(g); g != "" && strings.Contains(a, g) {
			return true
		}
	}
	return false
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// normalizeSpan is the form answers and gold spans are compared in: NFKC, the bars between a markdown table's
// cells read as spaces, whitespace runs collapsed.
func normalizeSpan(s string) string {
	return squash(strings.ReplaceAll(norm.NFKC.String(s), "|", " "))
}

// hitRef is a ranked passage: its document's external id and pages (0 for formats without pages).
type hitRef struct {
	ext                string
	pageStart, pageEnd int
}

// hitsAny reports whether one of hits is in avoid: by one of its pages, or by its file.
func hitsAny(hits []hitRef, avoid map[string]bool) bool {
	for _, h := range hits {
		if avoid[h.ext] {
			return true
		}
		for p := h.pageStart; p <= max(h.pageEnd, h.pageStart); p++ {
			if avoid[PageID(h.ext, p)] {
				return true
			}
		}
	}
	return false
}

// rankedDocs turns ranked passages into the ranked list of distinct external ids.
func rankedDocs(hits []hitRef, k int) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range hits {
		if !seen[h.ext] {
			seen[h.ext] = true
			out = append(out, h.ext)
			if len(out) == k {
				break
			}
		}
	}
	return out
}

// rankedPages turns ranked passages into the ranked list of distinct pages (PageID), a passage spanning
// pages giving each of them in order.
func rankedPages(hits []hitRef, k int) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range hits {
		for p := h.pageStart; p <= max(h.pageEnd, h.pageStart); p++ {
			id := PageID(h.ext, p)
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
				if len(out) == k {
					return out
				}
			}
		}
	}
	return out
}

func collectionName(ds *Dataset, opt Options) string {
	if opt.Collection != "" {
		return opt.Collection
	}
	return "eval-" + ds.Name
}
