-- The bytes whose processing failed last, kept so that POST /api/documents/{id}/retry can process them again.
ALTER TABLE documents ADD COLUMN failed_hash TEXT NOT NULL DEFAULT '';
