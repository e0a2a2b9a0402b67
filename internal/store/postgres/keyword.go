package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

// The keyword query ranks by BM25 over the postings of the query terms, with the exact top k of reading them
// all, but reads most postings of common terms only for chunks that can still reach the top k (MaxScore, after
// Turtle and Flood). It takes two statements:
//
//  1. term_stats_for: each term's df, largest tf and smallest chunk length (migration 0020's term_stats,
//     kept by triggers on postings), and N and the average length from corpus_stats. From them each term
//     gets its weight w = idf·(k1+1) and an upper bound ub = w·maxtf/(maxtf + k1(1-b) + k1·b·mindl/avgdl)
//     of its share of any chunk's score (the share grows with tf and shrinks with dl).
//  2. one statement, so one snapshot:
//     - a first threshold: the chunks holding the rarest terms (read until they hold keywordSeedPostings
//     postings) ranked by those terms' share, the best keywordSeed(k) of them scored exactly; the k-th best
//     exact score, θ, is a lower bound of the k-th best score of the whole query.
//     - the terms sorted by ub, ascending: the longest prefix whose bounds sum below θ are "non-essential":
//     a chunk holding none but them scores below θ and is not in the top k. Only the essential terms'
//     postings are read; a chunk whose share from them plus the non-essential bounds stays below θ is
//     dropped; the others get the non-essential terms' shares by primary-key lookups, and the best k of
//     their exact scores are the answer.
//
// With fewer than k chunks in the first step θ is 0, every term is essential, and the statement reads every
// posting of the query terms, as a plain BM25 query would. Scores are the plain query's (same formula, float8).

// keywordSeedPostings is how many postings of the rarest terms the first threshold reads at least.
const keywordSeedPostings = 256

// keywordSeed is how many of the first step's chunks are scored exactly for the threshold.
func keywordSeed(k int) int { return 2 * k }

// keywordRefine is how many chunks of the essential terms, best by their share, are scored exactly for the
// second, tighter threshold.
func keywordRefine(k int) int { return max(20*k, 200) }

// keywordTerm is a query term with its statistics.
type keywordTerm struct {
	term          string
	df            float64
	maxTF, minDL  int32
	weight, bound float64
}

// KeywordCandidates returns up to q.K chunks of documents visible to p that match q.Filter and contain any
// of q.Terms, by BM25, best first; see above for how.
func (s *Store) KeywordCandidates(ctx context.Context, p rag.Principal, q rag.KeywordQuery) ([]rag.Candidate, error) {
	if q.K <= 0 {
		return nil, nil
	}
	terms, _, _, err := termQuery(p, q)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	var out []rag.Candidate
	var st kwState
	// One snapshot for the statistics and the postings: the bounds read first must hold for the postings the
	// query then reads, or a version committed in between could prune every chunk.
	err = s.inSnapshotTx(ctx, func(db pgx.Tx) error {
		if s.opts.KeywordIndexMin >= 0 {
			// As the connecting role, before the reader's: the copy's state is the whole store's.
			if st, err = s.readKWState(ctx, db); err != nil {
				return err
			}
		}
		if err := s.becomeReader(ctx, db, p); err != nil {
			return err
		}
		ts, c2, err := s.keywordTerms(ctx, db, terms)
		if err != nil || len(ts) == 0 {
			return err
		}
		if x := s.usableKeywordIndex(st); x != nil {
			out, err = s.indexKeyword(ctx, db, x, st, p, q, ts, c2)
			return err
		}
		var a args
		sql, err := keywordSQL(&a, p, q, ts, c2, 0)
		if err != nil {
			return err
		}
		out, err = s.keywordStatement(ctx, db, sql, a)
		return err
	})
	if err == nil {
		s.maybeBuildKeywordIndex(st)
	}
	return out, err
}

// keywordStatement runs the statement of keywordSQL in db.
func (s *Store) keywordStatement(ctx context.Context, db pgx.Tx, sql string, a args) ([]rag.Candidate, error) {
	// Hash aggregation: the planner cannot know how many postings the terms chosen inside the statement
	// have, and would sort them all by chunk to group them. No JIT: compiling costs more than running.
	if _, err := db.Exec(ctx, `SELECT set_config('enable_sort', 'off', true), set_config('jit', 'off', true)`); err != nil {
		return nil, fmt.Errorf("keyword candidates: settings: %w", err)
	}
	rows, err := db.Query(ctx, s.q(sql), a...)
	var out []rag.Candidate
	if err == nil {
		out, err = collectCandidates(rows)
	}
	if err != nil {
		return nil, fmt.Errorf("keyword candidates: %w", err)
	}
	return out, nil
}

