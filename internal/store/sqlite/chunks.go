package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sealing"
	"github.com/ragd/ragd/internal/textproc"
)

const chunkCols = `c.id, d.id, c.version, c.idx, c.kind, c.text, c.page_start, c.page_end, c.section, c.start_offset, c.end_offset,
	c.key_id, c.ocr_confidence, c.page_breaks`

// scanChunk reads the chunkCols of a row (and extra columns after them) and opens its sealed text.
func scanChunk(keys *sealing.Keyring, row interface{ Scan(...any) error }, extra ...any) (*rag.Chunk, error) {
	var c rag.Chunk
	var keyID string
	var ocr sql.NullFloat64
	var breaks string
	dest := append([]any{&c.ID, &c.DocumentID, &c.Version, &c.Index, &c.Kind, &c.Text, &c.PageStart, &c.PageEnd, &c.Section,
		&c.StartOffset, &c.EndOffset, &keyID, &ocr, &breaks}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	c.OCR, c.OCRConfidence = ocr.Valid, ocr.Float64
	var err error
	if c.PageBreaks, err = rag.DecodePageBreaks(breaks); err != nil {
		return nil, fmt.Errorf("chunk %d: %w", c.ID, err)
	}
	if c.Text, err = keys.OpenText(c.Text, keyID); err != nil {
		return nil, fmt.Errorf("chunk %d: %w", c.ID, err)
	}
	return &c, nil
}

// ocrConfidence is the ocr_confidence column of a chunk: NULL for text from a text layer.
func ocrConfidence(c *rag.Chunk) any {
	if !c.OCR {
		return nil
	}
	return c.OCRConfidence
}

// encodeVector stores a vector as little-endian float32.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector appends the vector in b to dst.
func decodeVector(dst []float32, b []byte) []float32 {
	for i := 0; i+4 <= len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}

func checkSpace(sp rag.Space) error {
	if sp.Dim <= 0 || sp.Provider == "" {
		return rag.Errorf(rag.CodeInvalid, "embedding space %q is not valid", sp.ID())
	}
	return nil
}

// ensureSpace returns the row id of sp, creating the row.
func ensureSpace(ctx context.Context, tx *sql.Tx, sp rag.Space) (int64, error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO spaces (key, provider, model, dim) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO NOTHING`, sp.ID(), sp.Provider, sp.Model, sp.Dim); err != nil {
		return 0, err
	}
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM spaces WHERE key = ?`, sp.ID()).Scan(&id)
	return id, err
}

