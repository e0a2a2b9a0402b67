package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgvector/pgvector-go"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sealing"
	"github.com/ragd/ragd/internal/textproc"
)

const chunkColumns = `c.id, c.document_id, c.version, c.idx, c.kind, c.text, c.page_start, c.page_end, c.section,
	c.start_offset, c.end_offset, c.key_id, c.ocr_confidence, c.page_breaks`

// scanChunk reads the chunkColumns of a row (and extra columns after them) and opens its sealed text.
func scanChunk(keys *sealing.Keyring, row pgx.Row, extra ...any) (*rag.Chunk, error) {
	var c rag.Chunk
	var kind, keyID string
	var ocr *float32
	var breaks string
	dest := append([]any{&c.ID, &c.DocumentID, &c.Version, &c.Index, &kind, &c.Text, &c.PageStart, &c.PageEnd,
		&c.Section, &c.StartOffset, &c.EndOffset, &keyID, &ocr, &breaks}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	var err error
	if c.PageBreaks, err = rag.DecodePageBreaks(breaks); err != nil {
		return nil, fmt.Errorf("chunk %d: %w", c.ID, err)
	}
	if ocr != nil {
		// real holds 24 bits: the confidence is kept to two decimals, as the extractor gives it.
		c.OCR, c.OCRConfidence = true, math.Round(float64(*ocr)*100)/100
	}
	c.Kind = rag.ChunkKind(kind)
	if c.Text, err = keys.OpenText(c.Text, keyID); err != nil {
		return nil, fmt.Errorf("chunk %d: %w", c.ID, err)
	}
	return &c, nil
}

// Batch sizes of the multi-row INSERT path, so that one statement's parameters stay a few megabytes.
const (
	insertPostingsBatch = 20000
	insertVectorsBatch  = 500
)

// CommitVersion makes c the document's current version in one transaction: it records the version, replaces
// the chunks with their postings and vectors, updates the BM25 statistics and marks the document ready.
func (s *Store) CommitVersion(ctx context.Context, c *rag.VersionCommit) (int, error) {
	if c.DocumentID == "" {
		return 0, rag.Errorf(rag.CodeInvalid, "commit needs a document ID")
	}
	if err := checkSpace(c.Space); err != nil {
		return 0, err
	}
	for i := range c.Chunks {
		if len(c.Chunks[i].Vector) != c.Space.Dim {
			return 0, rag.Errorf(rag.CodeInvalid, "chunk %d has a vector of %d dimensions, space %s has %d",
				c.Chunks[i].Index, len(c.Chunks[i].Vector), c.Space.ID(), c.Space.Dim)
		}
	}
	sp, err := s.space(ctx, c.Space, true)
	if err != nil {
		return 0, err
	}
	// The analyzer runs before the transaction so the row locks are held only for the writes.
	termCounts := make([]int32, len(c.Chunks))
	var postings []posting
	var totalTerms int64
	for i := range c.Chunks {
		terms := textproc.IndexTerms(textproc.ContextText(c.Title, c.Chunks[i].Section, c.Chunks[i].Text))
		termCounts[i] = int32(len(terms))
		totalTerms += int64(len(terms))
		postings = append(postings, chunkPostings(i, terms)...)
	}
	for i := range postings {
		postings[i].dl = termCounts[postings[i].chunk]
	}
	var version int
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var metadata map[string]any
		var current string
		err := tx.QueryRow(ctx, s.q(`SELECT version, metadata, content_hash FROM {S}.documents WHERE id = $1 AND deleted_at IS NULL
			FOR UPDATE`), c.DocumentID).Scan(&version, &metadata, &current)
		if err != nil {
			return fmt.Errorf("commit version: %w", err)
		}
		if version == 0 || current != c.ContentHash {
			version++ // else the current content is indexed again (a restored document): same version
		}
		if err := s.dropChunks(ctx, tx, c.DocumentID); err != nil {
			return err
		}
		ids, err := s.chunkIDs(ctx, tx, len(c.Chunks))
		if err != nil {
			return err
		}
		if err := s.insertChunks(ctx, tx, c.DocumentID, version, ids, c.Chunks, termCounts); err != nil {
			return err
		}
		for i := range postings {
			postings[i].chunkID = ids[postings[i].chunk]
		}
		if err := s.insertPostings(ctx, tx, postings); err != nil {
			return err
		}
		vecs := make([]pgvector.Vector, len(c.Chunks))
		for i := range c.Chunks {
			vecs[i] = pgvector.NewVector(c.Chunks[i].Vector)
		}
		if err := s.insertVectors(ctx, tx, sp, ids, vecs); err != nil {
			return err
		}
		if len(ids) > 0 {
			if _, err := tx.Exec(ctx, s.q(`UPDATE {S}.corpus_stats SET chunks = chunks + $2, terms = terms + $3 WHERE slot = $1`),
				statsSlot(c.DocumentID), len(ids), totalTerms); err != nil {
				return fmt.Errorf("update corpus stats: %w", err)
			}
		}
		now := s.now()
		textHash := ""
		if c.Text != "" {
			sum := sha256.Sum256([]byte(c.Text))
			textHash = hex.EncodeToString(sum[:])
			if err := s.insertBlob(ctx, tx, textHash, []byte(c.Text)); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, s.q(`INSERT INTO {S}.document_versions (document_id, version, content_hash, title, source,
			media_type, size, chunk_count, metadata, created_at, text_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (document_id, version) DO UPDATE SET chunk_count = excluded.chunk_count,
			text_hash = CASE WHEN excluded.text_hash = '' THEN {S}.document_versions.text_hash ELSE excluded.text_hash END`),
			c.DocumentID, version, c.ContentHash, c.Title, c.Source, c.MediaType, c.Size, len(ids), metadata, now, textHash); err != nil {
			return fmt.Errorf("record version: %w", err)
		}
		if _, err := tx.Exec(ctx, s.q(`UPDATE {S}.documents SET version = $2, content_hash = $3,
			title = CASE WHEN $4 = '' THEN title ELSE $4 END, source = CASE WHEN $5 = '' THEN source ELSE $5 END,
			media_type = CASE WHEN $6 = '' THEN media_type ELSE $6 END, size = $7, status = 'ready', stage = 'done',
			progress = 1, error_code = '', error = $10,
			pending_hash = CASE WHEN pending_hash = $3 THEN '' ELSE pending_hash END, chunk_count = $8, updated_at = $9
			WHERE id = $1`),
			c.DocumentID, version, c.ContentHash, c.Title, c.Source, c.MediaType, c.Size, len(ids), now, c.Warning); err != nil {
			return fmt.Errorf("mark document ready: %w", err)
		}
		return s.indexDocument(ctx, tx, c.DocumentID)
	})
	if err != nil {
		return 0, err
	}
	return version, nil
}

