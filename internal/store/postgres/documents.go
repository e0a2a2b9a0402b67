package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

const collectionColumns = "id, name, description, owner, settings, profile, created_at, updated_at, visibility"

func scanCollection(row pgx.Row) (*rag.Collection, error) {
	var c rag.Collection
	var profile []byte
	if err := row.Scan(&c.ID, &c.Name, &c.Description, &c.Owner, &c.Settings, &profile, &c.CreatedAt, &c.UpdatedAt, &c.Visibility); err != nil {
		return nil, err
	}
	if len(profile) > 0 {
		c.Profile = profile
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return &c, nil
}

// profileValue is a collection's profile as a query argument: NULL when there is none.
func profileValue(c *rag.Collection) any {
	if len(c.Profile) == 0 {
		return nil
	}
	return string(c.Profile)
}

// CreateCollection stores c, assigning its ID when empty and its timestamps. ErrConflict if the name exists.
func (s *Store) CreateCollection(ctx context.Context, c *rag.Collection) error {
	if c.Name == "" {
		return rag.Errorf(rag.CodeInvalid, "collection name is required")
	}
	vis, err := rag.CheckVisibility(c.Visibility)
	if err != nil {
		return err
	}
	id := c.ID
	if id == "" {
		id = uuid.NewString()
	}
	now := s.now()
	_, err = s.pool.Exec(ctx, s.q(`INSERT INTO {S}.collections (`+collectionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)`),
		id, c.Name, c.Description, c.Owner, c.Settings, profileValue(c), now, string(vis))
	if err != nil {
		return interpretError(fmt.Errorf("create collection: %w", err))
	}
	c.ID, c.CreatedAt, c.UpdatedAt, c.Visibility = id, now, now, vis
	return nil
}

// GetCollection returns the collection with that ID or, failing that, that name. ErrNotFound.
func (s *Store) GetCollection(ctx context.Context, idOrName string) (*rag.Collection, error) {
	c, err := scanCollection(s.pool.QueryRow(ctx, s.q(`SELECT `+collectionColumns+` FROM {S}.collections
		WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC LIMIT 1`), idOrName))
	if err != nil {
		return nil, interpretError(fmt.Errorf("get collection: %w", err))
	}
	return c, nil
}

// EnsureCollection returns the collection named name, creating it (owned by owner) when it does not exist.
// Concurrent callers get the same collection: the insert yields to a row another caller committed first.
func (s *Store) EnsureCollection(ctx context.Context, name, owner string) (*rag.Collection, error) {
	if name == "" {
		return nil, rag.Errorf(rag.CodeInvalid, "collection name is required")
	}
	now := s.now()
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {S}.collections (`+collectionColumns+`) VALUES ($1, $2, '', $3, NULL, NULL, $4, $4, 'private')
		ON CONFLICT (name) DO NOTHING`), uuid.NewString(), name, owner, now)
	if err != nil {
		return nil, interpretError(fmt.Errorf("ensure collection: %w", err))
	}
	c, err := scanCollection(s.pool.QueryRow(ctx, s.q(`SELECT `+collectionColumns+` FROM {S}.collections WHERE name = $1`), name))
	if err != nil {
		return nil, interpretError(fmt.Errorf("ensure collection: %w", err))
	}
	return c, nil
}

