// Package rerank is ragd's re-ranking stage, run after the fusion of the vector and keyword lists: a
// cross-encoder (a hosted or self-hosted re-rank API) re-scores the best fused candidates against the
// query, and a weighted blend of similarity, recency, importance and permission orders the result
// (seed 003's 0.5 / 0.2 / 0.2 / 0.1 is the preset "seed003"). Either part is optional; with neither, the
// fused order stands. A cross-encoder that fails leaves the fused order and says so (Info.Warning): a
// search never fails because of its re-ranker.
package rerank

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// Weights weigh the blend: score = Similarity·s + Recency·r + Importance·i + Permission·p, each input in
// [0, 1]. s is the hit's relevance as a share of the best candidate's (the cross-encoder's score when one
// ran, else the fused score); r is 2^(-age/half-life) of the document's date; i and p come from Signals.
// All zero means no blend.
type Weights struct {
	Similarity, Recency, Importance, Permission float64
}

// Any reports whether the blend is on.
func (w Weights) Any() bool {
	return w.Similarity != 0 || w.Recency != 0 || w.Importance != 0 || w.Permission != 0
}

// Presets are the named weight sets RAGD_RERANK_PRESET selects.
var Presets = map[string]Weights{
	"none": {},
	// seed003 is FR-RAG-03.3 of seed 003: similarity 0.5, recency 0.2, importance (users' ratings) 0.2,
	// permission 0.1.
	"seed003": {Similarity: 0.5, Recency: 0.2, Importance: 0.2, Permission: 0.1},
}

// Preset returns the named weights; "" is "none".
func Preset(name string) (Weights, error) {
	if name == "" {
		return Weights{}, nil
	}
	w, ok := Presets[name]
	if !ok {
		return Weights{}, fmt.Errorf("unknown re-rank preset %q (want none or seed003)", name)
	}
	return w, nil
}

// Signals supplies the importance and permission inputs of the blend for a batch of hits, each in [0, 1]
// and keyed by chunk ID; a hit missing from a map gets the default (importance 0, permission 1). The
// feedback work implements it from users' ratings; MetadataSignals reads document metadata fields.
type Signals interface {
	Signals(ctx context.Context, p rag.Principal, hits []rag.Hit) (importance, permission map[int64]float64, err error)
}

// MetadataSignals reads importance and permission from numeric metadata fields of the hits' documents
// (clamped to [0, 1]).
type MetadataSignals struct {
	ImportanceKey, PermissionKey string
}

// Signals implements Signals.
func (m MetadataSignals) Signals(_ context.Context, _ rag.Principal, hits []rag.Hit) (imp, perm map[int64]float64, err error) {
	imp, perm = map[int64]float64{}, map[int64]float64{}
	for _, h := range hits {
		if v, ok := rag.Number(h.Metadata[m.ImportanceKey]); ok && m.ImportanceKey != "" {
			imp[h.ID] = clamp01(v)
		}
		if v, ok := rag.Number(h.Metadata[m.PermissionKey]); ok && m.PermissionKey != "" {
			perm[h.ID] = clamp01(v)
		}
	}
	return imp, perm, nil
}

// Default metadata fields of MetadataSignals and of the document date.
const (
	DefaultImportanceKey = "importance"
	DefaultPermissionKey = "permission_weight"
	AuthoredAtKey        = "authored_at"
)

// Options configure the stage. The zero value does nothing.
type Options struct {
	// Weights is the blend (zero: off).
	Weights Weights
	// HalfLife is the age at which recency halves (default 90 days).
	HalfLife time.Duration
	// Signals supplies importance and permission (default MetadataSignals with the default keys).
	Signals Signals
	// Encoder, when set, re-scores the TopN best fused candidates (default 50).
	Encoder CrossEncoder
	TopN    int
	// Now is the clock for recency (default time.Now).
	Now func() time.Time
}

// Active reports whether the stage changes anything.
func (o Options) Active() bool { return o.Weights.Any() || o.Encoder != nil }

