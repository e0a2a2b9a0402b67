package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

var _ rag.GraphStore = (*Store)(nil)

// graphScope returns the conditions every read of a collection's graph or record tables applies inside its
// query (alias g): the rows of that collection, when the principal sees the collection by its owner and
// visibility (docs/security.md). Graph rows belong to the collection, not to a document, so a grant on one
// document does not open its collection's graph.
func graphScope(a *args, p rag.Principal, collectionID string) []string {
	w := []string{"g.collection_id = " + a.add(collectionID)}
	if !unrestricted(p) {
		w = append(w, "g.collection_id IN ("+visibleCollections(a, p)+")")
	}
	return w
}

// collect runs query as p's read (under row security when it is on) and scans each row with scan; what
// names the read in errors.
func collect[T any](ctx context.Context, s *Store, p rag.Principal, what, query string, a args, scan func(r pgx.CollectableRow) (T, error)) ([]T, error) {
	var out []T
	err := s.read(ctx, p, func(db querier) error {
		rows, err := db.Query(ctx, s.q(query), a...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scan)
		return err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("%s: %w", what, err))
	}
	return out, nil
}

// anyOf restricts column to values when values is not nil (nil: no restriction); false when values is
// empty, which nothing matches.
func anyOf(a *args, w *[]string, column string, values []string) bool {
	if values == nil {
		return true
	}
	if len(values) == 0 {
		return false
	}
	*w = append(*w, column+" = ANY("+a.add(values)+"::text[])")
	return true
}

// ReplaceGraph implements rag.GraphStore: it replaces the collection's bundle rows (document_id ”), not
// the rows extracted from its documents.
func (s *Store) ReplaceGraph(ctx context.Context, collectionID string, g *rag.StoredGraph) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		return s.replaceGraphRows(ctx, tx, collectionID, "", g, false)
	})
	if err != nil {
		return fmt.Errorf("replace graph of collection %s: %w", collectionID, interpretError(err))
	}
	return nil
}

// ReplaceDocumentGraph implements rag.GraphStore.
func (s *Store) ReplaceDocumentGraph(ctx context.Context, collectionID, documentID string, g *rag.StoredGraph) error {
	if documentID == "" {
		return rag.Errorf(rag.CodeInvalid, "a document's graph needs the document's id")
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		return s.replaceGraphRows(ctx, tx, collectionID, documentID, g, true)
	})
	if err != nil {
		return fmt.Errorf("replace the graph of document %s: %w", documentID, interpretError(err))
	}
	return nil
}

// replaceGraphRows replaces the graph rows of the collection that documentID contributed (” for the
// bundle's) with g's and bumps the graph's generation. A document's rows are numbered after every row
// extracted before (from rag.DocumentGraphOrd), a bundle's from 0.
func (s *Store) replaceGraphRows(ctx context.Context, tx pgx.Tx, collectionID, documentID string, g *rag.StoredGraph, extracted bool) error {
	if err := s.lockCollection(ctx, tx, collectionID); err != nil {
		return err
	}
	var ord int64
	if extracted {
		if err := tx.QueryRow(ctx, s.q(`SELECT coalesce(max(o), $1 - 1) + 1 FROM (
			SELECT max(ord) AS o FROM {S}.graph_entities WHERE collection_id = $2 AND ord >= $1
			UNION ALL SELECT max(ord) FROM {S}.graph_relations WHERE collection_id = $2 AND ord >= $1
			UNION ALL SELECT max(ord) FROM {S}.graph_sections WHERE collection_id = $2 AND ord >= $1
			UNION ALL SELECT max(ord) FROM {S}.graph_chunks WHERE collection_id = $2 AND ord >= $1) m`),
			int64(rag.DocumentGraphOrd), collectionID).Scan(&ord); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, s.q(`SELECT count(*) FROM {S}.documents d WHERE d.id = $1 AND d.collection_id = $2 AND `+live),
			documentID, collectionID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			g = &rag.StoredGraph{} // deleted meanwhile (or never there): it contributes nothing
		}
	}
	b := &pgx.Batch{}
	s.queueDropGraphRows(b, collectionID, documentID)
	for i, sc := range g.Sections {
		b.Queue(s.q(`INSERT INTO {S}.graph_sections (collection_id, id, ord, name, parent_id, path, level, document_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`), collectionID, sc.ID, ord+int64(i), sc.Name, sc.ParentID, sc.Path, sc.Level, documentID)
	}
	for i, e := range g.Entities {
		b.Queue(s.q(`INSERT INTO {S}.graph_entities (collection_id, id, ord, name, type, properties, source_section,
			text_hash, space, vector, document_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`),
			collectionID, e.ID, ord+int64(i), e.Name, e.Type, jsonObject(e.Properties), e.SourceSection, e.TextHash, e.Space, e.Vector, documentID)
	}
	for i, r := range g.Relations {
		b.Queue(s.q(`INSERT INTO {S}.graph_relations (collection_id, ord, source, target, type, properties, document_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`), collectionID, ord+int64(i), r.Source, r.Target, r.Type, jsonObject(r.Properties), documentID)
	}
	for i, c := range g.Chunks {
		b.Queue(s.q(`INSERT INTO {S}.graph_chunks (collection_id, id, ord, section_id, content, document_id)
			VALUES ($1, $2, $3, $4, $5, $6)`), collectionID, c.ID, ord+int64(i), c.SectionID, c.Content, documentID)
	}
	for _, p := range g.Postings {
		b.Queue(s.q(`INSERT INTO {S}.graph_terms (collection_id, term, entity_id, weight, document_id) VALUES ($1, $2, $3, $4, $5)`),
			collectionID, p.Term, p.EntityID, p.Weight, documentID)
	}
	return tx.SendBatch(ctx, b).Close()
}

