-- The bytes whose processing failed last, kept so that POST /api/documents/{id}/retry can process them again.
ALTER TABLE {S}.documents ADD COLUMN failed_hash text NOT NULL DEFAULT '';
