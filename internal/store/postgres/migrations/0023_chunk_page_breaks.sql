-- Where a chunk that crosses pages turns each page ("offset:page" pairs, rag.EncodePageBreaks), so that a
-- cited sentence gives its own page; '' for a chunk on one page.
ALTER TABLE {S}.chunks ADD COLUMN page_breaks text NOT NULL DEFAULT '';
