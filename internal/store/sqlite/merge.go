package sqlite

import (
	"context"
	"database/sql"
	"sync/atomic"
	"time"
)

// The keyword index (FTS5) is a set of segments: each write transaction adds one, and FTS5 merges them
// level by level as writes go on, which leaves O(log n) of them: 19 on a 15,000-chunk store ingested one
// document at a time. A query looks each of its terms up in every segment, and on that store a keyword
// search costs about 1.5 times what it costs on one segment. So once writes pause for
// Options.KeywordMergeDelay, the Store merges every segment into one, mergeStepPages pages per write
// transaction so that no writer waits long for the lock, and it stops as soon as writes resume (merging
// during a long ingestion would rewrite the growing index again and again). It merges only from
// mergeMinSegments segments on, so that a trickle of small writes does not rewrite a large index each
// time. Writes of other processes are noticed through the keyword statistics, at the next search.
const (
	mergeMinSegments = 8
	mergeStepPages   = 128
)

// merger runs the background merges of one Store.
type merger struct {
	kick   chan struct{} // a write happened; buffered, so kicking never blocks
	cancel context.CancelFunc
	done   chan struct{}
	merged atomic.Int64 // merge passes that merged (to the end, or some before yielding to a write), for tests
}

func (s *Store) startMerger() {
	m := &s.merger
	m.kick, m.done = make(chan struct{}, 1), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	if s.opts.KeywordMergeDelay < 0 {
		close(m.done)
		return
	}
	go s.mergeLoop(ctx)
	s.kickMerge() // a Store opened on a fragmented index merges it too
}

func (s *Store) stopMerger() {
	s.merger.cancel()
	<-s.merger.done
}

// kickMerge tells the merger that the keyword index changed.
func (s *Store) kickMerge() {
	select {
	case s.merger.kick <- struct{}{}:
	default:
	}
}

func (s *Store) mergeLoop(ctx context.Context) {
	defer close(s.merger.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.merger.kick:
			timer.Reset(s.opts.KeywordMergeDelay)
		case <-timer.C:
			// A failed merge is retried after the next write; searches work the same meanwhile.
			s.mergeKeywordIndex(ctx, mergeMinSegments, true)
		}
	}
}

// MergeKeywordIndex merges the segments of the keyword index into one now, as the Store does by itself
// once writes pause (e.g. after a bulk ingestion, before measuring search).
func (s *Store) MergeKeywordIndex(ctx context.Context) error {
	return dbError(s.mergeKeywordIndex(ctx, 2, false), "merge keyword index")
}

// keywordSegments counts the segments of the keyword index (each has at least one row in the index of
// its leaf pages).
func (s *Store) keywordSegments(ctx context.Context) (int, error) {
	var n int
	err := s.q.QueryRowContext(ctx, `SELECT count(DISTINCT segid) FROM chunks_fts_idx`).Scan(&n)
	return n, err
}

// mergeKeywordIndex merges every segment into one when there are at least minSegments. With
// yield, it returns as soon as a write is noticed (kicking the merger again), leaving the rest for the
// next pause.
func (s *Store) mergeKeywordIndex(ctx context.Context, minSegments int, yield bool) error {
	n, err := s.keywordSegments(ctx)
	if err != nil || n < minSegments {
		return err
	}
	// A negative page count puts every segment on one level and starts merging them; a positive one goes
	// on with the merge started. total_changes() moves by less than 2 once there is nothing left to merge.
	pages := -mergeStepPages
	for {
		if yield {
			select {
			case <-s.merger.kick:
				if pages == mergeStepPages {
					// It merged some before a write came; what is left may now be below the threshold,
					// so no later pass need finish it.
					s.merger.merged.Add(1)
				}
				s.kickMerge()
				return nil
			default:
			}
		}
		var changes int64
		err := s.write(ctx, func(tx *sql.Tx) error {
			var before, after int64
			if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('merge', ?)`, pages); err != nil {
				return err
			}
			if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
				return err
			}
			changes = after - before
			return nil
		})
		if err != nil {
			return err
		}
		if changes < 2 {
			s.merger.merged.Add(1)
			return nil
		}
		pages = mergeStepPages
	}
}
