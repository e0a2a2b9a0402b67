-- The OCR engine's confidence in a chunk read from page images (docs/retrieval.md "OCR"); NULL for text
-- from a text layer.
ALTER TABLE {S}.chunks ADD COLUMN ocr_confidence real;
