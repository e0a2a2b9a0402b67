package rerank

import (
	"context"
	"slices"

	"github.com/ragd/ragd/internal/rag"
)

// Tallier counts users' ratings of sources per passage (rag.FeedbackStore implements it).
type Tallier interface {
	FeedbackTallies(ctx context.Context, documentIDs []string) ([]rag.FeedbackTally, error)
}

// Importance of the feedback signal: a passage nobody rated is neutral (NeutralImportance, or its
// document's importance metadata field when it has one); ratings move it towards 1 (up) or 0 (down), each
// rating of the passage itself counting as one, each rating of another passage of its document as
// DocumentShare, against PriorWeight ratings' worth of the prior.
const (
	NeutralImportance = 0.5
	PriorWeight       = 2.0
	DocumentShare     = 0.5
)

// FeedbackSignals derives importance from the thumbs up and down users gave sources (rag.Feedback of
// target source, over every principal): per passage, by its text's hash so that a rating survives the
// re-ingestion of an unchanged passage, and per document through its other passages. Permission, and the
// importance prior, come from Base (MetadataSignals with the default keys when nil). A hit of a document
// without ratings keeps Base's importance, or NeutralImportance when Base has none.
type FeedbackSignals struct {
	Tallies Tallier
	Base    Signals
}

// Signals implements Signals.
func (f FeedbackSignals) Signals(ctx context.Context, p rag.Principal, hits []rag.Hit) (imp, perm map[int64]float64, err error) {
	base := f.Base
	if base == nil {
		base = MetadataSignals{ImportanceKey: DefaultImportanceKey, PermissionKey: DefaultPermissionKey}
	}
	prior, perm, err := base.Signals(ctx, p, hits)
	if err != nil {
		return nil, nil, err
	}
	var docs []string
	for _, h := range hits {
		if !slices.Contains(docs, h.DocumentID) {
			docs = append(docs, h.DocumentID)
		}
	}
	tallies, err := f.Tallies.FeedbackTallies(ctx, docs)
	if err != nil {
		return nil, perm, err
	}
	type count struct{ up, down float64 }
	passage, document := map[[2]string]count{}, map[string]count{}
	for _, t := range tallies {
		passage[[2]string{t.DocumentID, t.Hash}] = count{float64(t.Up), float64(t.Down)}
		d := document[t.DocumentID]
		document[t.DocumentID] = count{d.up + float64(t.Up), d.down + float64(t.Down)}
	}
	imp = make(map[int64]float64, len(hits))
	for _, h := range hits {
		pr, ok := prior[h.ID]
		if !ok {
			pr = NeutralImportance
		}
		own, doc := passage[[2]string{h.DocumentID, rag.PassageHash(h.Text)}], document[h.DocumentID]
		up := own.up + DocumentShare*(doc.up-own.up)
		down := own.down + DocumentShare*(doc.down-own.down)
		imp[h.ID] = (PriorWeight*pr + up) / (PriorWeight + up + down)
	}
	return imp, perm, nil
}
