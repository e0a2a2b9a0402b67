package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// jsonHit is the shape `ragd search --json` prints per hit.
type jsonHit struct {
	DocumentID string `json:"document_id"`
	ExternalID string `json:"external_id"`
	ChunkID    int64  `json:"chunk_id"`
	Title      string `json:"title"`
	Source     string `json:"source"`
	PageStart  int    `json:"page_start"`
	PageEnd    int    `json:"page_end"`
	Section    string `json:"section"`
	Text       string `json:"text"`
	// OCR marks a passage read from page images, with the OCR engine's confidence (0 to 1).
	OCR           bool    `json:"ocr,omitempty"`
	OCRConfidence float64 `json:"ocr_confidence,omitempty"`
	rag.Scores
}

func toJSONHit(h rag.Hit) jsonHit {
	return jsonHit{
		DocumentID: h.DocumentID, ExternalID: h.ExternalID, ChunkID: h.ID, Title: h.Title, Source: h.Source,
		PageStart: h.PageStart, PageEnd: h.PageEnd, Section: h.Section, Text: h.Text, Scores: h.Scores,
		OCR: h.OCR, OCRConfidence: h.OCRConfidence,
	}
}

type queryFlags struct {
	common
	k           int
	collections multi
	documents   multi
	filters     multi
	json        bool
	maxK        int
}

// checkK checks --k with the API's bounds (rag.CheckK): 0 is the default, otherwise 1 to the surface's
// largest.
func checkK(k, maxK int) error {
	if err := rag.CheckK(k, maxK); err != nil {
		return usageErr("--%s", rag.ErrorMessage(err))
	}
	return nil
}

// register binds the flags; maxK is the surface's largest k (rag.MaxSearchK, rag.MaxAnswerK), checked by
// checkK as the HTTP API checks it.
func (q *queryFlags) register(fs *flag.FlagSet, env *Env, defaultK, maxK int, kUsage string) {
	q.common.register(fs, env)
	q.maxK = maxK
	fs.IntVar(&q.k, "k", defaultK, fmt.Sprintf("%s, 1 to %d; 0 is the service's default", kUsage, maxK))
	fs.Var(&q.collections, "collection", "restrict to the collection `NAME` (repeatable)")
	fs.Var(&q.documents, "document", "restrict to the document `ID` (repeatable)")
	fs.Var(&q.filters, "filter", "filter `EXPR`: key=value, key!=v, key>=v, key<=v, key>v, key<v; a|b for any of (repeatable)")
	fs.BoolVar(&q.json, "json", false, "print JSON")
}

// filter is the retrieval filter of --filter, --collection and --document.
func (q *queryFlags) filter() (rag.Filter, error) {
	f, err := parseFilters(q.filters, q.collections)
	f.DocumentIDs = append(f.DocumentIDs, q.documents...)
	return f, err
}

func runSearch(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("search")
	q := queryFlags{common: common{quiet: true}}
	q.register(fs, env, 10, rag.MaxSearchK, "number of hits")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	query := strings.Join(pos, " ")
	if strings.TrimSpace(query) == "" {
		return usageErr("a query is required")
	}
	if err := checkK(q.k, q.maxK); err != nil {
		return err
	}
	filter, err := q.filter()
	if err != nil {
		return err
	}
	a, err := q.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.Retriever.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: query, Filter: filter, K: q.k})
	if err != nil {
		return err
	}
	if q.json {
		out := struct {
			Hits   []jsonHit       `json:"hits"`
			Rerank *rag.RerankInfo `json:"rerank,omitempty"`
		}{Hits: []jsonHit{}, Rerank: res.Rerank}
		for _, h := range res.Hits {
			out.Hits = append(out.Hits, toJSONHit(h))
		}
		return writeJSON(env.Stdout, out)
	}
	if res.Rerank != nil && res.Rerank.Warning != "" {
		fmt.Fprintf(env.Stderr, "warning: %s\n", res.Rerank.Warning)
	}
	if len(res.Hits) == 0 {
		fmt.Fprintln(env.Stdout, "no results")
		return nil
	}
	for i, h := range res.Hits {
		fmt.Fprintf(env.Stdout, "%2d. %s%s  score %.4f (vector %.3f #%d, keyword %.2f #%d)\n", i+1, h.Title, where(h),
			h.Score, h.VectorScore, h.VectorRank, h.KeywordScore, h.KeywordRank)
		fmt.Fprintf(env.Stdout, "    %s\n", snippet(h.Text, 220))
	}
	fmt.Fprintf(env.Stdout, "%d hits in %.1f ms\n", len(res.Hits), res.TotalMS)
	return nil
}

func runAsk(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("ask")
	q := queryFlags{common: common{quiet: true}}
	q.register(fs, env, 0, rag.MaxAnswerK, "passages given to the generator")
	asOf := fs.String("as-of", "", "`DATE` (YYYY-MM-DD) relative dates of the question resolve against, over a collection with a metadata schema (default today)")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	question := strings.Join(pos, " ")
	if strings.TrimSpace(question) == "" {
		return usageErr("a question is required")
	}
	if err := checkK(q.k, q.maxK); err != nil {
		return err
	}
	filter, err := q.filter()
	if err != nil {
		return err
	}
	var day time.Time
	if *asOf != "" {
		if day, err = time.Parse(time.DateOnly, *asOf); err != nil {
			return usageErr("--as-of: want a date YYYY-MM-DD, got %q", *asOf)
		}
	}
	a, err := q.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	var passages []rag.Source
	ans, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: question, Filter: filter, K: q.k, AsOf: day}, func(ev rag.AnswerEvent) error {
		if ev.Type == rag.AnswerSources {
			passages = ev.Sources
		}
		return nil
	})
	if err != nil {
		return err
	}
	if q.json {
		// The shape of POST /api/chat's answer.
		return writeJSON(env.Stdout, rag.ViewAnswer(ans, passages, 0))
	}
	if ans.Truncated {
		fmt.Fprintf(env.Stdout, "(question truncated to %d characters)\n", rag.MaxQuestionChars)
	}
	fmt.Fprintln(env.Stdout, ans.Text)
	if len(ans.Sources) > 0 {
		fmt.Fprintln(env.Stdout, "\nSources:")
		for _, s := range ans.Sources {
			if s.ID == 0 { // a row of a collection with a metadata schema, not a passage
				fmt.Fprintf(env.Stdout, "[%d] %s (%s)\n", s.N, s.Title, s.ExternalID)
				continue
			}
			fmt.Fprintf(env.Stdout, "[%d] %s%s, chunk %d%s\n", s.N, s.Title, where(s.Hit), s.Index, metaText(s.Metadata))
		}
	}
	return nil
}

// metaText renders a document's metadata as " (key=value, …)" in key order, or "" when it has none.
func metaText(m map[string]any) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// where renders a hit's page span and section.
func where(h rag.Hit) string {
	var b strings.Builder
	switch {
	case h.PageStart > 0 && h.PageEnd > h.PageStart:
		fmt.Fprintf(&b, ", pp. %d–%d", h.PageStart, h.PageEnd)
	case h.PageStart > 0:
		fmt.Fprintf(&b, ", p. %d", h.PageStart)
	}
	if h.OCR {
		fmt.Fprintf(&b, " (OCR %.0f %%)", 100*h.OCRConfidence)
	}
	if h.Section != "" {
		fmt.Fprintf(&b, ", %s", h.Section)
	}
	return b.String()
}

func snippet(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
