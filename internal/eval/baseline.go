package eval

import (
	"context"
	"fmt"

	"github.com/ragd/ragd/internal/eval/bm25"
	"github.com/ragd/ragd/internal/rag"
)

// BaselineBM25 ranks every judged query with plain BM25 (bm25.PlainTerms: words and Hangul syllable bigrams;
// k1 0.9, b 0.4) over the passages ragd stored for the dataset — the chunks of the documents in idx — and
// computes the same figures as Evaluate, by document and by page. It is the reference a retrieval change is
// compared with: ragd's extras should beat it on questions they were not tuned on.
func BaselineBM25(ctx context.Context, st rag.Store, ds *Dataset, idx *Indexed, opt Options) (*Baseline, error) {
	k := max(opt.K, 10)
	var (
		refs  []hitRef
		terms [][]string
	)
	for _, d := range ds.Docs {
		id, ok := idx.Documents[d.ID]
		if !ok {
			continue
		}
		chunks, err := st.ListChunks(ctx, rag.LocalPrincipal, id)
		if err != nil {
			return nil, fmt.Errorf("baseline: chunks of %s: %w", d.ID, err)
		}
		for _, c := range chunks {
			refs = append(refs, hitRef{d.ID, c.PageStart, c.PageEnd})
			terms = append(terms, bm25.PlainTerms(c.Text))
		}
	}
	ix := bm25.New(terms, 0.9, 0.4)
	var docs, pages Retrieval
	for _, q := range ds.Queries {
		if len(q.Relevant) == 0 {
			continue
		}
		top := ix.Search(bm25.PlainTerms(q.Text), min(3*k, 100))
		ranked := make([]hitRef, len(top))
		for i, c := range top {
			ranked[i] = refs[c]
		}
		docs.accumulate(rankedDocs(ranked, k), q.Relevant)
		if len(q.RelevantPages) > 0 {
			pages.accumulate(rankedPages(ranked, k), q.RelevantPages)
		}
	}
	docs.mean()
	b := &Baseline{Retrieval: docs}
	if pages.Queries > 0 {
		pages.mean()
		b.Pages = &pages
	}
	return b, nil
}
