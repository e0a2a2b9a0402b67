package sqlite

import (
	"time"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/ragd/ragd/internal/rag"
)

const docCols = `d.seq, d.id, d.collection_id, coalesce(d.external_id, d.deleted_external_id, ''), d.title, d.source, d.media_type, d.content_hash,
	d.pending_hash, d.version, d.size, d.status, d.stage, d.progress, d.error_code, d.error, d.metadata, d.tags, d.owner,
	d.readers, d.chunk_count, d.created_at, d.updated_at, d.writers, d.deleted_at, d.failed_hash`

// live is the condition on documents (alias d) that are not deleted (TrashDocument).
const live = `d.deleted_at IS NULL`

// scanDoc reads the docCols of one row; it also returns the document's seq.
func scanDoc(row interface{ Scan(...any) error }) (*rag.Document, int64, error) {
	var d rag.Document
	var seq, created, updated int64
	var deleted sql.NullInt64
	var meta, tags, readers, writers string
	if err := row.Scan(&seq, &d.ID, &d.CollectionID, &d.ExternalID, &d.Title, &d.Source, &d.MediaType, &d.ContentHash,
		&d.PendingHash, &d.Version, &d.Size, &d.Status, &d.Stage, &d.Progress, &d.ErrorCode, &d.Error, &meta, &tags, &d.Owner,
		&readers, &d.ChunkCount, &created, &updated, &writers, &deleted, &d.FailedHash); err != nil {
		return nil, 0, err
	}
	if deleted.Valid {
		t := fromMicro(deleted.Int64)
		d.DeletedAt = &t
	}
	var err error
	if d.Metadata, err = unmarshalMap(meta); err != nil {
		return nil, 0, fmt.Errorf("document %s metadata: %w", d.ID, err)
	}
	if d.Tags, err = unmarshalStrings(tags); err != nil {
		return nil, 0, fmt.Errorf("document %s tags: %w", d.ID, err)
	}
	if d.Readers, err = unmarshalStrings(readers); err != nil {
		return nil, 0, fmt.Errorf("document %s readers: %w", d.ID, err)
	}
	if d.Writers, err = unmarshalStrings(writers); err != nil {
		return nil, 0, fmt.Errorf("document %s writers: %w", d.ID, err)
	}
	d.CreatedAt, d.UpdatedAt = fromMicro(created), fromMicro(updated)
	return &d, seq, nil
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// visibleDoc returns the live document id if p sees it, with its seq; ErrNotFound otherwise.
func visibleDoc(ctx context.Context, q queryer, p rag.Principal, id string) (*rag.Document, int64, error) {
	return visibleDocIn(ctx, q, p, id, live)
}

// visibleDocIn is visibleDoc for the documents matching state (live, or deleted).
func visibleDocIn(ctx context.Context, q queryer, p rag.Principal, id, state string) (*rag.Document, int64, error) {
	var w where
	w.add(`d.id = ?`, id)
	w.add(state)
	w.visible(p)
	d, seq, err := scanDoc(q.QueryRowContext(ctx, `SELECT `+docCols+` FROM documents d WHERE `+w.sql(), w.args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, fmt.Errorf("document %s: %w", id, rag.ErrNotFound)
	}
	return d, seq, err
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// CreateDocument stores a new document, assigning ID (when empty) and timestamps. ErrConflict if the
// collection has a document with that ExternalID; ErrNotFound if the collection does not exist.
func (s *Store) CreateDocument(ctx context.Context, d *rag.Document) error {
	meta, err := marshalJSON(d.Metadata, "{}")
	if err != nil {
		return err
	}
	tags, err := marshalJSON(d.Tags, "[]")
	if err != nil {
		return err
	}
	readers, err := marshalJSON(d.Readers, "[]")
	if err != nil {
		return err
	}
	writers, err := marshalJSON(d.Writers, "[]")
	if err != nil {
		return err
	}
	id := d.ID
	if id == "" {
		id = newID()
	}
	status, stage := d.Status, d.Stage
	if status == "" {
		status = rag.StatusQueued
	}
	if stage == "" {
		stage = rag.StageQueued
	}
	now := s.now()
	err = s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM collections WHERE id = ?`, d.CollectionID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("collection %q: %w", d.CollectionID, rag.ErrNotFound)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO documents (id, collection_id, external_id, title, title_lower, source,
			media_type, content_hash, pending_hash, version, size, status, stage, progress, error_code, error, metadata, tags,
			owner, readers, chunk_count, created_at, updated_at, writers)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
			id, d.CollectionID, nullable(d.ExternalID), d.Title, strings.ToLower(d.Title), d.Source, d.MediaType,
			d.ContentHash, d.PendingHash, d.Size, string(status), string(stage), d.Progress, string(d.ErrorCode), d.Error, meta, tags,
			d.Owner, readers, now.UnixMicro(), now.UnixMicro(), writers)
		return err
	})
	if err != nil {
		return dbError(err, "create document %q", d.ExternalID)
	}
	d.ID, d.Status, d.Stage, d.Version, d.ChunkCount, d.CreatedAt, d.UpdatedAt = id, status, stage, 0, 0, now, now
	return nil
}

// GetDocument returns a visible document. ErrNotFound.
func (s *Store) GetDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error) {
	d, _, err := visibleDoc(ctx, s.r, p, id)
	if err != nil {
		return nil, dbError(err, "get document")
	}
	return d, nil
}

// FindDocument returns the visible document of a collection with that external ID. ErrNotFound.
func (s *Store) FindDocument(ctx context.Context, p rag.Principal, collectionID, externalID string) (*rag.Document, error) {
	var w where
	w.add(`d.collection_id = ? AND d.external_id = ?`, collectionID, externalID)
	w.add(live)
	w.visible(p)
	d, _, err := scanDoc(s.r.QueryRowContext(ctx, `SELECT `+docCols+` FROM documents d WHERE `+w.sql(), w.args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("document %q in collection %s: %w", externalID, collectionID, rag.ErrNotFound)
	}
	if err != nil {
		return nil, dbError(err, "find document")
	}
	return d, nil
}

// ListDocuments returns a page of visible documents matching q, newest (created) first.
func (s *Store) ListDocuments(ctx context.Context, p rag.Principal, q rag.DocumentQuery) (*rag.DocumentPage, error) {
	var w where
	if q.Deleted {
		w.add(`d.deleted_at IS NOT NULL`)
	} else {
		w.add(live)
	}
	w.visible(p)
	if err := w.filter(q.Filter); err != nil {
		return nil, err
	}
	if q.TitleContains != "" {
		w.add(`instr(d.title_lower, ?) > 0`, strings.ToLower(q.TitleContains))
	}
	if len(q.Statuses) > 0 {
		st := make([]any, len(q.Statuses))
		for i, x := range q.Statuses {
			st[i] = string(x)
		}
		w.add(`d.status IN (`+placeholders(len(st))+`)`, st...)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 500)
	page := &rag.DocumentPage{Documents: []*rag.Document{}}
	err := s.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM documents d WHERE `+w.sql(), w.args...).Scan(&page.Total); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+docCols+` FROM documents d WHERE `+w.sql()+`
			ORDER BY d.created_at DESC, d.seq DESC LIMIT ? OFFSET ?`, append(w.args, limit, max(q.Offset, 0))...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d, _, err := scanDoc(rows)
			if err != nil {
				return err
			}
			page.Documents = append(page.Documents, d)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, dbError(err, "list documents")
	}
	return page, nil
}

// DocumentsByStatus returns documents in any of statuses regardless of visibility, oldest first, at most
// limit.
func (s *Store) DocumentsByStatus(ctx context.Context, statuses []rag.Status, limit int) ([]*rag.Document, error) {
	if len(statuses) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(statuses))
	for _, x := range statuses {
		args = append(args, string(x))
	}
	return s.oldestDocuments(ctx, "documents by status", `d.status IN (`+placeholders(len(statuses))+`)`, args, limit)
}

