package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

var _ rag.GraphStore = (*Store)(nil)

// graphScope is the condition every read of a collection's graph or record tables applies inside its query
// (alias g): the rows of that collection, when the principal sees the collection by its owner and
// visibility (docs/security.md). Graph rows belong to the collection, not to a document, so a grant on one
// document does not open its collection's graph.
func graphScope(p rag.Principal, collectionID string) *where {
	w := &where{}
	w.add(`g.collection_id = ?`, collectionID)
	if !p.Admin {
		cols, args := visibleCollections(p)
		w.add(`g.collection_id IN (`+cols+`)`, args...)
	}
	return w
}

// in restricts column to values when values is not nil (nil: no restriction); false when values is empty,
// which nothing matches.
func (w *where) in(column string, values []string) bool {
	if values == nil {
		return true
	}
	if len(values) == 0 {
		return false
	}
	w.add(column+` IN (`+placeholders(len(values))+`)`, stringArgs(values)...)
	return true
}

// collect runs query and scans each row into a T with scan; what names the read in errors.
func collect[T any](ctx context.Context, db *sql.DB, what, query string, args []any, scan func(rows *sql.Rows, v *T) error) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, dbError(err, "%s", what)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, dbError(err, "%s", what)
		}
		out = append(out, v)
	}
	return out, dbError(rows.Err(), "%s", what)
}

// ReplaceGraph implements rag.GraphStore: it replaces the collection's bundle rows (document_id ”), not
// the rows extracted from its documents.
func (s *Store) ReplaceGraph(ctx context.Context, collectionID string, g *rag.StoredGraph) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := s.replaceGraphRows(ctx, tx, collectionID, "", g, 0); err != nil {
			return err
		}
		return nil
	})
	return dbError(err, "replace graph of collection %s", collectionID)
}

// ReplaceDocumentGraph implements rag.GraphStore.
func (s *Store) ReplaceDocumentGraph(ctx context.Context, collectionID, documentID string, g *rag.StoredGraph) error {
	if documentID == "" {
		return rag.Errorf(rag.CodeInvalid, "a document's graph needs the document's id")
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		var base int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(o), ?1 - 1) + 1 FROM (
			SELECT max(ord) AS o FROM graph_entities WHERE collection_id = ?2 AND ord >= ?1
			UNION ALL SELECT max(ord) FROM graph_relations WHERE collection_id = ?2 AND ord >= ?1
			UNION ALL SELECT max(ord) FROM graph_sections WHERE collection_id = ?2 AND ord >= ?1
			UNION ALL SELECT max(ord) FROM graph_chunks WHERE collection_id = ?2 AND ord >= ?1)`,
			rag.DocumentGraphOrd, collectionID).Scan(&base); err != nil {
			return err
		}
		var live int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM documents WHERE id = ? AND collection_id = ? AND deleted_at IS NULL`,
			documentID, collectionID).Scan(&live); err != nil {
			return err
		}
		if live == 0 {
			g = &rag.StoredGraph{} // deleted meanwhile (or never there): it contributes nothing
		}
		return s.replaceGraphRows(ctx, tx, collectionID, documentID, g, base)
	})
	return dbError(err, "replace the graph of document %s", documentID)
}