// WithDefaults fills the zero fields.
func (o Options) WithDefaults() Options {
	if o.HalfLife <= 0 {
		o.HalfLife = 90 * 24 * time.Hour
	}
	if o.Signals == nil {
		o.Signals = MetadataSignals{ImportanceKey: DefaultImportanceKey, PermissionKey: DefaultPermissionKey}
	}
	if o.TopN <= 0 {
		o.TopN = 50
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Apply re-scores hits (best fused first, FusedScore set) in place and sorts them by their new Score. The
// returned Info says what ran; its Warning is set when the cross-encoder failed and its scores are missing.
func (o Options) Apply(ctx context.Context, p rag.Principal, query string, hits []rag.Hit) *rag.RerankInfo {
	if !o.Active() || len(hits) == 0 {
		return nil
	}
	info := &rag.RerankInfo{}
	if o.Weights.Any() {
		info.Weights = []float64{o.Weights.Similarity, o.Weights.Recency, o.Weights.Importance, o.Weights.Permission}
	}
	encoded := 0
	if o.Encoder != nil {
		info.Reranker = o.Encoder.Name()
		n := min(o.TopN, len(hits))
		texts := make([]string, n)
		for i := range texts {
			h := &hits[i]
			texts[i] = textproc.ContextText(h.Title, h.Section, h.Text)
		}
		scores, err := o.Encoder.Score(ctx, query, texts)
		if err != nil {
			info.Warning = "re-ranker failed, fused order kept: " + rag.ErrorMessage(err)
		} else {
			encoded = n
			info.Candidates = n
			for i, s := range scores {
				v := s
				hits[i].RerankScore = &v
			}
		}
	}
	// Similarity: the cross-encoder's scores min-max scaled over the passages it saw (the rest follow them
	// at their fused score scaled below the lowest), or the fused score as a share of the best.
	sim := make([]float64, len(hits))
	if encoded > 0 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, h := range hits[:encoded] {
			lo, hi = math.Min(lo, *h.RerankScore), math.Max(hi, *h.RerankScore)
		}
		for i := range hits {
			switch {
			case i < encoded && hi > lo:
				sim[i] = 0.5 + 0.5*(*hits[i].RerankScore-lo)/(hi-lo)
			case i < encoded:
				sim[i] = 1
			default:
				sim[i] = 0.5 * hits[i].FusedScore / hits[encoded-1].FusedScore
			}
		}
	} else {
		best := hits[0].FusedScore
		for i := range hits {
			if best > 0 {
				sim[i] = hits[i].FusedScore / best
			}
		}
	}
	if !o.Weights.Any() {
		for i := range hits {
			hits[i].Score = sim[i]
		}
	} else {
		imp, perm, err := o.Signals.Signals(ctx, p, hits)
		if err != nil {
			info.Warning = strings.TrimPrefix(info.Warning+"; ", "; ") + "importance and permission unavailable: " + rag.ErrorMessage(err)
		}
		w, now := o.Weights, o.Now()
		for i := range hits {
			h := &hits[i]
			r := math.Exp2(-float64(max(0, now.Sub(Date(h)))) / float64(o.HalfLife))
			pv, ok := perm[h.ID]
			if !ok {
				pv = 1
			}
			iv := imp[h.ID]
			h.Recency, h.Importance, h.Permission = &r, &iv, &pv
			h.Score = w.Similarity*sim[i] + w.Recency*r + w.Importance*iv + w.Permission*pv
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	return info
}

// Date is a hit's document date: its authored_at metadata field (RFC 3339 or YYYY-MM-DD) when it has one,
// else when the document was stored.
func Date(h *rag.Hit) time.Time {
	if s, ok := h.Metadata[AuthoredAtKey].(string); ok {
		for _, layout := range []string{time.RFC3339, "2006-01-02", "2006-01", "2006"} {
			if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
				return t
			}
		}
	}
	return h.UpdatedAt
}

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }
