-- Where a chunk that crosses pages turns each page ("offset:page" pairs, rag.EncodePageBreaks), so that a
-- cited sentence gives its own page; '' for a chunk on one page.
ALTER TABLE chunks ADD COLUMN page_breaks TEXT NOT NULL DEFAULT '';