// replaceGraphRows replaces the graph rows of the collection that documentID contributed (” for the
// bundle's) with g's, numbered from ord, and bumps the graph's generation.
func (s *Store) replaceGraphRows(ctx context.Context, tx *sql.Tx, collectionID, documentID string, g *rag.StoredGraph, ord int64) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM collections WHERE id = ?`, collectionID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("collection %q: %w", collectionID, rag.ErrNotFound)
	}
	if err := dropGraphRows(ctx, tx, collectionID, documentID); err != nil {
		return err
	}
	for i, sc := range g.Sections {
		if _, err := tx.ExecContext(ctx, `INSERT INTO graph_sections (collection_id, id, ord, name, parent_id, path, level, document_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, collectionID, sc.ID, ord+int64(i), sc.Name, sc.ParentID, sc.Path, sc.Level, documentID); err != nil {
			return err
		}
	}
	for i, e := range g.Entities {
		props, err := marshalJSON(e.Properties, "{}")
		if err != nil {
			return err
		}
		var vec []byte
		if e.Vector != nil {
			vec = encodeVector(e.Vector)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO graph_entities (collection_id, id, ord, name, type, properties,
			source_section, text_hash, space, vector, document_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			collectionID, e.ID, ord+int64(i), e.Name, e.Type, props, e.SourceSection, e.TextHash, e.Space, vec, documentID); err != nil {
			return err
		}
	}
	for i, r := range g.Relations {
		props, err := marshalJSON(r.Properties, "{}")
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO graph_relations (collection_id, ord, source, target, type, properties, document_id)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, collectionID, ord+int64(i), r.Source, r.Target, r.Type, props, documentID); err != nil {
			return err
		}
	}
	for i, c := range g.Chunks {
		if _, err := tx.ExecContext(ctx, `INSERT INTO graph_chunks (collection_id, id, ord, section_id, content, document_id)
			VALUES (?, ?, ?, ?, ?, ?)`, collectionID, c.ID, ord+int64(i), c.SectionID, c.Content, documentID); err != nil {
			return err
		}
	}
	for _, p := range g.Postings {
		if _, err := tx.ExecContext(ctx, `INSERT INTO graph_terms (collection_id, term, entity_id, weight, document_id)
			VALUES (?, ?, ?, ?, ?)`, collectionID, p.Term, p.EntityID, p.Weight, documentID); err != nil {
			return err
		}
	}
	return nil
}

// dropGraphRows deletes the graph rows of the collection that documentID contributed (” for the
// bundle's) and bumps the graph's generation.
func dropGraphRows(ctx context.Context, tx *sql.Tx, collectionID, documentID string) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO graph_meta (collection_id, generation) VALUES (?, 1)
		ON CONFLICT (collection_id) DO UPDATE SET generation = generation + 1`, collectionID); err != nil {
		return err
	}
	for _, t := range []string{"graph_sections", "graph_entities", "graph_relations", "graph_chunks", "graph_terms"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE collection_id = ? AND document_id = ?`, collectionID, documentID); err != nil {
			return err
		}
	}
	return nil
}

// dropDocumentGraph deletes what a deleted document contributed to its collection's graph, if anything.
func dropDocumentGraph(ctx context.Context, tx *sql.Tx, documentID string) error {
	var coll string
	err := tx.QueryRowContext(ctx, `SELECT collection_id FROM graph_entities WHERE document_id = ? LIMIT 1`, documentID).Scan(&coll)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return dropGraphRows(ctx, tx, coll, documentID)
}

// GraphStats implements rag.GraphStore: the counts of the collection when p sees it by graphScope, else zeros.
func (s *Store) GraphStats(ctx context.Context, p rag.Principal, collectionID string) (*rag.GraphStats, error) {
	st := &rag.GraphStats{Tables: map[string]int{}}
	// scope holds the collection's ID when p sees it by graphScope (g is the collection's row), else nothing.
	w := graphScope(p, collectionID)
	scope := `WITH g AS (SELECT ? AS collection_id), scope AS (SELECT g.collection_id AS id FROM g WHERE ` + w.sql() + `) `
	args := append([]any{collectionID}, w.args...)
	err := s.r.QueryRowContext(ctx, scope+`SELECT
		(SELECT coalesce(max(generation), 0) FROM graph_meta WHERE collection_id IN (SELECT id FROM scope)),
		(SELECT count(*) FROM graph_sections WHERE collection_id IN (SELECT id FROM scope)),
		(SELECT count(*) FROM graph_entities WHERE collection_id IN (SELECT id FROM scope)),
		(SELECT count(*) FROM graph_relations WHERE collection_id IN (SELECT id FROM scope)),
		(SELECT count(*) FROM graph_chunks WHERE collection_id IN (SELECT id FROM scope)),
		(SELECT count(*) FROM graph_entities WHERE collection_id IN (SELECT id FROM scope) AND document_id <> '')`, args...).
		Scan(&st.Generation, &st.Sections, &st.Entities, &st.Relations, &st.Chunks, &st.Extracted)
	if err != nil {
		return nil, dbError(err, "graph stats")
	}
	rows, err := s.r.QueryContext(ctx, scope+`SELECT table_name, count(*) FROM record_rows WHERE collection_id IN (SELECT id FROM scope)
		GROUP BY table_name`, args...)
	if err != nil {
		return nil, dbError(err, "record table stats")
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			return nil, dbError(err, "record table stats")
		}
		st.Tables[name] = n
	}
	return st, dbError(rows.Err(), "record table stats")
}