// posting is one row of the inverted index: a term's frequency in a chunk (chunk is the index in the commit
// until the chunk's ID is known).
type posting struct {
	term    string
	chunk   int
	chunkID int64
	tf, dl  int32
}

func chunkPostings(chunk int, terms []string) []posting {
	tf := map[string]int32{}
	for _, t := range terms {
		tf[t]++
	}
	out := make([]posting, 0, len(tf))
	for t, n := range tf {
		out = append(out, posting{term: t, chunk: chunk, tf: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].term < out[j].term })
	return out
}

// chunkIDs reserves n chunk IDs, ascending, so that postings and vectors can refer to chunks inserted in bulk.
// Callers hold a lock on chunks already (CommitVersion's dropChunks deletes from it first): the in-memory
// keyword index relies on it, since its build's lock then waits for every transaction holding reserved IDs
// (kwindex.go).
func (s *Store) chunkIDs(ctx context.Context, tx pgx.Tx, n int) ([]int64, error) {
	if n == 0 {
		return nil, nil
	}
	table := pgx.Identifier{s.opts.Schema, "chunks"}.Sanitize()
	rows, _ := tx.Query(ctx, `SELECT nextval(pg_get_serial_sequence($1, 'id')) FROM generate_series(1, $2)`, table, n)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("reserve chunk ids: %w", err)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

func (s *Store) insertChunks(ctx context.Context, tx pgx.Tx, documentID string, version int, ids []int64, chunks []rag.Chunk, termCounts []int32) error {
	if len(ids) == 0 {
		return nil
	}
	if s.bulk == BulkCopy {
		rows := make([][]any, len(chunks))
		for i := range chunks {
			ch := &chunks[i]
			text, keyID := s.opts.Keys.SealText(ch.Text)
			rows[i] = []any{ids[i], documentID, version, ch.Index, kindOf(ch.Kind), text, ch.PageStart, ch.PageEnd,
				ch.Section, ch.StartOffset, ch.EndOffset, termCounts[i], keyID, ocrConfidence(ch), rag.EncodePageBreaks(ch.PageBreaks)}
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{s.opts.Schema, "chunks"}, []string{"id", "document_id", "version", "idx",
			"kind", "text", "page_start", "page_end", "section", "start_offset", "end_offset", "term_count", "key_id",
			"ocr_confidence", "page_breaks"}, pgx.CopyFromRows(rows))
		if err != nil {
			return fmt.Errorf("copy chunks: %w", err)
		}
		return nil
	}
	n := len(chunks)
	idx, ps, pe, so, eo := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	kind, text, section, breaks := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	ocr := make([]*float32, n)
	for i := range chunks {
		ch := &chunks[i]
		if ch.OCR {
			v := float32(ch.OCRConfidence)
			ocr[i] = &v
		}
		idx[i], ps[i], pe[i], so[i], eo[i] = int32(ch.Index), int32(ch.PageStart), int32(ch.PageEnd), int32(ch.StartOffset), int32(ch.EndOffset)
		kind[i], section[i], breaks[i] = kindOf(ch.Kind), ch.Section, rag.EncodePageBreaks(ch.PageBreaks)
		text[i], _ = s.opts.Keys.SealText(ch.Text)
	}
	_, err := tx.Exec(ctx, s.q(`INSERT INTO {S}.chunks (id, document_id, version, idx, kind, text, page_start, page_end,
		section, start_offset, end_offset, term_count, key_id, ocr_confidence, page_breaks)
		SELECT u.id, $2, $3, u.idx, u.kind, u.text, u.ps, u.pe, u.section, u.so, u.eo, u.tc, $13, u.ocr, u.pb
		FROM unnest($1::bigint[], $4::int[], $5::text[], $6::text[], $7::int[], $8::int[], $9::text[], $10::int[], $11::int[], $12::int[], $14::real[], $15::text[])
		AS u(id, idx, kind, text, ps, pe, section, so, eo, tc, ocr, pb)`),
		ids, documentID, version, idx, kind, text, ps, pe, section, so, eo, termCounts, s.opts.Keys.ID(), ocr, breaks)
	if err != nil {
		return fmt.Errorf("insert chunks: %w", err)
	}
	return nil
}

// ocrConfidence is the ocr_confidence column of a chunk: NULL for text from a text layer.
func ocrConfidence(c *rag.Chunk) any {
	if !c.OCR {
		return nil
	}
	return float32(c.OCRConfidence)
}

func kindOf(k rag.ChunkKind) string {
	if k == "" {
		return string(rag.KindText)
	}
	return string(k)
}

func (s *Store) insertPostings(ctx context.Context, tx pgx.Tx, ps []posting) error {
	if len(ps) == 0 {
		return nil
	}
	if s.bulk == BulkCopy {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{s.opts.Schema, "postings"}, []string{"term", "chunk_id", "tf", "dl"},
			pgx.CopyFromSlice(len(ps), func(i int) ([]any, error) { return []any{ps[i].term, ps[i].chunkID, ps[i].tf, ps[i].dl}, nil }))
		if err != nil {
			return fmt.Errorf("copy postings: %w", err)
		}
		return nil
	}
	for start := 0; start < len(ps); start += insertPostingsBatch {
		batch := ps[start:min(start+insertPostingsBatch, len(ps))]
		terms, ids, tfs, dls := make([]string, len(batch)), make([]int64, len(batch)), make([]int32, len(batch)), make([]int32, len(batch))
		for i, p := range batch {
			terms[i], ids[i], tfs[i], dls[i] = p.term, p.chunkID, p.tf, p.dl
		}
		if _, err := tx.Exec(ctx, s.q(`INSERT INTO {S}.postings (term, chunk_id, tf, dl)
			SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[], $4::int[])`), terms, ids, tfs, dls); err != nil {
			return fmt.Errorf("insert postings: %w", err)
		}
	}
	return nil
}