// keywordTerms returns the terms of terms that have postings, with their weights and bounds, rarest first,
// and c2 = k1·b/avgdl.
func (s *Store) keywordTerms(ctx context.Context, db querier, terms []string) ([]keywordTerm, float64, error) {
	rows, err := db.Query(ctx, s.q(`SELECT st.n, st.c2, f.term, f.df, f.max_tf, f.min_dl
		FROM (SELECT sum(chunks)::float8 AS n, $2::float8 * sum(chunks)::float8 / GREATEST(sum(terms)::float8, 1) AS c2
			FROM {S}.corpus_stats) st
		JOIN {S}.term_stats_for($1::text[]) f ON true`), terms, bm25K1*bm25B)
	if err != nil {
		return nil, 0, fmt.Errorf("keyword terms: %w", err)
	}
	defer rows.Close()
	var ts []keywordTerm
	var n, c2 float64
	for rows.Next() {
		var t keywordTerm
		if err := rows.Scan(&n, &c2, &t.term, &t.df, &t.maxTF, &t.minDL); err != nil {
			return nil, 0, fmt.Errorf("keyword terms: %w", err)
		}
		t.weight = max(math.Log((n-t.df+0.5)/(t.df+0.5)), 1e-6) * (bm25K1 + 1)
		tf := float64(t.maxTF)
		t.bound = t.weight * tf / (tf + bm25K1*(1-bm25B) + c2*float64(t.minDL))
		ts = append(ts, t)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("keyword terms: %w", err)
	}
	slices.SortFunc(ts, func(a, b keywordTerm) int {
		if a.df != b.df {
			if a.df < b.df {
				return -1
			}
			return 1
		}
		return cmpString(a.term, b.term)
	})
	return ts, c2, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// keywordSQL is the statement of step 2 for terms ts (rarest first), its arguments added to a; when after is
// not 0, over the chunks with IDs above it only (the in-memory index's tail).
func keywordSQL(a *args, p rag.Principal, q rag.KeywordQuery, ts []keywordTerm, c2 float64, after int64) (string, error) {
	all, weights, bounds := make([]string, len(ts)), make([]float64, len(ts)), make([]float64, len(ts))
	var seed, rest []string
	postings := 0.0
	for i, t := range ts {
		all[i], weights[i], bounds[i] = t.term, t.weight, t.bound
		if len(seed) == 0 || postings < keywordSeedPostings {
			seed = append(seed, t.term)
			postings += t.df
		} else {
			rest = append(rest, t.term)
		}
	}
	tp, wp, bp := a.add(all), a.add(weights), a.add(bounds)
	sp, rp := a.add(seed), a.add(rest)
	conds, err := docConditions(a, p, q.Filter)
	if err != nil {
		return "", err
	}
	join := ""
	if len(conds) > 0 {
		join = "JOIN {S}.chunks c ON c.id = p.chunk_id JOIN {S}.documents d ON d.id = c.document_id"
	}
	if after > 0 {
		conds = append(conds, "p.chunk_id > "+a.add(after)+"::bigint")
	}
	// share is a posting's part of its chunk's score; shares(chunk, terms) sums them over some terms by
	// primary-key lookups, one per term.
	share := fmt.Sprintf("t.w * p.tf / (p.tf + %g::float8 + %g::float8 * p.dl)", bm25K1*(1-bm25B), c2)
	shares := func(chunk, terms string) string {
		// OFFSET 0 keeps the lookup a subquery per term, so that it uses the primary key (term, chunk_id)
		// rather than postings_chunk_idx, which would read the chunk's every posting from the heap.
		return fmt.Sprintf(`COALESCE((SELECT sum(%s) FROM t, LATERAL (SELECT p.tf, p.dl FROM {S}.postings p
			WHERE p.term = t.term AND p.chunk_id = %s OFFSET 0) p WHERE t.term = ANY(%s)), 0)`, share, chunk, terms)
	}
	return fmt.Sprintf(`WITH t AS MATERIALIZED (
			SELECT u.term, u.w, u.ub, sum(u.ub) OVER (ORDER BY u.ub, u.term) AS upto
			FROM unnest(%[1]s::text[], %[2]s::float8[], %[3]s::float8[]) AS u(term, w, ub)),
		seed AS MATERIALIZED (
			SELECT p.chunk_id, sum(%[4]s) AS s FROM {S}.postings p JOIN t ON t.term = p.term %[5]s
			WHERE p.term = ANY(%[6]s::text[]) AND %[7]s
			GROUP BY p.chunk_id ORDER BY s DESC, p.chunk_id LIMIT %[8]d),
		th AS MATERIALIZED (
			SELECT COALESCE((SELECT x.score FROM (SELECT seed.s + %[9]s AS score FROM seed) x
				ORDER BY x.score DESC OFFSET %[10]d LIMIT 1), 0) * (1 - 1e-9) AS theta),
		split AS MATERIALIZED (
			SELECT COALESCE(array_agg(t.term) FILTER (WHERE t.upto >= th.theta), '{}') AS essential,
				COALESCE(array_agg(t.term) FILTER (WHERE t.upto < th.theta), '{}') AS other,
				COALESCE(max(t.upto) FILTER (WHERE t.upto < th.theta), 0) AS other_ub, th.theta
			FROM t, th GROUP BY th.theta),
		cand AS MATERIALIZED (
			SELECT p.chunk_id, sum(%[4]s) AS s FROM {S}.postings p JOIN t ON t.term = p.term %[5]s
			WHERE p.term = ANY((SELECT essential FROM split)::text[]) AND %[7]s
			GROUP BY p.chunk_id),
		best AS MATERIALIZED (
			SELECT cand.chunk_id, cand.s + %[11]s AS score FROM cand, split
			WHERE cand.s + split.other_ub >= split.theta ORDER BY cand.s DESC LIMIT %[13]d),
		th2 AS MATERIALIZED (
			SELECT GREATEST(split.theta, COALESCE((SELECT best.score FROM best ORDER BY best.score DESC OFFSET %[10]d LIMIT 1), 0) * (1 - 1e-9)) AS theta
			FROM split)
		SELECT best.chunk_id, best.score FROM best
		UNION ALL
		SELECT cand.chunk_id, cand.s + %[11]s FROM cand, split, th2
		WHERE cand.s + split.other_ub >= th2.theta AND cand.chunk_id NOT IN (SELECT best.chunk_id FROM best)
		ORDER BY 2 DESC, 1 LIMIT %[12]d`,
		tp, wp, bp, share, join, sp, where(conds), keywordSeed(q.K),
		shares("seed.chunk_id", rp+"::text[]"), q.K-1,
		shares("cand.chunk_id", "split.other"), q.K, keywordRefine(q.K)), nil
}