// UpdateCollection replaces the description, settings and profile of the collection with c.ID and sets
// c.UpdatedAt. ErrNotFound.
func (s *Store) UpdateCollection(ctx context.Context, c *rag.Collection) error {
	now := s.now()
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {S}.collections SET description = $2, settings = $3, profile = $4, updated_at = $5
		WHERE id = $1`), c.ID, c.Description, c.Settings, profileValue(c), now)
	if err != nil {
		return interpretError(fmt.Errorf("update collection: %w", err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("collection %q: %w", c.ID, rag.ErrNotFound)
	}
	c.UpdatedAt = now
	return nil
}

// ListCollections returns every collection ordered by name.
func (s *Store) ListCollections(ctx context.Context) ([]*rag.Collection, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+collectionColumns+` FROM {S}.collections ORDER BY name`))
	if err != nil {
		return nil, interpretError(fmt.Errorf("list collections: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.Collection, error) { return scanCollection(r) })
	if err != nil {
		return nil, interpretError(fmt.Errorf("list collections: %w", err))
	}
	return out, nil
}

const documentColumns = `d.id, d.collection_id, CASE WHEN d.deleted_at IS NULL THEN d.external_id ELSE d.deleted_external_id END, d.title, d.source, d.media_type, d.content_hash,
	d.pending_hash, d.version, d.size, d.status, d.stage, d.progress, d.error_code, d.error, d.metadata, d.tags,
	d.owner, d.readers, d.chunk_count, d.created_at, d.updated_at, d.writers, d.deleted_at, d.failed_hash`

// live is the condition on documents (alias d) that are not deleted (TrashDocument).
const live = `d.deleted_at IS NULL`

func scanDocument(row pgx.Row) (*rag.Document, error) {
	var d rag.Document
	var status, stage, code string
	err := row.Scan(&d.ID, &d.CollectionID, &d.ExternalID, &d.Title, &d.Source, &d.MediaType, &d.ContentHash,
		&d.PendingHash, &d.Version, &d.Size, &status, &stage, &d.Progress, &code, &d.Error, &d.Metadata, &d.Tags,
		&d.Owner, &d.Readers, &d.ChunkCount, &d.CreatedAt, &d.UpdatedAt, &d.Writers, &d.DeletedAt, &d.FailedHash)
	if err != nil {
		return nil, err
	}
	if d.DeletedAt != nil {
		t := d.DeletedAt.UTC()
		d.DeletedAt = &t
	}
	d.Status, d.Stage, d.ErrorCode = rag.Status(status), rag.Stage(stage), rag.Code(code)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	if len(d.Tags) == 0 {
		d.Tags = nil
	}
	if len(d.Readers) == 0 {
		d.Readers = nil
	}
	if len(d.Writers) == 0 {
		d.Writers = nil
	}
	return &d, nil
}

// nonNil returns ss, or an empty slice for nil (the array columns are NOT NULL).
func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// CreateDocument stores a new document, assigning its ID when empty and its timestamps (status and stage
// default to queued). ErrConflict when the collection has a document with that external ID, ErrNotFound when
// the collection does not exist.
func (s *Store) CreateDocument(ctx context.Context, d *rag.Document) error {
	id := d.ID
	if id == "" {
		id = uuid.NewString()
	}
	status, stage := d.Status, d.Stage
	if status == "" {
		status = rag.StatusQueued
	}
	if stage == "" {
		stage = rag.StageQueued
	}
	now := s.now()
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {S}.documents (id, collection_id, external_id, title, source, media_type,
		content_hash, pending_hash, version, size, status, stage, progress, error_code, error, metadata, tags, owner,
		readers, chunk_count, created_at, updated_at, writers)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, 0, $20, $20, $21)`),
		id, d.CollectionID, d.ExternalID, d.Title, d.Source, d.MediaType, d.ContentHash, d.PendingHash, d.Version, d.Size,
		string(status), string(stage), d.Progress, string(d.ErrorCode), d.Error, d.Metadata, nonNil(d.Tags), d.Owner,
		nonNil(d.Readers), now, nonNil(d.Writers))
	if err != nil {
		return interpretError(fmt.Errorf("create document: %w", err))
	}
	d.ID, d.Status, d.Stage, d.ChunkCount, d.CreatedAt, d.UpdatedAt = id, status, stage, 0, now, now
	return nil
}

// GetDocument returns a document visible to p. ErrNotFound.
func (s *Store) GetDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error) {
	var a args
	conds, _ := docConditions(&a, p, rag.Filter{})
	return s.oneDocument(ctx, p, "get document", a, append(conds, "d.id = "+a.add(id), live))
}

// FindDocument returns the document of a collection with that external ID, when visible to p. ErrNotFound.
func (s *Store) FindDocument(ctx context.Context, p rag.Principal, collectionID, externalID string) (*rag.Document, error) {
	var a args
	conds, _ := docConditions(&a, p, rag.Filter{})
	return s.oneDocument(ctx, p, "find document", a, append(conds, "d.collection_id = "+a.add(collectionID), "d.external_id = "+a.add(externalID), live))
}

