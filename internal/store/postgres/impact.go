package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

// The keyword query without a filter reads each term's postings best first and stops as soon as no chunk it
// has not seen can reach the top k: Fagin's threshold algorithm over impact-ordered postings (migration 0025's
// postings_impact_idx), with the exact top k of scoring every posting.
//
// A posting's impact is its BM25 share without the term's weight at a fixed reference length,
// i0 = tf / (tf + a + c0·dl) with a = k1(1-b) and c0 = impactC0; its real share is w·tf / (tf + a + c·dl) with
// c = k1·b/avgdl. Writing x = (a + c0·dl)/tf = 1/i0 - 1, the real share is w / (1 + x·(a + c·dl)/(a + c0·dl))
// and the last factor is at least r = min(1, c/c0), so every posting after one of impact i0 in a term's list
// has a share of at most w / (1 + x·r): the term's frontier. Each round reads the next postings of the terms
// whose frontier is largest (one statement, each term's list a LATERAL index-only read with OFFSET/LIMIT):
//
//   - a chunk's lower bound is the sum of the shares read for it, its upper bound that plus the frontiers of
//     the terms not read for it; θ is the k-th largest lower bound (at most the k-th best score);
//   - a chunk not read at all scores at most F, the sum of the frontiers: once F < θ, no such chunk is in the
//     top k, and reading stops;
//   - the chunks read whose upper bound reaches θ get their missing shares by primary-key lookups, best upper
//     bound first, in batches, until the next upper bound is below the k-th exact score; the best k of the
//     exact scores are the answer (ties to the lower chunk ID).
//
// Shares are computed as the plain statement computes them (same operations in float8), so scores are equal.
// When reading would take more than impactMaxRead postings (many common terms, whose frontiers fall slowly),
// the query gives up and runs the MaxScore statement (keyword.go) in the same snapshot instead.

// impactA and impactC0 are the constants of postings_impact_idx's expression (a = k1(1-b), c0 = k1·b/avgdl0).
var (
	impactA  = bm25K1 * (1 - bm25B)
	impactC0 = 0.0078125
)

// impactOrder is the expression postings_impact_idx is ordered by, on postings aliased p. With impactC0 other
// than the index's (tests), reads sort instead of using the index; results are the same.
func impactOrder() string {
	return fmt.Sprintf("(p.tf::float8 / (p.tf::float8 + %g::float8 + p.dl::float8 * %g::float8))", 0.3, impactC0)
}

// impactFirst is how many postings of each term the first round reads; rounds then double a term's depth.
var impactFirst = func(k int) int { return 4*k + 16 }

// impactMaxRead is how many postings a query reads at most before it runs the MaxScore statement instead.
var impactMaxRead = 4_000

// impactBatch is how many chunks one round of lookups completes.
const impactBatch = 256

// impactMaxTerms is the most terms the threshold algorithm tracks per chunk (a bit each); longer queries use
// the MaxScore statement.
const impactMaxTerms = 64

type impactChunk struct {
	id     int64
	known  float64   // sum of the shares read (for bounds)
	shares []float64 // per term, 0 where not read; the exact score sums them in term order
	seen   uint64    // terms whose share is read
	ub     float64
}

// score is the sum of c's shares in term order, so that equal chunks get equal scores.
func (c *impactChunk) score() float64 {
	s := 0.0
	for _, x := range c.shares {
		s += x
	}
	return s
}

// keywordImpact returns the top k of terms ts (statistics of keywordTerms, c2 = k1·b/avgdl) over every chunk
// db sees, best first, or ok false when the query should rather run the MaxScore statement.
func (s *Store) keywordImpact(ctx context.Context, db pgx.Tx, ts []keywordTerm, c2 float64, k int) ([]rag.Candidate, bool, error) {
	if len(ts) > impactMaxTerms {
		return nil, false, nil
	}
	a := impactA
	r := min(1, c2/impactC0)
	share := func(w float64, tf, dl int32) float64 {
		// float64() keeps each product rounded on its own, as PostgreSQL computes it (no fused multiply-add).
		return float64(w*float64(tf)) / (float64(tf) + a + float64(c2*float64(dl)))
	}
	n := len(ts)
	depth, read := make([]int, n), make([]int, n)
	frontier := make([]float64, n)
	done := make([]bool, n)
	terms := make([]string, n)
	for i, t := range ts {
		terms[i] = t.term
		frontier[i] = t.bound
	}
	chunks := map[int64]*impactChunk{}
	total := 0
	lower := make([]float64, 0, 1024)
	for round := 0; ; round++ {
		// The terms to read further: every term in the first round, then those whose frontier is at least half
		// the largest (the others move the sum little).
		var want []int32
		var offs, lims []int32
		top := slices.Max(frontier)
		for i := range n {
			if done[i] || (round > 0 && frontier[i] < top/2) {
				continue
			}
			next := impactFirst(k)
			if round > 0 {
				next = 2 * depth[i]
			}
			want, offs, lims = append(want, int32(i)), append(offs, int32(depth[i])), append(lims, int32(next-depth[i]))
			total += next - depth[i]
			depth[i] = next
		}
		if total > impactMaxRead {
			return nil, false, nil
		}
		sel := make([]string, len(want))
		for j, i := range want {
			sel[j] = terms[i]
		}
		rows, err := db.Query(ctx, s.q(fmt.Sprintf(`SELECT u.i, p.chunk_id, p.tf, p.dl
			FROM unnest($1::int[], $2::text[], $3::int[], $4::int[]) AS u(i, term, o, m),
			LATERAL (SELECT p.chunk_id, p.tf, p.dl FROM {S}.postings p WHERE p.term = u.term
				ORDER BY %s DESC, p.chunk_id OFFSET u.o LIMIT u.m) p`, impactOrder())), want, sel, offs, lims)
		if err != nil {
			return nil, false, fmt.Errorf("keyword postings: %w", err)
		}
		var i int32
		var id int64
		var tf, dl int32
		got := make([]int, n)
		last := make([][2]int32, n)
		_, err = pgx.ForEachRow(rows, []any{&i, &id, &tf, &dl}, func() error {
			c := chunks[id]
			if c == nil {
				c = &impactChunk{id: id, shares: make([]float64, n)}
				chunks[id] = c
			}
			if c.seen&(1<<i) == 0 {
				c.shares[i] = share(ts[i].weight, tf, dl)
				c.known += c.shares[i]
				c.seen |= 1 << i
			}
			got[i]++
			last[i] = [2]int32{tf, dl}
			return nil
		})
		if err != nil {
			return nil, false, fmt.Errorf("keyword postings: %w", err)
		}
		for j, i := range want {
			read[i] += got[i]
			switch {
			case got[i] < int(lims[j]):
				done[i], frontier[i] = true, 0
			case got[i] > 0:
				tf, dl := float64(last[i][0]), float64(last[i][1])
				x := (a + dl*impactC0) / tf
				frontier[i] = min(ts[i].bound, ts[i].weight/(1+x*r))
			}
		}
		lower = lower[:0]
		for _, c := range chunks {
			lower = append(lower, c.known)
		}
		theta := kth(lower, k)
		sum := 0.0
		for _, f := range frontier {
			sum += f
		}
		if sum*(1+1e-9) < theta || !slices.Contains(done, false) {
			return s.impactFinish(ctx, db, ts, chunks, done, frontier, theta, k, share)
		}
	}
}