func (s *Store) insertVectors(ctx context.Context, tx pgx.Tx, sp *space, ids []int64, vecs []pgvector.Vector) error {
	if len(ids) == 0 {
		return nil
	}
	if s.bulk == BulkCopy {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{s.opts.Schema, fmt.Sprintf("vectors_%d", sp.id)}, []string{"chunk_id", "embedding"},
			pgx.CopyFromSlice(len(ids), func(i int) ([]any, error) { return []any{ids[i], vecs[i]}, nil }))
		if err != nil {
			return fmt.Errorf("copy vectors: %w", err)
		}
		return nil
	}
	for start := 0; start < len(ids); start += insertVectorsBatch {
		end := min(start+insertVectorsBatch, len(ids))
		if _, err := tx.Exec(ctx, s.q(fmt.Sprintf(`INSERT INTO %s (chunk_id, embedding)
			SELECT * FROM unnest($1::bigint[], $2::{V}.vector[])`, sp.table)), ids[start:end], vecs[start:end]); err != nil {
			return fmt.Errorf("insert vectors: %w", err)
		}
	}
	return nil
}

// ListChunks returns the current chunks of a document visible to p, in order. ErrNotFound.
func (s *Store) ListChunks(ctx context.Context, p rag.Principal, documentID string) ([]*rag.Chunk, error) {
	if _, err := s.GetDocument(ctx, p, documentID); err != nil {
		return nil, err
	}
	var out []*rag.Chunk
	err := s.read(ctx, p, func(db querier) error {
		rows, err := db.Query(ctx, s.q(`SELECT `+chunkColumns+` FROM {S}.chunks c WHERE c.document_id = $1 ORDER BY c.idx, c.id`), documentID)
		if err == nil {
			out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.Chunk, error) { return scanChunk(s.opts.Keys, r) })
		}
		if err != nil {
			return fmt.Errorf("list chunks: %w", err)
		}
		return nil
	})
	return out, err
}