// spaceIDOf returns the row id of sp, and false when the store has no such space.
func spaceIDOf(ctx context.Context, tx *sql.Tx, sp rag.Space) (int64, bool, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM spaces WHERE key = ?`, sp.ID()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// The statements CommitVersions runs for every document, prepared once on the writer (writerStatements).
const (
	deleteChunksSQL = `DELETE FROM chunks WHERE doc_seq = ?`
	insertChunkSQL  = `INSERT INTO chunks (doc_seq, version, idx, kind, text, page_start, page_end,
		section, start_offset, end_offset, key_id, ocr_confidence, page_breaks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertVectorSQL    = `INSERT INTO chunk_vectors (space_id, chunk_id, vec) VALUES (?, ?, ?)`
	updateCommittedSQL = `UPDATE documents SET
		version = ?, content_hash = ?,
		title = CASE WHEN ?3 = '' THEN title ELSE ?3 END, title_lower = CASE WHEN ?3 = '' THEN title_lower ELSE ?4 END,
		source = CASE WHEN ?5 = '' THEN source ELSE ?5 END, media_type = CASE WHEN ?6 = '' THEN media_type ELSE ?6 END,
		size = ?7, status = ?8, stage = ?9, progress = 1, error_code = '', error = ?13,
		pending_hash = CASE WHEN pending_hash = ?2 THEN '' ELSE pending_hash END,
		chunk_count = ?10, updated_at = ?11
		WHERE seq = ?12`
	// WHERE true: SQLite needs it to tell the upsert's ON from a join's.
	insertVersionSQL = `INSERT INTO document_versions (doc_seq, version, content_hash, title, source,
		media_type, size, chunk_count, metadata, created_at, text_hash)
		SELECT seq, version, content_hash, title, source, media_type, size, chunk_count, metadata, ?, ? FROM documents WHERE seq = ?
		AND true ON CONFLICT (doc_seq, version) DO UPDATE SET chunk_count = excluded.chunk_count,
		text_hash = CASE WHEN excluded.text_hash = '' THEN text_hash ELSE excluded.text_hash END`
)

// writerStatements are prepared on the writer when the store opens: a statement cannot be prepared on it
// inside a transaction, which holds its only connection.
var writerStatements = []string{deleteChunksSQL, insertChunkSQL, insertVectorSQL, updateCommittedSQL, insertVersionSQL}

// CommitVersion makes c the document's current version in one transaction (see rag.Store). Everything
// that can be computed beforehand (validation, analyzer terms, vector encoding) is, so the write lock is
// held only for the inserts.
func (s *Store) CommitVersion(ctx context.Context, c *rag.VersionCommit) (int, error) {
	versions, _, err := s.CommitVersions(ctx, []*rag.VersionCommit{c})
	if err != nil {
		return 0, err
	}
	return versions[0], nil
}

// CommitVersions commits several documents' versions, each as CommitVersion does, in one transaction: all
// or none. It returns each document's version and the IDs of its chunks (in the order of its Chunks). The
// keyword index gets the chunks of every document in one statement, so one segment, which a bulk load
// (`ragd bench search`) needs: a transaction and a keyword index segment per document of 10 chunks were
// most of the cost of loading 1,000,000 chunks. A document may appear once in cs (CodeInvalid otherwise).
func (s *Store) CommitVersions(ctx context.Context, cs []*rag.VersionCommit) ([]int, [][]int64, error) {
	type prepared struct {
		terms    []string
		vecs     [][]byte
		textHash string
	}
	pre := make([]prepared, len(cs))
	seen := make(map[string]bool, len(cs))
	for k, c := range cs {
		if seen[c.DocumentID] {
			return nil, nil, rag.Errorf(rag.CodeInvalid, "document %s is committed twice in one batch", c.DocumentID)
		}
		seen[c.DocumentID] = true
		if len(c.Chunks) > 0 {
			if err := checkSpace(c.Space); err != nil {
				return nil, nil, err
			}
		}
		p := prepared{terms: make([]string, len(c.Chunks)), vecs: make([][]byte, len(c.Chunks))}
		for i := range c.Chunks {
			ch := &c.Chunks[i]
			if len(ch.Vector) != c.Space.Dim {
				return nil, nil, rag.Errorf(rag.CodeInvalid, "chunk %d has a vector of %d dimensions, space %s has %d",
					ch.Index, len(ch.Vector), c.Space.ID(), c.Space.Dim)
			}
			p.terms[i] = strings.Join(textproc.IndexTerms(textproc.ContextText(c.Title, ch.Section, ch.Text)), " ")
			p.vecs[i] = encodeVector(ch.Vector)
		}
		if c.Text != "" {
			p.textHash = sha256Hex([]byte(c.Text))
		}
		pre[k] = p
	}
	versions := make([]int, len(cs))
	chunkIDs := make([][]int64, len(cs))
	err := s.write(ctx, func(tx *sql.Tx) error {
		stmt := func(query string) (*sql.Stmt, error) { return s.wstmts.inTx(ctx, tx, query) }
		var ftsRows [][]any
		for k, c := range cs {
			p := &pre[k]
			var seq int64
			var meta, current string
			version := 0
			err := tx.QueryRowContext(ctx, `SELECT seq, version, metadata, content_hash FROM documents WHERE id = ? AND deleted_at IS NULL`,
				c.DocumentID).Scan(&seq, &version, &meta, &current)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("document %s: %w", c.DocumentID, rag.ErrNotFound)
			}
			if err != nil {
				return err
			}
			if version == 0 || current != c.ContentHash {
				version++ // else the current content is indexed again (a restored document): same version
			}
			versions[k] = version
			del, err := stmt(deleteChunksSQL)
			if err != nil {
				return err
			}
			if _, err := del.ExecContext(ctx, seq); err != nil {
				return err
			}
			if len(c.Chunks) > 0 {
				spaceID, err := ensureSpace(ctx, tx, c.Space)
				if err != nil {
					return err
				}
				insChunk, err := stmt(insertChunkSQL)
				if err != nil {
					return err
				}
				insVec, err := stmt(insertVectorSQL)
				if err != nil {
					return err
				}
				ids := make([]int64, len(c.Chunks))
				for i := range c.Chunks {
					ch := &c.Chunks[i]
					kind := ch.Kind
					if kind == "" {
						kind = rag.KindText
					}
					text, keyID := s.opts.Keys.SealText(ch.Text)
					res, err := insChunk.ExecContext(ctx, seq, version, ch.Index, string(kind), text, ch.PageStart, ch.PageEnd,
						ch.Section, ch.StartOffset, ch.EndOffset, keyID, ocrConfidence(ch), rag.EncodePageBreaks(ch.PageBreaks))
					if err != nil {
						return err
					}
					id, err := res.LastInsertId()
					if err != nil {
						return err
					}
					if _, err := insVec.ExecContext(ctx, spaceID, id, p.vecs[i]); err != nil {
						return err
					}
					ids[i] = id
					ftsRows = append(ftsRows, []any{id, p.terms[i]})
				}
				chunkIDs[k] = ids
			}
			now := s.now().UnixMicro()
			upd, err := stmt(updateCommittedSQL)
			if err != nil {
				return err
			}
			if _, err := upd.ExecContext(ctx, version, c.ContentHash, c.Title, strings.ToLower(c.Title), c.Source, c.MediaType, c.Size,
				string(rag.StatusReady), string(rag.StageDone), len(c.Chunks), now, seq, c.Warning); err != nil {
				return err
			}
			if p.textHash != "" {
				if err := s.insertBlob(ctx, tx, p.textHash, []byte(c.Text)); err != nil {
					return err
				}
			}
			ver, err := stmt(insertVersionSQL)
			if err != nil {
				return err
			}
			if _, err := ver.ExecContext(ctx, now, p.textHash, seq); err != nil {
				return err
			}
			if err := indexDocument(ctx, tx, s.opts.Keys, seq); err != nil {
				return err
			}
		}
		if len(ftsRows) > 0 {
			// One statement for every row of the keyword index: FTS5 writes what it holds as a new segment
			// at each statement savepoint, so a statement per chunk made a segment per chunk, for FTS5 to
			// merge again and for searches to look into meanwhile.
			list, err := json.Marshal(ftsRows)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts (rowid, terms)
				SELECT value ->> 0, value ->> 1 FROM json_each(?)`, string(list)); err != nil {
				return err
			}
		}
		return s.maybePruneTombstones(ctx, tx)
	})
	if err != nil {
		if len(cs) == 1 {
			return nil, nil, dbError(err, "commit version of document %s", cs[0].DocumentID)
		}
		return nil, nil, dbError(err, "commit versions of %d documents", len(cs))
	}
	s.kickMerge()
	return versions, chunkIDs, nil
}

// maybePruneTombstones drops removed-vector records older than the retention, at most every few minutes.
func (s *Store) maybePruneTombstones(ctx context.Context, tx *sql.Tx) error {
	s.pruneMu.Lock()
	due := time.Since(s.lastPrune) > 5*time.Minute
	if due {
		s.lastPrune = time.Now()
	}
	s.pruneMu.Unlock()
	if !due {
		return nil
	}
	return pruneTombstones(ctx, tx, time.Now().Add(-s.opts.TombstoneRetention))
}

// pruneTombstones removes tombstones created before before and records the highest removed seq, so that a
// cache that has not seen them reloads in full.
func pruneTombstones(ctx context.Context, tx *sql.Tx, before time.Time) error {
	var through sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(seq) FROM vector_tombstones WHERE created_at < ?`, before.Unix()).Scan(&through); err != nil {
		return err
	}
	if !through.Valid {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM vector_tombstones WHERE seq <= ?`, through.Int64); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE store_meta SET value = max(value, ?) WHERE key = 'tombstones_pruned_through'`, through.Int64)
	return err
}

// DeleteDocument removes a visible document with its chunks, vectors, versions and the blobs of its
// content, pending and earlier versions that no other document references. ErrNotFound.
func (s *Store) DeleteDocument(ctx context.Context, p rag.Principal, id string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, seq, err := visibleDoc(ctx, tx, p, id)
		if err != nil {
			return err
		}
		return s.removeDocument(ctx, tx, seq)
	})
	if err == nil {
		s.kickMerge()
	}
	return dbError(err, "delete document")
}