// impactFinish completes the scores of the chunks read that can still reach the top k and returns the best k.
// A term read to its end (done) holds no more postings: a chunk not read for it has no share of it.
func (s *Store) impactFinish(ctx context.Context, db pgx.Tx, ts []keywordTerm, chunks map[int64]*impactChunk, done []bool,
	frontier []float64, theta float64, k int, share func(w float64, tf, dl int32) float64) ([]rag.Candidate, bool, error) {
	var open []*impactChunk
	var exact []rag.Candidate
	full := uint64(1)<<len(ts) - 1
	for i := range done {
		if done[i] {
			for _, c := range chunks {
				c.seen |= 1 << i
			}
		}
	}
	weight := make(map[string]float64, len(ts))
	for _, t := range ts {
		weight[t.term] = t.weight
	}
	index := make(map[string]int, len(ts))
	for i, t := range ts {
		index[t.term] = i
	}
	for _, c := range chunks {
		c.ub = c.known
		for i, f := range frontier {
			if c.seen&(1<<i) == 0 {
				c.ub += f
			}
		}
		switch {
		case c.seen == full:
			exact = append(exact, rag.Candidate{ChunkID: c.id, Score: c.score()})
		case c.ub*(1+1e-9) >= theta:
			open = append(open, c)
		}
	}
	slices.SortFunc(open, func(a, b *impactChunk) int { return cmp.Compare(b.ub, a.ub) })
	best := func() float64 {
		scores := make([]float64, len(exact))
		for i, c := range exact {
			scores[i] = c.Score
		}
		return kth(scores, k)
	}
	for len(open) > 0 && open[0].ub*(1+1e-9) >= best() {
		batch := open[:min(impactBatch, len(open))]
		open = open[len(batch):]
		var ids []int64
		var want []string
		byID := make(map[int64]*impactChunk, len(batch))
		for _, c := range batch {
			byID[c.id] = c
			for i, t := range ts {
				if c.seen&(1<<i) == 0 {
					ids, want = append(ids, c.id), append(want, t.term)
				}
			}
		}
		rows, err := db.Query(ctx, s.q(`SELECT u.id, u.term, p.tf, p.dl FROM unnest($1::bigint[], $2::text[]) AS u(id, term),
			LATERAL (SELECT p.tf, p.dl FROM {S}.postings p WHERE p.term = u.term AND p.chunk_id = u.id OFFSET 0) p`), ids, want)
		if err != nil {
			return nil, false, fmt.Errorf("keyword lookups: %w", err)
		}
		var id int64
		var term string
		var tf, dl int32
		if _, err := pgx.ForEachRow(rows, []any{&id, &term, &tf, &dl}, func() error {
			byID[id].shares[index[term]] = share(weight[term], tf, dl)
			return nil
		}); err != nil {
			return nil, false, fmt.Errorf("keyword lookups: %w", err)
		}
		for _, c := range batch {
			exact = append(exact, rag.Candidate{ChunkID: c.id, Score: c.score()})
		}
	}
	slices.SortFunc(exact, func(a, b rag.Candidate) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ChunkID, b.ChunkID)
	})
	exact = exact[:min(k, len(exact))]
	for i := range exact {
		exact[i].Rank = i + 1
	}
	return exact, true, nil
}

// kth is the k-th largest of xs (0 when there are fewer); it reorders xs.
func kth(xs []float64, k int) float64 {
	if len(xs) < k {
		return 0
	}
	slices.SortFunc(xs, func(a, b float64) int { return cmp.Compare(b, a) })
	return xs[k-1]
}
