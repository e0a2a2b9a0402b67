package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"sort"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sealing"
	"github.com/ragd/ragd/internal/textproc"
)

// The document-level keyword index (doc_postings, doc_lengths) holds the analyzer's terms of each
// document's naming fields (textproc.DocumentText). A document is (re)indexed in the transaction that
// commits its version or changes its title or metadata, and documents of a database older than the index
// are indexed when the store opens.

// indexDocument replaces the document-level index entries of the document seq.
func indexDocument(ctx context.Context, tx *sql.Tx, keys *sealing.Keyring, seq int64) error {
	var title, source, meta string
	var lead, leadKey sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT title, source, metadata,
		(SELECT text FROM chunks WHERE doc_seq = d.seq ORDER BY idx LIMIT 1),
		(SELECT key_id FROM chunks WHERE doc_seq = d.seq ORDER BY idx LIMIT 1) FROM documents d WHERE seq = ?`, seq).
		Scan(&title, &source, &meta, &lead, &leadKey)
	if err != nil {
		return err
	}
	if lead.String, err = keys.OpenText(lead.String, leadKey.String); err != nil {
		return err
	}
	md, err := unmarshalMap(meta)
	if err != nil {
		return err
	}
	terms := textproc.IndexTerms(textproc.DocumentText(title, source, md, lead.String))
	tf := map[string]int{}
	for _, t := range terms {
		tf[t]++
	}
	rows := make([][]any, 0, len(tf))
	for t, n := range tf {
		rows = append(rows, []any{t, n})
	}
	list, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM doc_postings WHERE doc_seq = ?`, seq); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO doc_postings (term, doc_seq, tf)
		SELECT value ->> 0, ?, value ->> 1 FROM json_each(?)`, seq, string(list)); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO doc_lengths (doc_seq, dl) VALUES (?, ?)
		ON CONFLICT (doc_seq) DO UPDATE SET dl = excluded.dl`, seq, len(terms))
	return err
}

