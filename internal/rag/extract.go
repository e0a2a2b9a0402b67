package rag

import "context"

// DefaultMaxUploadBytes is the default size limit of one file (50 MiB): the configuration's default
// (RAGD_MAX_UPLOAD_BYTES), and the extractor's and ingestion pipeline's when given none.
const DefaultMaxUploadBytes = 50 << 20

// BlockKind says what an extracted block is.
type BlockKind string

// Block kinds.
const (
	BlockParagraph BlockKind = "paragraph"
	BlockHeading   BlockKind = "heading"
	BlockTable     BlockKind = "table"
	BlockCode      BlockKind = "code"
)

// Block is one unit of extracted text in reading order. Text is NFKC-normalised.
type Block struct {
	Kind BlockKind `json:"kind"`
	// Page is the 1-based page the block starts on; 0 for formats without pages.
	Page int `json:"page"`
	// PageTurns say where a paragraph that runs on across a page break ("… takeoff from Soekarno-" |
	// "Hatta International Airport …") goes on to a later page: Offset is a rune offset in Text.
	PageTurns []PageBreak `json:"page_turns,omitempty"`
	// Level is the heading level (1 = top) for headings; 0 otherwise.
	Level int `json:"level,omitempty"`
	// Text is the block's text. For tables it is the markdown rendering of Rows (header first).
	Text string `json:"text"`
	// Rows holds a table's cells, row by row; Rows[0] is the header row when HeaderRows ≥ 1.
	Rows       [][]string `json:"rows,omitempty"`
	HeaderRows int        `json:"header_rows,omitempty"`
	// Symbol is the declaration a block of source code holds, outermost first and joined by dots
	// ("extract.Extractor.Extract" in Go, "Parser.parse" elsewhere); "" when unknown.
	Symbol string `json:"symbol,omitempty"`
	// Line is the 1-based source line a block of source code starts on; 0 when unknown.
	Line int `json:"line,omitempty"`
	// OCR marks a block read from a page image by OCR (no text layer); OCRConfidence is the OCR engine's
	// confidence in it, 0 to 1.
	OCR           bool    `json:"ocr,omitempty"`
	OCRConfidence float64 `json:"ocr_confidence,omitempty"`
}

// PageFailure is a page of a document that could not be read (OCR failed on it) while the rest was.
type PageFailure struct {
	Page  int    `json:"page"`
	Error string `json:"error"`
}

// Extracted is the text of a file in reading order.
type Extracted struct {
	// Title found in the file (PDF info, DOCX core properties, HTML <title>, first markdown H1); may be "".
	Title     string  `json:"title,omitempty"`
	MediaType string  `json:"media_type"`
	Pages     int     `json:"pages,omitempty"` // number of pages, for paged formats
	Blocks    []Block `json:"blocks"`
	// FailedPages are the pages left out because they could not be read; the document is the other pages.
	FailedPages []PageFailure `json:"failed_pages,omitempty"`
}

// Extractor turns a file's bytes into blocks. name is the file name (its extension helps detection).
// Errors carry CodeUnsupportedMediaType (unknown type), CodePayloadTooLarge, CodeTooLarge or CodeTooComplex
// (over a budget of the extraction: the message names the limit), or CodeInvalid (empty, corrupt, encrypted,
// undecodable text, no text layer: the message names the reason).
type Extractor interface {
	Extract(ctx context.Context, name string, data []byte) (*Extracted, error)
}