// PendingDocuments returns documents with a pending version regardless of visibility, oldest first, at
// most limit.
func (s *Store) PendingDocuments(ctx context.Context, limit int) ([]*rag.Document, error) {
	return s.oldestDocuments(ctx, "pending documents", `d.pending_hash <> ''`, nil, limit)
}

// oldestDocuments returns up to limit (default 100) documents matching the condition where, oldest first.
func (s *Store) oldestDocuments(ctx context.Context, what, where string, args []any, limit int) ([]*rag.Document, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+docCols+` FROM documents d WHERE `+live+` AND `+where+`
		ORDER BY d.created_at, d.seq LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, dbError(err, "%s", what)
	}
	defer rows.Close()
	var out []*rag.Document
	for rows.Next() {
		d, _, err := scanDoc(rows)
		if err != nil {
			return nil, dbError(err, "%s", what)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(err, "%s", what)
	}
	return out, nil
}

// UpdateDocument changes the descriptive fields of a visible document without making a version.
func (s *Store) UpdateDocument(ctx context.Context, p rag.Principal, id string, u rag.DocumentUpdate) (*rag.Document, error) {
	var sets []string
	var args []any
	if u.Title != nil {
		sets = append(sets, `title = ?`, `title_lower = ?`)
		args = append(args, *u.Title, strings.ToLower(*u.Title))
	}
	if u.Metadata != nil {
		meta, err := marshalJSON(u.Metadata, "{}")
		if err != nil {
			return nil, err
		}
		sets = append(sets, `metadata = ?`)
		args = append(args, meta)
	}
	if u.Tags != nil {
		tags, err := marshalJSON(u.Tags, "[]")
		if err != nil {
			return nil, err
		}
		sets = append(sets, `tags = ?`)
		args = append(args, tags)
	}
	if u.Readers != nil {
		readers, err := marshalJSON(u.Readers, "[]")
		if err != nil {
			return nil, err
		}
		sets = append(sets, `readers = ?`)
		args = append(args, readers)
	}
	if u.Writers != nil {
		writers, err := marshalJSON(u.Writers, "[]")
		if err != nil {
			return nil, err
		}
		sets = append(sets, `writers = ?`)
		args = append(args, writers)
	}
	sets = append(sets, `updated_at = ?`)
	args = append(args, s.now().UnixMicro())
	var out *rag.Document
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, seq, err := visibleDoc(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE documents SET `+strings.Join(sets, ", ")+` WHERE seq = ?`, append(args, seq)...); err != nil {
			return err
		}
		if u.Title != nil || u.Metadata != nil {
			if err := indexDocument(ctx, tx, s.opts.Keys, seq); err != nil {
				return err
			}
		}
		out, _, err = scanDoc(tx.QueryRowContext(ctx, `SELECT `+docCols+` FROM documents d WHERE d.seq = ?`, seq))
		return err
	})
	if err != nil {
		return nil, dbError(err, "update document")
	}
	return out, nil
}

