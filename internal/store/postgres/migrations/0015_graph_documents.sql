-- Graph rows extracted from a collection's documents (docs/graph.md, "Extraction from documents"): each
-- carries the document it came from, so that a new version of that document replaces only its own rows and a
-- deleted document takes them away. Rows of an imported bundle have document_id ''; a bundle import
-- replaces only those.
ALTER TABLE {S}.graph_sections ADD COLUMN document_id text NOT NULL DEFAULT '';
ALTER TABLE {S}.graph_entities ADD COLUMN document_id text NOT NULL DEFAULT '';
ALTER TABLE {S}.graph_relations ADD COLUMN document_id text NOT NULL DEFAULT '';
ALTER TABLE {S}.graph_chunks ADD COLUMN document_id text NOT NULL DEFAULT '';
ALTER TABLE {S}.graph_terms ADD COLUMN document_id text NOT NULL DEFAULT '';
CREATE INDEX graph_entities_document_idx ON {S}.graph_entities (collection_id, document_id);
CREATE INDEX graph_relations_document_idx ON {S}.graph_relations (collection_id, document_id);