// removeDocument deletes the document seq with everything that refers to it (chunks, vectors, keyword
// entries and version records by cascade) and the blobs of its content, pending and earlier versions that
// no other document or version record refers to.
func (s *Store) removeDocument(ctx context.Context, tx *sql.Tx, seq int64) error {
	var hashes []string
	rows, err := tx.QueryContext(ctx, `SELECT content_hash FROM document_versions WHERE doc_seq = ?1
		UNION SELECT text_hash FROM document_versions WHERE doc_seq = ?1
		UNION SELECT content_hash FROM documents WHERE seq = ?1 UNION SELECT pending_hash FROM documents WHERE seq = ?1
		UNION SELECT failed_hash FROM documents WHERE seq = ?1`, seq)
	if err != nil {
		return err
	}
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return err
		}
		hashes = append(hashes, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE seq = ?`, seq); err != nil {
		return err
	}
	slices.Sort(hashes)
	for _, h := range slices.Compact(hashes) {
		if h == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM blobs WHERE hash = ?1
			AND NOT EXISTS (SELECT 1 FROM documents WHERE content_hash = ?1 OR pending_hash = ?1 OR failed_hash = ?1)
			AND NOT EXISTS (SELECT 1 FROM document_versions WHERE content_hash = ?1 OR text_hash = ?1)`, h); err != nil {
			return err
		}
	}
	return s.maybePruneTombstones(ctx, tx)
}