// SetDocumentState records processing state. ErrNotFound.
func (s *Store) SetDocumentState(ctx context.Context, id string, st rag.DocumentState) error {
	q := `UPDATE documents SET status = ?, stage = ?, progress = ?, error_code = ?, error = ?, updated_at = ?`
	args := []any{string(st.Status), string(st.Stage), st.Progress, string(st.ErrorCode), st.Error, s.now().UnixMicro()}
	if st.PendingHash != nil {
		q += `, pending_hash = ?`
		args = append(args, *st.PendingHash)
	}
	if st.FailedHash != nil {
		q += `, failed_hash = ?`
		args = append(args, *st.FailedHash)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		cond := ` WHERE id = ? AND deleted_at IS NULL`
		args := append(args, id)
		if st.IfPending != "" {
			cond += ` AND pending_hash = ?`
			args = append(args, st.IfPending)
		}
		res, err := tx.ExecContext(ctx, q+cond, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n > 0 {
			return nil
		}
		var one int
		switch err := tx.QueryRowContext(ctx, `SELECT 1 FROM documents WHERE id = ? AND deleted_at IS NULL`, id).Scan(&one); {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("document %s: %w", id, rag.ErrNotFound)
		case err != nil:
			return err
		}
		return fmt.Errorf("document %s: version %.12s is no longer pending: %w", id, st.IfPending, rag.ErrConflict)
	})
	return dbError(err, "set document state")
}

// ListVersions returns the version records of a visible document, newest first. ErrNotFound.
func (s *Store) ListVersions(ctx context.Context, p rag.Principal, documentID string) ([]*rag.DocumentVersion, error) {
	var out []*rag.DocumentVersion
	err := s.read(ctx, func(tx *sql.Tx) error {
		_, seq, err := visibleDoc(ctx, tx, p, documentID)
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT version, content_hash, title, source, media_type, size, chunk_count, metadata,
			created_at, text_hash FROM document_versions WHERE doc_seq = ? ORDER BY version DESC`, seq)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v := &rag.DocumentVersion{DocumentID: documentID}
			var meta string
			var created int64
			if err := rows.Scan(&v.Version, &v.ContentHash, &v.Title, &v.Source, &v.MediaType, &v.Size, &v.ChunkCount,
				&meta, &created, &v.TextHash); err != nil {
				return err
			}
			if v.Metadata, err = unmarshalMap(meta); err != nil {
				return err
			}
			v.CreatedAt = fromMicro(created)
			out = append(out, v)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, dbError(err, "list versions")
	}
	return out, nil
}

// DocumentHistory returns the last limit changes of state of a visible document, oldest first (recorded by
// the triggers of migration 0014). ErrNotFound.
func (s *Store) DocumentHistory(ctx context.Context, p rag.Principal, documentID string, limit int) ([]*rag.DocumentEvent, error) {
	limit = min(max(limit, 1), rag.MaxHistory)
	var out []*rag.DocumentEvent
	err := s.read(ctx, func(tx *sql.Tx) error {
		_, seq, err := visibleDoc(ctx, tx, p, documentID)
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT at, status, stage, version, error_code, error FROM (
			SELECT id, at, status, stage, version, error_code, error FROM document_events WHERE doc_seq = ?
			ORDER BY id DESC LIMIT ?) ORDER BY id`, seq, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e rag.DocumentEvent
			var at int64
			if err := rows.Scan(&at, &e.Status, &e.Stage, &e.Version, &e.ErrorCode, &e.Error); err != nil {
				return err
			}
			e.At = time.UnixMicro(at).UTC()
			out = append(out, &e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, dbError(err, "document history")
	}
	return out, nil
}