// ListVersions returns the version records of a document visible to p, newest first. ErrNotFound.
func (s *Store) ListVersions(ctx context.Context, p rag.Principal, documentID string) ([]*rag.DocumentVersion, error) {
	if _, err := s.GetDocument(ctx, p, documentID); err != nil {
		return nil, err
	}
	var out []*rag.DocumentVersion
	err := s.read(ctx, p, func(db querier) error {
		rows, err := db.Query(ctx, s.q(`SELECT document_id, version, content_hash, title, source, media_type, size,
			chunk_count, metadata, created_at, text_hash FROM {S}.document_versions WHERE document_id = $1 ORDER BY version DESC`), documentID)
		if err == nil {
			out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.DocumentVersion, error) {
				var v rag.DocumentVersion
				err := r.Scan(&v.DocumentID, &v.Version, &v.ContentHash, &v.Title, &v.Source, &v.MediaType, &v.Size,
					&v.ChunkCount, &v.Metadata, &v.CreatedAt, &v.TextHash)
				v.CreatedAt = v.CreatedAt.UTC()
				return &v, err
			})
		}
		if err != nil {
			return fmt.Errorf("list versions: %w", err)
		}
		return nil
	})
	return out, err
}

// PutBlob stores data under its sha256 hex hash; storing a hash again changes nothing.
func (s *Store) PutBlob(ctx context.Context, hash string, data []byte) error {
	if sum := sha256.Sum256(data); hash != hex.EncodeToString(sum[:]) {
		return rag.Errorf(rag.CodeInvalid, "blob hash %q is not the sha256 of its bytes", hash)
	}
	if data == nil {
		data = []byte{}
	}
	if err := s.insertBlob(ctx, s.pool, hash, data); err != nil {
		return interpretError(err)
	}
	return nil
}

