-- The passages a board question matched when it was embedded (docs/qa.md "Similar questions"): a JSON list
-- of {"chunk_id", "document_id"}, best first. NULL for questions embedded before it was kept, which the
-- answer job's backfill embeds again.
ALTER TABLE {S}.questions ADD COLUMN passages jsonb;