// queueDropGraphRows queues the deletion of the graph rows of the collection that documentID contributed
// (” for the bundle's) and the bump of the graph's generation.
func (s *Store) queueDropGraphRows(b *pgx.Batch, collectionID, documentID string) {
	b.Queue(s.q(`INSERT INTO {S}.graph_meta (collection_id, generation) VALUES ($1, 1)
		ON CONFLICT (collection_id) DO UPDATE SET generation = {S}.graph_meta.generation + 1`), collectionID)
	for _, t := range []string{"graph_sections", "graph_entities", "graph_relations", "graph_chunks", "graph_terms"} {
		b.Queue(s.q(`DELETE FROM {S}.`+t+` WHERE collection_id = $1 AND document_id = $2`), collectionID, documentID)
	}
}

// dropDocumentGraph deletes what a deleted document contributed to its collection's graph, if anything.
func (s *Store) dropDocumentGraph(ctx context.Context, tx pgx.Tx, documentID string) error {
	var coll string
	err := tx.QueryRow(ctx, s.q(`SELECT collection_id FROM {S}.graph_entities WHERE document_id = $1 LIMIT 1`), documentID).Scan(&coll)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	s.queueDropGraphRows(b, coll, documentID)
	return tx.SendBatch(ctx, b).Close()
}

// lockCollection locks the collection's row for the transaction, so that replacements of its graph or
// tables queue; ErrNotFound when it does not exist.
func (s *Store) lockCollection(ctx context.Context, tx pgx.Tx, collectionID string) error {
	var id string
	err := tx.QueryRow(ctx, s.q(`SELECT id FROM {S}.collections WHERE id = $1 FOR UPDATE`), collectionID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("collection %q: %w", collectionID, rag.ErrNotFound)
	}
	return err
}