// indexMissingDocuments indexes the documents with a committed version that the document-level index lacks
// (those of a database created before it), a batch per transaction.
func (s *Store) indexMissingDocuments(ctx context.Context) error {
	for {
		var n int
		err := s.write(ctx, func(tx *sql.Tx) error {
			seqs, err := querySeqs(ctx, tx, `SELECT seq FROM documents d WHERE version > 0 AND deleted_at IS NULL
				AND NOT EXISTS (SELECT 1 FROM doc_lengths l WHERE l.doc_seq = d.seq) LIMIT 200`)
			if err != nil {
				return err
			}
			n = len(seqs)
			for _, seq := range seqs {
				if err := indexDocument(ctx, tx, s.opts.Keys, seq); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return dbError(err, "index documents")
		}
		if n == 0 {
			return nil
		}
	}
}

// querySeqs returns the document sequence numbers query selects.
func querySeqs(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var seqs []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	return seqs, rows.Err()
}

// docTotalsSQL reads the document count and mean length of the document-level index from the totals its
// triggers keep (migration 0027): the same figures as count(*) and avg(dl) over doc_lengths.
const docTotalsSQL = `SELECT r.value, CASE WHEN r.value > 0 THEN CAST(l.value AS REAL) / r.value ELSE 0 END
	FROM store_meta r, store_meta l WHERE r.key = 'doc_rows' AND l.key = 'doc_length_sum'`

// docPostingsSQL reads the document-level postings of the terms of a JSON array, with their documents'
// lengths.
const docPostingsSQL = `SELECT p.term, p.doc_seq, p.tf, l.dl FROM doc_postings p
	JOIN doc_lengths l ON l.doc_seq = p.doc_seq WHERE p.term IN (SELECT value FROM json_each(?))`

// docIDsSQL reads the IDs and chunk counts of the documents whose seqs are in a JSON array.
const docIDsSQL = `SELECT seq, id, chunk_count FROM documents WHERE seq IN (SELECT value FROM json_each(?))`

// DocumentCandidates returns up to q.K visible documents matching q.Filter whose naming fields contain any
// of q.Terms, by BM25 over the document-level index (k1 1.2, b 0.75, the IDF with FTS5's floor), best first.
func (s *Store) DocumentCandidates(ctx context.Context, p rag.Principal, q rag.KeywordQuery) ([]rag.DocumentCandidate, error) {
	var w where
	w.visible(p)
	if err := w.filter(q.Filter); err != nil {
		return nil, err
	}
	terms := distinctTerms(q.Terms)
	out := []rag.DocumentCandidate{}
	if len(terms) == 0 || q.K <= 0 {
		return out, nil
	}
	termList, err := json.Marshal(terms)
	if err != nil {
		return nil, err
	}
	var postings []docPosting
	var n, avgdl float64
	err = s.read(ctx, func(tx *sql.Tx) error {
		// The statements are prepared once per connection (a search runs them all: preparing them took
		// ~6 % of the server's CPU under the HTTP load test).
		prep := func(query string) (*sql.Stmt, error) { return s.rstmts.tx(ctx, tx, query) }
		docs, err := resolveDocs(ctx, tx, &w)
		if err != nil || docs.none {
			return err
		}
		allowed := map[int64]bool{}
		if !docs.all {
			var seqs []int64
			if err := json.Unmarshal([]byte(docs.seqs), &seqs); err != nil {
				return err
			}
			for _, s := range seqs {
				allowed[s] = true
			}
		}
		if postings, n, avgdl, err = s.docPostings(ctx, prep, terms, string(termList)); err != nil {
			return err
		}
		// The document frequency counts every document, visible or not, as the chunk index does.
		kept := make([]docPosting, 0, len(postings))
		for _, dp := range postings {
			if docs.all || allowed[dp.doc] {
				kept = append(kept, dp)
			}
		}
		scored := scoreDocPostings(postings, kept, n, avgdl)
		if len(scored) == 0 {
			return nil
		}
		// Only the documents that can be among the best q.K need their IDs: those scoring at least the
		// q.K-th best score (ties at it are ordered by document ID below). A common word matches hundreds.
		sort.Slice(scored, func(i, j int) bool { return scored[i].score > scored[j].score })
		if len(scored) > q.K {
			cut := scored[q.K-1].score
			end := q.K
			for end < len(scored) && scored[end].score >= cut {
				end++
			}
			scored = scored[:end]
		}
		seqs := make([]int64, len(scored))
		for i, c := range scored {
			seqs[i] = c.doc
		}
		list, err := json.Marshal(seqs)
		if err != nil {
			return err
		}
		idSt, err := prep(docIDsSQL)
		if err != nil {
			return err
		}
		idRows, err := idSt.QueryContext(ctx, string(list))
		if err != nil {
			return err
		}
		defer idRows.Close()
		ids := map[int64]rag.DocumentCandidate{}
		for idRows.Next() {
			var seq int64
			var c rag.DocumentCandidate
			if err := idRows.Scan(&seq, &c.DocumentID, &c.Chunks); err != nil {
				return err
			}
			ids[seq] = c
		}
		if err := idRows.Err(); err != nil {
			return err
		}
		for _, c := range scored {
			dc := ids[c.doc]
			dc.Score = c.score
			out = append(out, dc)
		}
		// Ties in document ID order, as in the PostgreSQL store.
		sort.SliceStable(out, func(i, j int) bool {
			if out[i].Score != out[j].Score {
				return out[i].Score > out[j].Score
			}
			return out[i].DocumentID < out[j].DocumentID
		})
		if len(out) > q.K {
			out = out[:q.K]
		}
		for i := range out {
			out[i].Rank = i + 1
		}
		return nil
	})
	if err != nil {
		return nil, dbError(err, "document candidates")
	}
	return out, nil
}

// docPosting is one row of the document-level index read for a query.
type docPosting struct {
	term   string
	doc    int64
	tf, dl float64
}

type docScore struct {
	doc   int64
	score float64
}

// scoreDocPostings ranks the documents of kept by BM25 with document frequencies from all (every matching
// document), over n documents of average length avgdl, unordered.
func scoreDocPostings(all, kept []docPosting, n, avgdl float64) []docScore {
	df := map[string]int64{}
	for _, dp := range all {
		df[dp.term]++
	}
	avgdl = max(avgdl, 1)
	sum := map[int64]float64{}
	for _, dp := range kept {
		w := idf(int64(n), df[dp.term]) * (bm25K1 + 1)
		sum[dp.doc] += w * dp.tf / (dp.tf + bm25K1*(1-bm25B+bm25B*dp.dl/avgdl))
	}
	out := make([]docScore, 0, len(sum))
	for d, sc := range sum {
		out = append(out, docScore{d, sc})
	}
	return out
}