// GraphVectors implements rag.GraphStore.
func (s *Store) GraphVectors(ctx context.Context, p rag.Principal, collectionID string, space rag.Space) ([]rag.GraphEntity, error) {
	w := graphScope(p, collectionID)
	w.add(`g.space = ? AND g.vector IS NOT NULL`, space.ID())
	return collect(ctx, s.r, "graph vectors", `SELECT g.id, g.name, g.type, g.vector FROM graph_entities g WHERE `+w.sql()+` ORDER BY g.ord`, w.args,
		func(rows *sql.Rows, e *rag.GraphEntity) error {
			var raw []byte
			err := rows.Scan(&e.ID, &e.Name, &e.Type, &raw)
			e.Vector, e.Space = decodeVector(nil, raw), space.ID()
			return err
		})
}

// GraphPostings implements rag.GraphStore. nil terms returns every posting.
func (s *Store) GraphPostings(ctx context.Context, p rag.Principal, collectionID string, terms []string) ([]rag.GraphPosting, int, error) {
	w := graphScope(p, collectionID)
	if !w.in(`g.term`, terms) {
		return nil, 0, nil
	}
	var total int
	all := graphScope(p, collectionID)
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM graph_entities g WHERE `+all.sql(), all.args...).Scan(&total); err != nil {
		return nil, 0, dbError(err, "graph postings")
	}
	out, err := collect(ctx, s.r, "graph postings", `SELECT g.entity_id, g.term, g.weight FROM graph_terms g WHERE `+w.sql()+
		` ORDER BY g.term, g.entity_id`, w.args, func(rows *sql.Rows, gp *rag.GraphPosting) error {
		return rows.Scan(&gp.EntityID, &gp.Term, &gp.Weight)
	})
	return out, total, err
}

// GraphEntities implements rag.GraphStore. nil ids returns every entity.
func (s *Store) GraphEntities(ctx context.Context, p rag.Principal, collectionID string, ids []string) ([]rag.GraphEntity, error) {
	w := graphScope(p, collectionID)
	if !w.in(`g.id`, ids) {
		return nil, nil
	}
	return collect(ctx, s.r, "graph entities", `SELECT g.id, g.name, g.type, g.properties, g.source_section, g.text_hash, g.space, g.document_id
		FROM graph_entities g WHERE `+w.sql()+` ORDER BY g.ord`, w.args, func(rows *sql.Rows, e *rag.GraphEntity) error {
		var props string
		if err := rows.Scan(&e.ID, &e.Name, &e.Type, &props, &e.SourceSection, &e.TextHash, &e.Space, &e.DocumentID); err != nil {
			return err
		}
		var err error
		e.Properties, err = unmarshalMap(props)
		return err
	})
}

// GraphEdges implements rag.GraphStore. nil ids returns every relation.
func (s *Store) GraphEdges(ctx context.Context, p rag.Principal, collectionID string, ids []string) ([]rag.GraphRelation, error) {
	w := graphScope(p, collectionID)
	if ids != nil {
		if len(ids) == 0 {
			return nil, nil
		}
		n := placeholders(len(ids))
		w.add(`g.source IN (`+n+`) OR g.target IN (`+n+`)`, append(stringArgs(ids), stringArgs(ids)...)...)
	}
	return collect(ctx, s.r, "graph relations", `SELECT g.source, g.target, g.type, g.properties, g.document_id FROM graph_relations g WHERE `+w.sql()+
		` ORDER BY g.ord`, w.args, func(rows *sql.Rows, r *rag.GraphRelation) error {
		var props string
		if err := rows.Scan(&r.Source, &r.Target, &r.Type, &props, &r.DocumentID); err != nil {
			return err
		}
		var err error
		r.Properties, err = unmarshalMap(props)
		return err
	})
}

// GraphSections implements rag.GraphStore. nil ids returns every section.
func (s *Store) GraphSections(ctx context.Context, p rag.Principal, collectionID string, ids []string) ([]rag.GraphSection, error) {
	w := graphScope(p, collectionID)
	if !w.in(`g.id`, ids) {
		return nil, nil
	}
	return collect(ctx, s.r, "graph sections", `SELECT g.id, g.name, g.parent_id, g.path, g.level, g.document_id FROM graph_sections g WHERE `+w.sql()+
		` ORDER BY g.ord`, w.args, func(rows *sql.Rows, sc *rag.GraphSection) error {
		return rows.Scan(&sc.ID, &sc.Name, &sc.ParentID, &sc.Path, &sc.Level, &sc.DocumentID)
	})
}

// GraphChunks implements rag.GraphStore. nil sectionIDs returns every passage.
func (s *Store) GraphChunks(ctx context.Context, p rag.Principal, collectionID string, sectionIDs []string) ([]rag.GraphChunk, error) {
	w := graphScope(p, collectionID)
	if !w.in(`g.section_id`, sectionIDs) {
		return nil, nil
	}
	return collect(ctx, s.r, "graph chunks", `SELECT g.id, g.section_id, g.content, g.document_id FROM graph_chunks g WHERE `+w.sql()+
		` ORDER BY g.ord`, w.args, func(rows *sql.Rows, c *rag.GraphChunk) error {
		return rows.Scan(&c.ID, &c.SectionID, &c.Content, &c.DocumentID)
	})
}

// ReplaceRecords implements rag.GraphStore.
func (s *Store) ReplaceRecords(ctx context.Context, collectionID, table string, rows []rag.Record) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM collections WHERE id = ?`, collectionID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("collection %q: %w", collectionID, rag.ErrNotFound)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM record_rows WHERE collection_id = ? AND table_name = ?`, collectionID, table); err != nil {
			return err
		}
		for i, r := range rows {
			vals, err := marshalJSON(r.Values, "{}")
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO record_rows (collection_id, table_name, ord, key, norm_key, variant, vals)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, collectionID, table, i, r.Key, r.NormKey, r.Variant, vals); err != nil {
				return err
			}
		}
		return nil
	})
	return dbError(err, "replace record table %s", table)
}

// Records implements rag.GraphStore. nil keys returns every row.
func (s *Store) Records(ctx context.Context, p rag.Principal, collectionID, table string, keys []string) ([]rag.Record, error) {
	w := graphScope(p, collectionID)
	w.add(`g.table_name = ?`, table)
	if !w.in(`g.norm_key`, keys) {
		return nil, nil
	}
	return collect(ctx, s.r, "records", `SELECT g.key, g.norm_key, g.variant, g.vals FROM record_rows g WHERE `+w.sql()+
		` ORDER BY g.ord`, w.args, func(rows *sql.Rows, r *rag.Record) error {
		var vals string
		if err := rows.Scan(&r.Key, &r.NormKey, &r.Variant, &vals); err != nil {
			return err
		}
		var err error
		r.Values, err = unmarshalMap(vals)
		return err
	})
}

// CollectionState implements rag.CollectionStateStore.
func (s *Store) CollectionState(ctx context.Context, p rag.Principal, collection string) (rag.CollectionState, error) {
	var w where
	w.add(live)
	w.visible(p)
	if err := w.filter(rag.Filter{Collections: []string{collection}}); err != nil {
		return rag.CollectionState{}, err
	}
	var st rag.CollectionState
	var last sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT count(*), max(d.updated_at),
		(SELECT coalesce(max(m.generation), 0) FROM graph_meta m WHERE m.collection_id IN
			(SELECT c.id FROM collections c WHERE c.id = ? OR c.name = ?))
		FROM documents d WHERE `+w.sql(), append([]any{collection, collection}, w.args...)...).Scan(&st.Documents, &last, &st.GraphGeneration)
	if err != nil {
		return rag.CollectionState{}, dbError(err, "collection state")
	}
	if last.Valid {
		st.LastUpdate = time.UnixMicro(last.Int64)
	}
	return st, nil
}