// jsonObject is m for a jsonb column: an empty object rather than null.
func jsonObject(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// emptyNil is nil for an empty map, as the SQLite store reads "{}" back.
func emptyNil(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// GraphStats implements rag.GraphStore: each count is the graph scope's (as p sees the collection), read
// as p (under row security when it is on).
func (s *Store) GraphStats(ctx context.Context, p rag.Principal, collectionID string) (*rag.GraphStats, error) {
	st := &rag.GraphStats{Tables: map[string]int{}}
	var a args
	scope := where(graphScope(&a, p, collectionID))
	err := s.read(ctx, p, func(db querier) error {
		err := db.QueryRow(ctx, s.q(`SELECT
		(SELECT coalesce(max(generation), 0) FROM {S}.graph_meta g WHERE `+scope+`),
		(SELECT count(*) FROM {S}.graph_sections g WHERE `+scope+`),
		(SELECT count(*) FROM {S}.graph_entities g WHERE `+scope+`),
		(SELECT count(*) FROM {S}.graph_relations g WHERE `+scope+`),
		(SELECT count(*) FROM {S}.graph_chunks g WHERE `+scope+`),
		(SELECT count(*) FROM {S}.graph_entities g WHERE `+scope+` AND g.document_id <> '')`), a...).
			Scan(&st.Generation, &st.Sections, &st.Entities, &st.Relations, &st.Chunks, &st.Extracted)
		if err != nil {
			return fmt.Errorf("graph stats: %w", err)
		}
		rows, err := db.Query(ctx, s.q(`SELECT g.table_name, count(*) FROM {S}.record_rows g WHERE `+scope+` GROUP BY g.table_name`), a...)
		if err != nil {
			return fmt.Errorf("record table stats: %w", err)
		}
		var name string
		var n int
		_, err = pgx.ForEachRow(rows, []any{&name, &n}, func() error {
			st.Tables[name] = n
			return nil
		})
		if err != nil {
			return fmt.Errorf("record table stats: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return st, nil
}

// GraphVectors implements rag.GraphStore.
func (s *Store) GraphVectors(ctx context.Context, p rag.Principal, collectionID string, space rag.Space) ([]rag.GraphEntity, error) {
	var a args
	w := append(graphScope(&a, p, collectionID), "g.space = "+a.add(space.ID()), "g.vector IS NOT NULL")
	return collect(ctx, s, p, "graph vectors", `SELECT g.id, g.name, g.type, g.vector FROM {S}.graph_entities g WHERE `+where(w)+` ORDER BY g.ord`, a, func(r pgx.CollectableRow) (rag.GraphEntity, error) {
		e := rag.GraphEntity{Space: space.ID()}
		err := r.Scan(&e.ID, &e.Name, &e.Type, &e.Vector)
		return e, err
	})
}

// GraphPostings implements rag.GraphStore. nil terms returns every posting.
func (s *Store) GraphPostings(ctx context.Context, p rag.Principal, collectionID string, terms []string) ([]rag.GraphPosting, int, error) {
	var a args
	w := graphScope(&a, p, collectionID)
	if !anyOf(&a, &w, "g.term", terms) {
		return nil, 0, nil
	}
	var total int
	var ca args
	all := graphScope(&ca, p, collectionID)
	var out []rag.GraphPosting
	err := s.read(ctx, p, func(db querier) error {
		if err := db.QueryRow(ctx, s.q(`SELECT count(*) FROM {S}.graph_entities g WHERE `+where(all)), ca...).Scan(&total); err != nil {
			return err
		}
		rows, err := db.Query(ctx, s.q(`SELECT g.entity_id, g.term, g.weight FROM {S}.graph_terms g WHERE `+where(w)+
			` ORDER BY g.term COLLATE "C", g.entity_id COLLATE "C"`), a...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (rag.GraphPosting, error) {
			var gp rag.GraphPosting
			err := r.Scan(&gp.EntityID, &gp.Term, &gp.Weight)
			return gp, err
		})
		return err
	})
	if err != nil {
		return nil, 0, interpretError(fmt.Errorf("graph postings: %w", err))
	}
	return out, total, nil
}

// GraphEntities implements rag.GraphStore. nil ids returns every entity.
func (s *Store) GraphEntities(ctx context.Context, p rag.Principal, collectionID string, ids []string) ([]rag.GraphEntity, error) {
	var a args
	w := graphScope(&a, p, collectionID)
	if !anyOf(&a, &w, "g.id", ids) {
		return nil, nil
	}
	return collect(ctx, s, p, "graph entities", `SELECT g.id, g.name, g.type, g.properties, g.source_section, g.text_hash, g.space, g.document_id
		FROM {S}.graph_entities g WHERE `+where(w)+` ORDER BY g.ord`, a, func(r pgx.CollectableRow) (rag.GraphEntity, error) {
		var e rag.GraphEntity
		err := r.Scan(&e.ID, &e.Name, &e.Type, &e.Properties, &e.SourceSection, &e.TextHash, &e.Space, &e.DocumentID)
		e.Properties = emptyNil(e.Properties)
		return e, err
	})
}

// GraphEdges implements rag.GraphStore. nil ids returns every relation.
func (s *Store) GraphEdges(ctx context.Context, p rag.Principal, collectionID string, ids []string) ([]rag.GraphRelation, error) {
	var a args
	w := graphScope(&a, p, collectionID)
	if ids != nil {
		if len(ids) == 0 {
			return nil, nil
		}
		ph := a.add(ids)
		w = append(w, "(g.source = ANY("+ph+"::text[]) OR g.target = ANY("+ph+"::text[]))")
	}
	return collect(ctx, s, p, "graph relations", `SELECT g.source, g.target, g.type, g.properties, g.document_id FROM {S}.graph_relations g WHERE `+where(w)+
		` ORDER BY g.ord`, a, func(r pgx.CollectableRow) (rag.GraphRelation, error) {
		var rel rag.GraphRelation
		err := r.Scan(&rel.Source, &rel.Target, &rel.Type, &rel.Properties, &rel.DocumentID)
		rel.Properties = emptyNil(rel.Properties)
		return rel, err
	})
}

// GraphSections implements rag.GraphStore. nil ids returns every section.
func (s *Store) GraphSections(ctx context.Context, p rag.Principal, collectionID string, ids []string) ([]rag.GraphSection, error) {
	var a args
	w := graphScope(&a, p, collectionID)
	if !anyOf(&a, &w, "g.id", ids) {
		return nil, nil
	}
	return collect(ctx, s, p, "graph sections", `SELECT g.id, g.name, g.parent_id, g.path, g.level, g.document_id FROM {S}.graph_sections g WHERE `+where(w)+
		` ORDER BY g.ord`, a, func(r pgx.CollectableRow) (rag.GraphSection, error) {
		var sc rag.GraphSection
		err := r.Scan(&sc.ID, &sc.Name, &sc.ParentID, &sc.Path, &sc.Level, &sc.DocumentID)
		return sc, err
	})
}

// GraphChunks implements rag.GraphStore. nil sectionIDs returns every passage.
func (s *Store) GraphChunks(ctx context.Context, p rag.Principal, collectionID string, sectionIDs []string) ([]rag.GraphChunk, error) {
	var a args
	w := graphScope(&a, p, collectionID)
	if !anyOf(&a, &w, "g.section_id", sectionIDs) {
		return nil, nil
	}
	return collect(ctx, s, p, "graph chunks", `SELECT g.id, g.section_id, g.content, g.document_id FROM {S}.graph_chunks g WHERE `+where(w)+
		` ORDER BY g.ord`, a, func(r pgx.CollectableRow) (rag.GraphChunk, error) {
		var c rag.GraphChunk
		err := r.Scan(&c.ID, &c.SectionID, &c.Content, &c.DocumentID)
		return c, err
	})
}

// ReplaceRecords implements rag.GraphStore.
func (s *Store) ReplaceRecords(ctx context.Context, collectionID, table string, rows []rag.Record) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := s.lockCollection(ctx, tx, collectionID); err != nil {
			return err
		}
		b := &pgx.Batch{}
		b.Queue(s.q(`DELETE FROM {S}.record_rows WHERE collection_id = $1 AND table_name = $2`), collectionID, table)
		for i, r := range rows {
			b.Queue(s.q(`INSERT INTO {S}.record_rows (collection_id, table_name, ord, key, norm_key, variant, vals)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`), collectionID, table, i, r.Key, r.NormKey, r.Variant, jsonObject(r.Values))
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("replace record table %s: %w", table, interpretError(err))
	}
	return nil
}

// Records implements rag.GraphStore. nil keys returns every row.
func (s *Store) Records(ctx context.Context, p rag.Principal, collectionID, table string, keys []string) ([]rag.Record, error) {
	var a args
	w := append(graphScope(&a, p, collectionID), "g.table_name = "+a.add(table))
	if !anyOf(&a, &w, "g.norm_key", keys) {
		return nil, nil
	}
	return collect(ctx, s, p, "records", `SELECT g.key, g.norm_key, g.variant, g.vals FROM {S}.record_rows g WHERE `+where(w)+
		` ORDER BY g.ord`, a, func(r pgx.CollectableRow) (rag.Record, error) {
		var rec rag.Record
		err := r.Scan(&rec.Key, &rec.NormKey, &rec.Variant, &rec.Values)
		rec.Values = emptyNil(rec.Values)
		return rec, err
	})
}

// CollectionState implements rag.CollectionStateStore.
func (s *Store) CollectionState(ctx context.Context, p rag.Principal, collection string) (rag.CollectionState, error) {
	var a args
	ph := a.add(collection)
	conds, err := docConditions(&a, p, rag.Filter{Collections: []string{collection}})
	if err != nil {
		return rag.CollectionState{}, err
	}
	conds = append(conds, live)
	var st rag.CollectionState
	var last *time.Time
	err = s.read(ctx, p, func(db querier) error {
		return db.QueryRow(ctx, s.q(`SELECT count(*), max(d.updated_at),
			(SELECT coalesce(max(m.generation), 0) FROM {S}.graph_meta m WHERE m.collection_id IN
				(SELECT c.id FROM {S}.collections c WHERE c.id = `+ph+` OR c.name = `+ph+`))
			FROM {S}.documents d WHERE `+where(conds)), a...).Scan(&st.Documents, &last, &st.GraphGeneration)
	})
	if err != nil {
		return rag.CollectionState{}, interpretError(fmt.Errorf("collection state: %w", err))
	}
	if last != nil {
		st.LastUpdate = *last
	}
	return st, nil
}