// oneDocument reads the document matching conds (whose parameters are a) as p. ErrNotFound.
func (s *Store) oneDocument(ctx context.Context, p rag.Principal, what string, a args, conds []string) (*rag.Document, error) {
	var d *rag.Document
	err := s.read(ctx, p, func(db querier) (err error) {
		d, err = scanDocument(db.QueryRow(ctx, s.q(`SELECT `+documentColumns+` FROM {S}.documents d WHERE `+where(conds)), a...))
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
	return d, err
}

// Listing limits (rag.DocumentQuery).
const (
	defaultListLimit = 50
	maxListLimit     = 500
)

// ListDocuments returns a page of the documents visible to p that match q, newest first, and their total.
func (s *Store) ListDocuments(ctx context.Context, p rag.Principal, q rag.DocumentQuery) (*rag.DocumentPage, error) {
	limit, offset := q.Limit, max(q.Offset, 0)
	if limit <= 0 {
		limit = defaultListLimit
	}
	limit = min(limit, maxListLimit)
	var a args
	conds, err := docConditions(&a, p, q.Filter)
	if err != nil {
		return nil, err
	}
	if q.Deleted {
		conds = append(conds, "d.deleted_at IS NOT NULL")
	} else {
		conds = append(conds, live)
	}
	if q.TitleContains != "" {
		conds = append(conds, "strpos(lower(d.title), lower("+a.add(q.TitleContains)+")) > 0")
	}
	if len(q.Statuses) > 0 {
		st := make([]string, len(q.Statuses))
		for i, v := range q.Statuses {
			st[i] = string(v)
		}
		conds = append(conds, "d.status = ANY("+a.add(st)+"::text[])")
	}
	w := where(conds)
	page := &rag.DocumentPage{Documents: []*rag.Document{}}
	err = s.read(ctx, p, func(db querier) error {
		if err := db.QueryRow(ctx, s.q(`SELECT count(*) FROM {S}.documents d WHERE `+w), a...).Scan(&page.Total); err != nil {
			return fmt.Errorf("list documents: %w", err)
		}
		rows, err := db.Query(ctx, s.q(`SELECT `+documentColumns+` FROM {S}.documents d WHERE `+w+
			fmt.Sprintf(` ORDER BY d.created_at DESC, d.id DESC LIMIT %d OFFSET %d`, limit, offset)), a...)
		if err != nil {
			return fmt.Errorf("list documents: %w", err)
		}
		docs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.Document, error) { return scanDocument(r) })
		if err != nil {
			return fmt.Errorf("list documents: %w", err)
		}
		page.Documents = append(page.Documents, docs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

// DocumentsByStatus returns up to limit documents in any of statuses, oldest first, whoever can see them.
func (s *Store) DocumentsByStatus(ctx context.Context, statuses []rag.Status, limit int) ([]*rag.Document, error) {
	st := make([]string, len(statuses))
	for i, v := range statuses {
		st[i] = string(v)
	}
	return s.oldestDocuments(ctx, "documents by status", `d.status = ANY($1::text[])`, limit, st)
}

// PendingDocuments returns up to limit documents with a pending version, oldest first, whoever can see them.
func (s *Store) PendingDocuments(ctx context.Context, limit int) ([]*rag.Document, error) {
	return s.oldestDocuments(ctx, "pending documents", `d.pending_hash <> ''`, limit)
}

// oldestDocuments returns up to limit (default 100) documents matching where (whose parameters are args,
// $1…), oldest first.
func (s *Store) oldestDocuments(ctx context.Context, what, where string, limit int, args ...any) ([]*rag.Document, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+documentColumns+` FROM {S}.documents d WHERE `+live+` AND `+where+`
		ORDER BY d.created_at, d.id LIMIT `+fmt.Sprintf("$%d", len(args)+1)), append(args, limit)...)
	if err != nil {
		return nil, interpretError(fmt.Errorf("%s: %w", what, err))
	}
	docs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.Document, error) { return scanDocument(r) })
	if err != nil {
		return nil, interpretError(fmt.Errorf("%s: %w", what, err))
	}
	return docs, nil
}

// UpdateDocument changes the descriptive fields of a document visible to p (nil fields stay) without making
// a version. ErrNotFound.
func (s *Store) UpdateDocument(ctx context.Context, p rag.Principal, id string, u rag.DocumentUpdate) (*rag.Document, error) {
	var a args
	sets := []string{"updated_at = " + a.add(s.now())}
	if u.Title != nil {
		sets = append(sets, "title = "+a.add(*u.Title))
	}
	if u.Metadata != nil {
		sets = append(sets, "metadata = "+a.add(u.Metadata))
	}
	if u.Tags != nil {
		sets = append(sets, "tags = "+a.add(u.Tags))
	}
	if u.Readers != nil {
		sets = append(sets, "readers = "+a.add(u.Readers))
	}
	if u.Writers != nil {
		sets = append(sets, "writers = "+a.add(u.Writers))
	}
	conds, _ := docConditions(&a, p, rag.Filter{})
	conds = append(conds, "d.id = "+a.add(id), live)
	sql := `UPDATE {S}.documents d SET ` + strings.Join(sets, ", ") + ` WHERE ` + where(conds) + ` RETURNING ` + documentColumns
	var d *rag.Document
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if d, err = scanDocument(tx.QueryRow(ctx, s.q(sql), a...)); err != nil {
			return err
		}
		if u.Title != nil || u.Metadata != nil {
			return s.indexDocument(ctx, tx, d.ID)
		}
		return nil
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("update document: %w", err))
	}
	return d, nil
}

