package reembed

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// Status is what GET /api/status shows of the embedding spaces.
type Status struct {
	// Configured is the configured embedder's space: new chunks are embedded into it.
	Configured string `json:"configured"`
	// Search is the space searches use now; "" when search is keyword-only.
	Search string `json:"search"`
	// Mode is "hybrid" (vector and keyword candidates) or "keyword" (keyword only).
	Mode string `json:"mode"`
	// Reason says why searches do not use the configured space ("" when they do).
	Reason string `json:"reason,omitempty"`
	// Chunks is the number of current chunks.
	Chunks int `json:"chunks"`
	// Spaces lists every space with vectors in the store, and the configured one, configured first.
	Spaces  []SpaceStatus `json:"spaces"`
	Reembed Progress      `json:"reembed"`
}

// SpaceStatus is one embedding space of the store.
type SpaceStatus struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Dim      int    `json:"dim"`
	// Chunks is how many current chunks have a vector in the space; Percent is that share of all (0–100).
	Chunks     int     `json:"chunks"`
	Percent    float64 `json:"percent"`
	Configured bool    `json:"configured"`
	Search     bool    `json:"search"`
	// Unusable says why an old space cannot be searched (its provider is not configured).
	Unusable string `json:"unusable,omitempty"`
}

// Progress is the re-embed into the configured space.
type Progress struct {
	// State is "complete" (every chunk has a vector in the configured space), "running" (this process is
	// re-embedding), "failed" (this process's last run stopped with LastError; the next resumes) or
	// "pending" (chunks are missing and no run is active here: a periodic job, here or in a worker, will
	// take them).
	State string `json:"state"`
	// Done of Total current chunks have a vector in the configured space; Percent is Done/Total (0–100).
	Done    int     `json:"done"`
	Total   int     `json:"total"`
	Percent float64 `json:"percent"`
	// Embedded counts the chunks this process re-embedded since it started.
	Embedded   int        `json:"embedded"`
	Running    bool       `json:"-"`
	LastError  string     `json:"last_error,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

func (s *Service) setProgress(f func(p *Progress)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.progress)
}

// Status counts the store's vectors, decides again which space searches use, and reports both with the
// re-embed's progress.
func (s *Service) Status(ctx context.Context) (*Status, error) {
	stats, err := s.Refresh(ctx)
	if err != nil {
		return nil, err
	}
	pl := s.plan.Load()
	target := s.configured.Space()
	st := &Status{Configured: target.ID(), Search: pl.space.ID(), Mode: "hybrid", Reason: pl.reason, Chunks: stats.Chunks}
	if pl.keyword {
		st.Search, st.Mode = "", "keyword"
	}
	counts := map[string]int{target.ID(): stats.Spaces[target.ID()]}
	for id, n := range stats.Spaces {
		if n > 0 {
			counts[id] = n
		}
	}
	s.mu.Lock()
	for id, n := range counts {
		ss := SpaceStatus{ID: id, Chunks: n, Percent: percent(n, stats.Chunks), Configured: id == target.ID(),
			Search: id == st.Search, Unusable: s.unusable[id]}
		if sp, err := ParseSpace(id); err == nil {
			ss.Provider, ss.Model, ss.Dim = sp.Provider, sp.Model, sp.Dim
		}
		st.Spaces = append(st.Spaces, ss)
	}
	st.Reembed = s.progress
	s.mu.Unlock()
	slices.SortFunc(st.Spaces, func(a, b SpaceStatus) int {
		switch {
		case a.Configured != b.Configured:
			if a.Configured {
				return -1
			}
			return 1
		case a.Chunks != b.Chunks:
			return b.Chunks - a.Chunks
		}
		return strings.Compare(a.ID, b.ID)
	})

	p := &st.Reembed
	p.Done, p.Total = counts[target.ID()], stats.Chunks
	p.Percent = percent(p.Done, p.Total)
	switch {
	case p.Done >= p.Total:
		p.State = "complete"
	case p.Running:
		p.State = "running"
	case p.LastError != "":
		p.State = "failed"
	default:
		p.State = "pending"
	}
	return st, nil
}

// percent is n of total in percent, rounded down to one decimal so that 99.96% does not show as 100.
func percent(n, total int) float64 {
	if total <= 0 || n >= total {
		return 100
	}
	return math.Floor(float64(n)*1000/float64(total)) / 10
}

// Drop removes every vector of the space id (rag.Store.DropSpace), to reclaim the room of an embedder that
// is no longer used, and decides again which space searches use. It refuses the configured space, and the
// space searches use now (an old space, while the re-embed into the configured one runs) unless force is
// set: dropping that leaves search keyword-only until the re-embed completes. Errors: CodeInvalid for a
// malformed or refused id, the store's errors. It returns how many vectors were removed.
func (s *Service) Drop(ctx context.Context, id string, force bool) (int, error) {
	sp, err := ParseSpace(id)
	if err != nil {
		return 0, rag.Errorf(rag.CodeInvalid, "%v", err)
	}
	if sp == s.configured.Space() {
		return 0, rag.Errorf(rag.CodeInvalid, "space %s is the configured embedder's: new chunks are embedded into it", id)
	}
	if _, err := s.Refresh(ctx); err != nil {
		return 0, err
	}
	if pl := s.plan.Load(); !pl.keyword && pl.space == sp && !force {
		return 0, rag.Errorf(rag.CodeInvalid, "searches use space %s until the re-embed into %s completes (%s); force the drop to search by keyword only until then",
			id, s.configured.Space().ID(), pl.reason)
	}
	n, err := s.store.DropSpace(ctx, sp)
	if err != nil {
		return 0, err
	}
	s.opt.Logger.Info("embedding space dropped", slog.String("space", id), slog.Int("vectors", n))
	if _, err := s.Refresh(ctx); err != nil {
		return n, err
	}
	return n, nil
}