// insertBlob stores data under hash (through the pool or a transaction) unless a blob of that hash exists.
func (s *Store) insertBlob(ctx context.Context, db interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}, hash string, data []byte) error {
	sealed, keyID := s.opts.Keys.Seal(data)
	if _, err := db.Exec(ctx, s.q(`INSERT INTO {S}.blobs (hash, data, key_id) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING`),
		hash, sealed, keyID); err != nil {
		return fmt.Errorf("put blob: %w", err)
	}
	return nil
}

// GetBlob returns the bytes stored under hash. ErrNotFound.
func (s *Store) GetBlob(ctx context.Context, hash string) ([]byte, error) {
	return s.blob(ctx, rag.LocalPrincipal, `SELECT data, key_id FROM {S}.blobs WHERE hash = $1`, hash, args{hash})
}

// DocumentBlob implements rag.Store; a non-admin's read runs under row-level security when it is on.
func (s *Store) DocumentBlob(ctx context.Context, p rag.Principal, documentID, hash string) ([]byte, error) {
	a := args{hash, documentID}
	conds, err := docConditions(&a, p, rag.Filter{})
	if err != nil {
		return nil, err
	}
	conds = append(conds, "d.id = $2", live, `(d.content_hash = $1 OR EXISTS (SELECT 1 FROM {S}.document_versions v
		WHERE v.document_id = d.id AND (v.content_hash = $1 OR (v.text_hash <> '' AND v.text_hash = $1))))`)
	return s.blob(ctx, p, `SELECT data, key_id FROM {S}.blobs WHERE hash = $1 AND EXISTS (SELECT 1 FROM {S}.documents d WHERE `+
		where(conds)+`)`, hash, a)
}

// blob reads the blob hash with query (its data and key_id) as p's read, and opens it. ErrNotFound.
func (s *Store) blob(ctx context.Context, p rag.Principal, query, hash string, a args) ([]byte, error) {
	var data []byte
	var keyID string
	err := s.read(ctx, p, func(db querier) error {
		return db.QueryRow(ctx, s.q(query), a...).Scan(&data, &keyID)
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("get blob %s: %w", hash, err))
	}
	data, err = s.opts.Keys.Open(data, keyID)
	if err != nil {
		return nil, rag.WrapError(rag.CodeDBError, err, "blob %s", hash)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// DocumentHistory returns the last limit changes of state of a visible document, oldest first (recorded by
// the trigger of migration 0013). ErrNotFound.
func (s *Store) DocumentHistory(ctx context.Context, p rag.Principal, documentID string, limit int) ([]*rag.DocumentEvent, error) {
	if _, err := s.GetDocument(ctx, p, documentID); err != nil {
		return nil, err
	}
	limit = min(max(limit, 1), rag.MaxHistory)
	rows, err := s.pool.Query(ctx, s.q(`SELECT at, status, stage, version, error_code, error FROM (
		SELECT id, at, status, stage, version, error_code, error FROM {S}.document_events WHERE document_id = $1
		ORDER BY id DESC LIMIT $2) e ORDER BY id`), documentID, limit)
	if err != nil {
		return nil, interpretError(fmt.Errorf("document history: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.DocumentEvent, error) {
		var e rag.DocumentEvent
		err := r.Scan(&e.At, &e.Status, &e.Stage, &e.Version, &e.ErrorCode, &e.Error)
		e.At = e.At.UTC()
		return &e, err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("document history: %w", err))
	}
	return out, nil
}