// ListChunks returns the current chunks of a visible document in order (without vectors). ErrNotFound.
func (s *Store) ListChunks(ctx context.Context, p rag.Principal, documentID string) ([]*rag.Chunk, error) {
	var out []*rag.Chunk
	err := s.read(ctx, func(tx *sql.Tx) error {
		_, seq, err := visibleDoc(ctx, tx, p, documentID)
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+chunkCols+` FROM chunks c JOIN documents d ON d.seq = c.doc_seq
			WHERE c.doc_seq = ? ORDER BY c.idx, c.id`, seq)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, err := scanChunk(s.opts.Keys, rows)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, dbError(err, "list chunks")
	}
	return out, nil
}

const hitsSQL = `SELECT ` + chunkCols + `, d.collection_id, coalesce(d.external_id, ''), d.title, d.source, d.media_type,
	d.metadata, d.updated_at
	FROM chunks c JOIN documents d ON d.seq = c.doc_seq WHERE c.id IN (SELECT value FROM json_each(?))`

// Hits returns the chunks with those IDs and their documents' facts, in the order of ids; IDs that no
// longer exist, or whose documents p does not see, are skipped (an ID given twice yields one hit). The
// passages read before are kept in memory for later calls while the database does not change under them
// (hitcache.go); the others are read by one statement (the IDs go in as a JSON array) on the point-lookup
// pool. For a principal other than an admin, the IDs it sees are asked for first. A search calls it once or
// more after its candidate queries.
func (s *Store) Hits(ctx context.Context, p rag.Principal, ids []int64) ([]rag.Hit, error) {
	if len(ids) == 0 {
		return []rag.Hit{}, nil
	}
	ver, err := s.readHitVersion(ctx)
	if err != nil {
		return nil, dbError(err, "hits")
	}
	if !p.Admin {
		if ids, err = s.visibleChunks(ctx, p, ids); err != nil {
			return nil, dbError(err, "hits")
		}
	}
	found, missing := s.hitc.take(ver, ids)
	if len(missing) > 0 {
		read, err := s.readHits(ctx, missing)
		if err != nil {
			return nil, err
		}
		s.hitc.keep(ver, read)
		if found == nil {
			found = make(map[int64]rag.Hit, len(read))
		}
		for _, h := range read {
			found[h.ID] = h
		}
	}
	out := make([]rag.Hit, 0, len(found))
	for _, id := range ids {
		if h, ok := found[id]; ok {
			out = append(out, h)
			delete(found, id)
		}
	}
	return out, nil
}

// readHits reads the passages of ids from the database, whoever may see them, in no particular order.
func (s *Store) readHits(ctx context.Context, ids []int64) ([]rag.Hit, error) {
	st, err := s.qstmts.get(ctx, hitsSQL)
	if err != nil {
		return nil, dbError(err, "hits")
	}
	rows, err := st.QueryContext(ctx, idList(ids))
	if err != nil {
		return nil, dbError(err, "hits")
	}
	defer rows.Close()
	out := make([]rag.Hit, 0, len(ids))
	for rows.Next() {
		var h rag.Hit
		var meta string
		var updated int64
		c, err := scanChunk(s.opts.Keys, rows, &h.CollectionID, &h.ExternalID, &h.Title, &h.Source, &h.MediaType, &meta, &updated)
		if err != nil {
			return nil, dbError(err, "hits")
		}
		h.Chunk = *c
		if h.Metadata, err = unmarshalMap(meta); err != nil {
			return nil, dbError(err, "hits")
		}
		h.UpdatedAt = fromMicro(updated)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(err, "hits")
	}
	return out, nil
}