// SetDocumentState records a document's processing state. ErrNotFound.
func (s *Store) SetDocumentState(ctx context.Context, id string, st rag.DocumentState) error {
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {S}.documents SET status = $2, stage = $3, progress = $4, error_code = $5,
		error = $6, pending_hash = COALESCE($7, pending_hash), updated_at = $8, failed_hash = COALESCE($10, failed_hash)
		WHERE id = $1 AND deleted_at IS NULL AND ($9 = '' OR pending_hash = $9)`),
		id, string(st.Status), string(st.Stage), st.Progress, string(st.ErrorCode), st.Error, st.PendingHash, s.now(),
		st.IfPending, st.FailedHash)
	if err != nil {
		return interpretError(fmt.Errorf("set document state: %w", err))
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	if st.IfPending == "" {
		return rag.ErrNotFound
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM {S}.documents WHERE id = $1 AND deleted_at IS NULL)`), id).Scan(&exists); err != nil {
		return interpretError(fmt.Errorf("set document state: %w", err))
	}
	if !exists {
		return rag.ErrNotFound
	}
	return fmt.Errorf("document %s: version %.12s is no longer pending: %w", id, st.IfPending, rag.ErrConflict)
}

// DeleteDocument removes a document visible to p with its chunks, postings, vectors and versions, and the
// blobs of its content, pending and past versions that no other document or version refers to. ErrNotFound.
func (s *Store) DeleteDocument(ctx context.Context, p rag.Principal, id string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var a args
		conds, _ := docConditions(&a, p, rag.Filter{})
		conds = append(conds, "d.id = "+a.add(id), live)
		var found string
		if err := tx.QueryRow(ctx, s.q(`SELECT d.id FROM {S}.documents d WHERE `+where(conds)+` FOR UPDATE OF d`), a...).Scan(&found); err != nil {
			return interpretError(fmt.Errorf("delete document: %w", err))
		}
		return s.removeDocument(ctx, tx, id)
	})
}

// removeDocument deletes a document with everything that refers to it (chunks with their postings and
// vectors, version records, document-index entries) and the blobs of its content, pending and past versions
// that no other document or version record refers to, inside tx.
func (s *Store) removeDocument(ctx context.Context, tx pgx.Tx, id string) error {
	var hashes []string
	err := tx.QueryRow(ctx, s.q(`SELECT array_remove(array[d.content_hash, d.pending_hash, d.failed_hash] ||
		ARRAY(SELECT content_hash FROM {S}.document_versions WHERE document_id = d.id) ||
		ARRAY(SELECT text_hash FROM {S}.document_versions WHERE document_id = d.id), '')
		FROM {S}.documents d WHERE d.id = $1`), id).Scan(&hashes)
	if err != nil {
		return fmt.Errorf("delete document: %w", err)
	}
	if err := s.dropChunks(ctx, tx, id); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, s.q(`DELETE FROM {S}.documents WHERE id = $1`), id); err != nil {
		return fmt.Errorf("delete document: %w", err)
	}
	if _, err := tx.Exec(ctx, s.q(`DELETE FROM {S}.blobs b WHERE b.hash = ANY($1::text[])
		AND NOT EXISTS (SELECT 1 FROM {S}.documents d WHERE d.content_hash = b.hash OR d.pending_hash = b.hash OR d.failed_hash = b.hash)
		AND NOT EXISTS (SELECT 1 FROM {S}.document_versions v WHERE v.content_hash = b.hash OR v.text_hash = b.hash)`),
		hashes); err != nil {
		return fmt.Errorf("delete document blobs: %w", err)
	}
	return nil
}

// dropChunks deletes the chunks of a document with their postings (vectors follow by cascade) and takes
// them out of the BM25 statistics, inside tx.
func (s *Store) dropChunks(ctx context.Context, tx pgx.Tx, documentID string) error {
	var n, terms int64
	err := tx.QueryRow(ctx, s.q(`WITH gone AS (DELETE FROM {S}.chunks WHERE document_id = $1 RETURNING id, term_count),
		p AS (DELETE FROM {S}.postings WHERE chunk_id IN (SELECT id FROM gone))
		SELECT count(*), COALESCE(sum(term_count), 0) FROM gone`), documentID).Scan(&n, &terms)
	if err != nil {
		return fmt.Errorf("delete chunks: %w", err)
	}
	if n > 0 {
		if _, err := tx.Exec(ctx, s.q(`UPDATE {S}.corpus_stats SET chunks = chunks - $2, terms = terms - $3 WHERE slot = $1`),
			statsSlot(documentID), n, terms); err != nil {
			return fmt.Errorf("update corpus stats: %w", err)
		}
	}
	return nil
}
