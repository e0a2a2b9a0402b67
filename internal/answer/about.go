package answer

import (
	"context"
	"slices"

	"github.com/ragd/ragd/internal/rag"
)

// aboutDocuments returns the documents a question is about as a whole — those whose opening passage (title
// page) retrieval found for it because the question names them by their kind ("이 법률안은 누가
// 대표발의했나요?", "When was this report written?"; rag.Hit.Opening) — in the order of their opening passages.
func aboutDocuments(hits []rag.Hit) []string {
	var docs []string
	for _, h := range hits {
		if h.Opening && !slices.Contains(docs, h.DocumentID) {
			docs = append(docs, h.DocumentID)
		}
	}
	return docs
}

// refocus returns the passages a question about a document as a whole is answered from first, or nil:
// when res holds the opening passage of a document the question names by its kind, and passages of other
// documents too, the search run again inside the documents so named. A long document that repeats the
// question's other words on every page (the minutes list 94 bills "…일부개정법률안(… 의원 대표발의)") then
// no longer fills the passages a question about "this bill" is answered from, and the named document gets
// all of them rather than the two a document may hold otherwise (rag.AnswerMaxPerDocument). The answer
// service falls back to res when the generator finds no answer there: a question may name a document and
// ask what another one says of it.
func (s *Service) refocus(ctx context.Context, p rag.Principal, req rag.SearchRequest, res *rag.SearchResult) (*rag.SearchResult, error) {
	docs := aboutDocuments(res.Hits)
	if len(docs) == 0 || !slices.ContainsFunc(res.Hits, func(h rag.Hit) bool { return !slices.Contains(docs, h.DocumentID) }) {
		return nil, nil
	}
	req.Filter.DocumentIDs = docs
	out, err := s.retriever.Search(ctx, p, req)
	if err != nil || len(out.Hits) == 0 {
		return nil, err
	}
	addCosts(out, res)
	return out, nil
}

// MaxReserve is the most passages of the best passage's document that the per-document cap kept out and
// that the extractive answerer may quote once the passages it was given cover the question
// (rag.GenerateRequest.Reserve).
const MaxReserve = 6

// reserve returns the passages of the best passage's document that the per-document cap kept out of res:
// those among the first 2k of req searched without the cap that res lacks (at most MaxReserve, in their
// order), when the cap held that document to rag.AnswerMaxPerDocument passages of res. The passage holding
// the answer is often the document's third or fourth. A best document with fewer passages than the cap
// allows was not held back, and its further passages rank below other documents' on their own (a
// lecture's other paragraph is not its answer). Only for a quoting generator: a hosted model is given
// the passages it reads.
func (s *Service) reserve(ctx context.Context, p rag.Principal, req rag.SearchRequest, res *rag.SearchResult) ([]rag.Hit, error) {
	if q, ok := s.generator.(QuoteOnly); !ok || !q.QuotesOnly() || len(res.Hits) == 0 {
		return nil, nil
	}
	top, n := res.Hits[0].DocumentID, 0
	for _, h := range res.Hits {
		if h.DocumentID == top {
			n++
		}
	}
	if n < rag.AnswerMaxPerDocument {
		return nil, nil
	}
	req.K = 2 * max(req.K, len(res.Hits))
	req.MaxPerDocument = req.K // no cap
	out, err := s.retriever.Search(ctx, p, req)
	if err != nil {
		return nil, err
	}
	var extra []rag.Hit
	for _, h := range out.Hits {
		if h.DocumentID != top || slices.ContainsFunc(res.Hits, func(o rag.Hit) bool { return o.ID == h.ID }) {
			continue
		}
		extra = append(extra, h)
		if len(extra) == MaxReserve {
			break
		}
	}
	return extra, nil
}