// visibleChunks is the IDs of ids (in their order, each once) whose documents p sees.
func (s *Store) visibleChunks(ctx context.Context, p rag.Principal, ids []int64) ([]int64, error) {
	var w where
	w.visible(p)
	rows, err := s.q.QueryContext(ctx, `SELECT c.id FROM chunks c JOIN documents d ON d.seq = c.doc_seq
		WHERE c.id IN (SELECT value FROM json_each(?)) AND `+w.sql(), append([]any{idList(ids)}, w.args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seen := make(map[int64]bool, len(ids))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		seen[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]int64, 0, len(seen))
	for _, id := range ids {
		if seen[id] {
			out = append(out, id)
			delete(seen, id)
		}
	}
	return out, nil
}

// idList is ids as a JSON array, for json_each.
func idList(ids []int64) string {
	list := make([]byte, 0, 8*len(ids)+2)
	list = append(list, '[')
	for i, id := range ids {
		if i > 0 {
			list = append(list, ',')
		}
		list = strconv.AppendInt(list, id, 10)
	}
	return string(append(list, ']'))
}

// PutBlob stores raw bytes under their sha256 hex hash (idempotent). CodeInvalid if hash is not data's.
func (s *Store) PutBlob(ctx context.Context, hash string, data []byte) error {
	if want := sha256Hex(data); hash != want {
		return rag.Errorf(rag.CodeInvalid, "blob hash %q is not the sha256 of its bytes", hash)
	}
	if data == nil {
		data = []byte{}
	}
	err := s.write(ctx, func(tx *sql.Tx) error { return s.insertBlob(ctx, tx, hash, data) })
	return dbError(err, "put blob")
}

// insertBlob stores data under hash inside tx unless a blob of that hash exists.
func (s *Store) insertBlob(ctx context.Context, tx *sql.Tx, hash string, data []byte) error {
	sealed, keyID := s.opts.Keys.Seal(data)
	_, err := tx.ExecContext(ctx, `INSERT INTO blobs (hash, data, size, created_at, key_id) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (hash) DO NOTHING`, hash, sealed, len(data), s.now().UnixMicro(), keyID)
	return err
}

// GetBlob returns the bytes stored under hash. ErrNotFound.
func (s *Store) GetBlob(ctx context.Context, hash string) ([]byte, error) {
	return s.blob(ctx, `SELECT data, key_id FROM blobs WHERE hash = ?`, hash, hash)
}

// DocumentBlob implements rag.Store.
func (s *Store) DocumentBlob(ctx context.Context, p rag.Principal, documentID, hash string) ([]byte, error) {
	var w where
	w.add(`d.id = ?`, documentID)
	w.add(live)
	w.visible(p)
	w.add(`d.content_hash = ? OR EXISTS (SELECT 1 FROM document_versions v WHERE v.doc_seq = d.seq
		AND (v.content_hash = ? OR (v.text_hash <> '' AND v.text_hash = ?)))`, hash, hash, hash)
	return s.blob(ctx, `SELECT data, key_id FROM blobs WHERE hash = ? AND EXISTS (SELECT 1 FROM documents d WHERE `+w.sql()+`)`,
		hash, append([]any{hash}, w.args...)...)
}

// blob reads the blob hash with query (its data and key_id; args its arguments) and opens it.
func (s *Store) blob(ctx context.Context, query, hash string, args ...any) ([]byte, error) {
	var data []byte
	var keyID string
	err := s.r.QueryRowContext(ctx, query, args...).Scan(&data, &keyID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("blob %s: %w", hash, rag.ErrNotFound)
	}
	if err != nil {
		return nil, dbError(err, "get blob")
	}
	if data, err = s.opts.Keys.Open(data, keyID); err != nil {
		return nil, rag.WrapError(rag.CodeDBError, err, "blob %s", hash)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}
