// Package extract turns the bytes of a file into ragd's extracted form (rag.Extracted): blocks of text in
// reading order — paragraphs, headings with levels, tables with their rows, code — with 1-based page
// numbers for PDFs (and for HWP/HWPX from the layout they record, slide numbers for PPTX). It implements
// rag.Extractor for PDF (PDFium compiled to WebAssembly, pure Go), DOCX, HWPX and HWP 5.0 (Hancom Office),
// XLSX (a section per sheet, rows as "header: value" lines), PPTX (a section per slide, notes included),
// HTML, Markdown/MDX, plain text and source code.
//
// Every block's text is NFKC-normalised through textproc.Normalize (code keeps its indentation), and the
// three middle dots of Korean documents (U+00B7, U+318D, U+2027) become one (U+00B7) so that 탄소중립ㆍ녹색성장
// and 탄소중립·녹색성장 index alike.
//
// PDF pages are laid out from character boxes rather than taken in content-stream order: characters are
// grouped into lines, lines into columns (multi-column prose is read column by column, tables row by row),
// running headers and footers are dropped, and lines that a word processor wrapped in the middle of a Korean
// word are joined again, deciding join or space from how the document itself spaces the two syllables.
package extract
