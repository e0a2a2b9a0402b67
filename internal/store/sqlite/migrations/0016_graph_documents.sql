-- Graph rows extracted from a collection's documents (docs/graph.md, "Extraction from documents"): each
-- carries the document it came from, so that a new version of that document replaces only its own rows and a
-- deleted document takes them away. Rows of an imported bundle have document_id ''; a bundle import
-- replaces only those.
ALTER TABLE graph_sections ADD COLUMN document_id TEXT NOT NULL DEFAULT '';
ALTER TABLE graph_entities ADD COLUMN document_id TEXT NOT NULL DEFAULT '';
ALTER TABLE graph_relations ADD COLUMN document_id TEXT NOT NULL DEFAULT '';
ALTER TABLE graph_chunks ADD COLUMN document_id TEXT NOT NULL DEFAULT '';
ALTER TABLE graph_terms ADD COLUMN document_id TEXT NOT NULL DEFAULT '';
CREATE INDEX graph_entities_document ON graph_entities (collection_id, document_id);
CREATE INDEX graph_relations_document ON graph_relations (collection_id, document_id);
