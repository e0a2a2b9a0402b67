package eval

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/ragd/ragd/internal/answer"
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
}

// Report holds the measured figures; JSON keys are those `ragd eval --json` prints.
type Report struct {
	Dataset      string  `json:"dataset"`
	Documents    int     `json:"documents"`
	Queries      int     `json:"queries"`
	NDCG10       float64 `json:"ndcg@10"`
	Recall5      float64 `json:"recall@5"`
	Precision5   float64 `json:"precision@5"`
	MRR10        float64 `json:"mrr@10"`
	LatencyP50   float64 `json:"latency_ms_p50"`
	LatencyP95   float64 `json:"latency_ms_p95"`
	IndexSeconds float64 `json:"index_seconds"`

	AnswerContains *float64 `json:"answer_contains,omitempty"`
	AnswerCharsP50 *float64 `json:"answer_chars_p50,omitempty"`
	AnswerMSP95    *float64 `json:"answer_ms_p95,omitempty"`
	// NotFound counts questions the answer pipeline answered with "not covered".
	NotFound *int `json:"answers_not_found,omitempty"`
}

// Index ingests the corpus through pipe (each entry as a text document with its id as external id) and
// returns the seconds it took. Entries already indexed with the same text are left alone.
func Index(ctx context.Context, pipe *ingest.Pipeline, ds *Dataset, opt Options) (float64, error) {
	start := time.Now()
	workers := max(opt.Workers, 1)
	if opt.Workers == 0 {
		workers = 2
	}
	coll := collectionName(ds, opt)
	jobs := make(chan Doc)
	var (
		done     atomic.Int64
		firstErr error
		mu       sync.Mutex
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range jobs {
				body := d.Text
				if strings.TrimSpace(body) == "" {
					body = d.Title
				}
				_, _, err := pipe.Ingest(ctx, rag.LocalPrincipal, ingest.Request{
					Collection: coll,
					ExternalID: d.ID,
					Name:       d.ID + ".txt",
					Title:      d.Title,
					Data:       []byte(body),
				})
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("index %s: %w", d.ID, err)
						cancel()
					}
					mu.Unlock()
				}
				if n := done.Add(1); opt.Progress != nil {
					opt.Progress("index", int(n), len(ds.Docs))
				}
			}
		}()
	}
	for _, d := range ds.Docs {
		if strings.TrimSpace(d.Title+d.Text) == "" {
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
		return 0, firstErr
	}
	return time.Since(start).Seconds(), nil
}

// Evaluate runs every query through ret (and, with opt.Answers, through ans) restricted to the dataset's
// collection, and computes the figures.
func Evaluate(ctx context.Context, ret *retrieve.Retriever, ans *answer.Service, ds *Dataset, opt Options) (*Report, error) {
	k := max(opt.K, 10)
	filter := rag.Filter{Collections: []string{collectionName(ds, opt)}}
	rep := &Report{Dataset: ds.Name, Documents: len(ds.Docs), Queries: len(ds.Queries)}
	lat := make([]float64, 0, len(ds.Queries))
	for i, q := range ds.Queries {
		t := time.Now()
		res, err := ret.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: q.Text, Filter: filter, K: min(3*k, 100)})
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.ID, err)
		}
		lat = append(lat, float64(time.Since(t).Microseconds())/1000)
		ranked := rankedDocs(res.Hits, k)
		rep.NDCG10 += NDCG(ranked, q.Relevant, 10)
		rep.Recall5 += Recall(ranked, q.Relevant, 5)
		rep.Precision5 += Precision(ranked, q.Relevant, 5)
		rep.MRR10 += MRR(ranked, q.Relevant, 10)
		if opt.Progress != nil {
			opt.Progress("search", i+1, len(ds.Queries))
		}
	}
	n := float64(len(ds.Queries))
	rep.NDCG10 /= n
	rep.Recall5 /= n
	rep.Precision5 /= n
	rep.MRR10 /= n
	rep.LatencyP50 = percentile(lat, 50)
	rep.LatencyP95 = percentile(lat, 95)

	if opt.Answers && ans != nil {
		if err := evaluateAnswers(ctx, ans, ds, filter, rep, opt); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

func evaluateAnswers(ctx context.Context, ans *answer.Service, ds *Dataset, filter rag.Filter, rep *Report, opt Options) error {
	var contains, notFound, total int
	var chars, times []float64
	for i, q := range ds.Queries {
		if len(q.Answers) == 0 {
			continue
		}
		total++
		t := time.Now()
		a, err := ans.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: q.Text, Filter: filter}, nil)
		if err != nil {
			return fmt.Errorf("answer %s: %w", q.ID, err)
		}
		times = append(times, float64(time.Since(t).Microseconds())/1000)
		chars = append(chars, float64(utf8.RuneCountInString(a.Text)))
		if a.NotFound {
			notFound++
		}
		if ContainsAnswer(a.Text, q.Answers) {
			contains++
		}
		if opt.Progress != nil {
			opt.Progress("answer", i+1, len(ds.Queries))
		}
	}
	if total == 0 {
		return nil
	}
	share := float64(contains) / float64(total)
	p50, p95 := percentile(chars, 50), percentile(times, 95)
	rep.AnswerContains, rep.AnswerCharsP50, rep.AnswerMSP95, rep.NotFound = &share, &p50, &p95, &notFound
	return nil
}

var citeMarker = regexp.MustCompile(`\s?\[\d+\]`)

// ContainsAnswer reports whether answer contains one of the gold spans, both NFKC-normalised (citation
// markers removed from the answer, whitespace runs collapsed).
func ContainsAnswer(answer string, gold []string) bool {
	a := squash(norm.NFKC.String(citeMarker.ReplaceAllString(answer, "")))
	for _, g := range gold {
		if g = squash(norm.NFKC.String(g)); g != "" && strings.Contains(a, g) {
			return true
		}
	}
	return false
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// rankedDocs turns chunk hits into the ranked list of distinct external ids.
func rankedDocs(hits []rag.Hit, k int) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range hits {
		if !seen[h.ExternalID] {
			seen[h.ExternalID] = true
			out = append(out, h.ExternalID)
			if len(out) == k {
				break
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
