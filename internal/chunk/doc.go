// Package chunk cuts extracted documents into retrievable chunks.
//
// Text (paragraphs and headings) is cut at sentence ends (Korean and English, see Sentences) into chunks of at
// most Options.Size characters; when a section is longer than a chunk, the next chunk repeats the last whole
// sentences of the previous one, up to Options.Overlap characters. Only a sentence longer than a chunk is cut
// inside, at word boundaries. A heading at the document's top level always starts a new chunk; a deeper one
// does too unless the chunk so far is shorter than Options.MinSection, so that small sections merge with
// their neighbours (the chunk's section is then the path the merged sections share). A chunk may span a page
// break; its page span says so. A chunk at least half full ends at a page break, and so does the first page
// of a paged document, however short: a title page is a passage of its own.
//
// Tables and code blocks become chunks of their own kind, but for a caption: text of at most 250 characters
// (with the headings above it) before a table, on the table's page, joins the table's chunk when both fit in
// one ("Simple uniform table" and its table, "다음 서류를 제출합니다." and the list of documents), a text chunk
// then; a caption alone is no passage to find or answer from. A table that fits stays whole; a longer one is cut
// into pieces of whole rows, each starting with the header row(s), so a row is never read without its
// header. Code is cut at blank lines and before declarations at the left margin.
//
// Offsets are rune offsets in DocText (the blocks' texts joined by a blank line). A text or code chunk's Text
// is exactly the document text between its offsets; a table piece's Text is its header plus the rows its
// offsets cover.
package chunk
