package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// Limits are the budgets of one extraction. A document over one fails with too_large or too_complex and a
// message that names the limit and the setting that raises it; it is never retried. The zero value means
// the defaults.
type Limits struct {
	// MaxMemberBytes bounds the bytes inflated from any one member of an archive (DOCX); default 64 MiB
	// (an 872-page handbook's document.xml is 5 MiB). RAGD_MAX_MEMBER_BYTES.
	MaxMemberBytes int64
	// MaxInflatedBytes bounds the bytes inflated from all the members an extraction reads; default 128 MiB.
	// RAGD_MAX_INFLATED_BYTES.
	MaxInflatedBytes int64
	// MaxDepth bounds the nesting of XML and HTML elements and of Markdown blocks; default 128 (a real
	// DOCX nests about 12 deep). RAGD_MAX_DEPTH.
	MaxDepth int
	// MaxXMLElements bounds the elements read from the XML parts of one document; default 5,000,000 (the
	// 872-page handbook has 100,000). RAGD_MAX_XML_ELEMENTS.
	MaxXMLElements int
	// MaxPages bounds the pages of a paged document (PDF); default 10,000. RAGD_MAX_PAGES.
	MaxPages int
	// MaxChars bounds the characters of text extracted from one document; default 8,000,000 (the handbook
	// has 810,000). RAGD_MAX_CHARS.
	MaxChars int
	// Timeout bounds the wall time of one extraction, of any format; default 2 minutes.
	// RAGD_EXTRACT_TIMEOUT.
	Timeout time.Duration
}

// Default budgets.
const (
	DefaultMaxMemberBytes   = 64 << 20
	DefaultMaxInflatedBytes = 128 << 20
	DefaultMaxDepth         = 128
	DefaultMaxXMLElements   = 5_000_000
	DefaultMaxPages         = 10_000
	DefaultMaxChars         = 8_000_000
	DefaultTimeout          = 2 * time.Minute
)

// WithDefaults returns l with zero (or negative) fields set to their defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxMemberBytes <= 0 {
		l.MaxMemberBytes = DefaultMaxMemberBytes
	}
	if l.MaxInflatedBytes <= 0 {
		l.MaxInflatedBytes = DefaultMaxInflatedBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxXMLElements <= 0 {
		l.MaxXMLElements = DefaultMaxXMLElements
	}
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultMaxPages
	}
	if l.MaxChars <= 0 {
		l.MaxChars = DefaultMaxChars
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}

// budget counts what one extraction has used against its Limits. It is not safe for concurrent use: one
// extraction runs in one goroutine. The first limit crossed is kept in err; later calls keep failing.
type budget struct {
	ctx      context.Context // the extraction's: the caller's, with the time limit
	caller   context.Context // the caller's alone
	lim      Limits
	name     string
	inflated int64
	elements int
	chars    int
	raw      int
	ticks    int
	// pdfMemory is the PDFium memory limit, for messages.
	pdfMemory int64
	err       error
	// cancels release the contexts that replaced ctx (OCR pauses the extraction's own limit).
	cancels []context.CancelFunc
}

func newBudget(ctx context.Context, name string, lim Limits) *budget {
	return &budget{ctx: ctx, lim: lim, name: name}
}

// errOverBudget marks the error of a budget so that callers that wrap errors (XML decoding) can find it.
var errOverBudget = errors.New("over budget")

func (b *budget) fail(code rag.Code, format string, args ...any) error {
	if b.err == nil {
		b.err = &rag.Error{Code: code, Message: b.name + ": " + fmt.Sprintf(format, args...), Err: errOverBudget}
	}
	return b.err
}

// check returns the budget's error, or the context's (the extraction's time limit or a cancellation) —
// looked at every 1024 calls, so it can sit in inner loops.
func (b *budget) check() error {
	if b == nil {
		return nil
	}
	if b.err != nil {
		return b.err
	}
	b.ticks++
	if b.ticks&1023 == 0 {
		if err := b.ctx.Err(); err != nil {
			return b.timeout(err)
		}
	}
	return nil
}

// timeout turns the extraction's context error into too_complex when its own time limit ran out; a
// cancellation from the caller (shutdown, deletion) is returned as is.
func (b *budget) timeout(err error) error {
	if errors.Is(err, context.DeadlineExceeded) && errors.Is(context.Cause(b.ctx), errTimeout) {
		return b.fail(rag.CodeTooComplex, "took longer than %s to extract (limit RAGD_EXTRACT_TIMEOUT)", b.lim.Timeout)
	}
	return err
}

// errTimeout is the cause of an extraction's own deadline.
var errTimeout = errors.New("extraction time limit")

// addChars counts n characters of extracted text.
func (b *budget) addChars(n int) error {
	if b == nil {
		return nil
	}
	b.chars += n
	if b.chars > b.lim.MaxChars {
		return b.fail(rag.CodeTooLarge, "more than %d characters of text (limit RAGD_MAX_CHARS)", b.lim.MaxChars)
	}
	return b.check()
}

// depth checks the nesting of an element or block (1 = the root).
func (b *budget) depth(d int) error {
	if b == nil {
		return nil
	}
	if d > b.lim.MaxDepth {
		return b.fail(rag.CodeTooComplex, "nested more than %d elements deep (limit RAGD_MAX_DEPTH)", b.lim.MaxDepth)
	}
	return b.check()
}

// rawChars counts n characters read from a file before they become blocks (a DOCX text run, a PDF page), so
// that one huge run is stopped while it is read rather than once it is whole.
func (b *budget) rawChars(n int) error {
	b.raw += n
	if b.raw > b.lim.MaxChars {
		return b.fail(rag.CodeTooLarge, "more than %d characters of text (limit RAGD_MAX_CHARS)", b.lim.MaxChars)
	}
	return b.check()
}

// element counts an XML element at depth d (1 = the root).
func (b *budget) element(d int) error {
	b.elements++
	if err := b.depth(d); err != nil {
		return err
	}
	if b.elements > b.lim.MaxXMLElements {
		return b.fail(rag.CodeTooComplex, "more than %d XML elements (limit RAGD_MAX_XML_ELEMENTS)", b.lim.MaxXMLElements)
	}
	return b.check()
}

// pages checks a page count.
func (b *budget) pages(n int) error {
	if n > b.lim.MaxPages {
		return b.fail(rag.CodeTooLarge, "%d pages, over the limit of %d (limit RAGD_MAX_PAGES)", n, b.lim.MaxPages)
	}
	return nil
}

// member returns a reader of an archive member that counts the bytes it inflates against the member and
// total limits and fails with too_large (wrapped in errOverBudget) when either is crossed, whatever the
// member's header claims.
func (b *budget) member(member string, r io.Reader) io.Reader {
	return &inflateReader{b: b, member: member, r: r}
}

type inflateReader struct {
	b      *budget
	member string
	r      io.Reader
	n      int64
}

func (r *inflateReader) Read(p []byte) (int, error) {
	if r.b.err != nil {
		return 0, r.b.err
	}
	n, err := r.r.Read(p)
	r.n += int64(n)
	r.b.inflated += int64(n)
	switch {
	case r.n > r.b.lim.MaxMemberBytes:
		return 0, r.b.fail(rag.CodeTooLarge, "%s inflates to more than %d bytes (limit RAGD_MAX_MEMBER_BYTES)", r.member, r.b.lim.MaxMemberBytes)
	case r.b.inflated > r.b.lim.MaxInflatedBytes:
		return 0, r.b.fail(rag.CodeTooLarge, "archive inflates to more than %d bytes (limit RAGD_MAX_INFLATED_BYTES)", r.b.lim.MaxInflatedBytes)
	}
	if cerr := r.b.check(); cerr != nil {
		return 0, cerr
	}
	return n, err
}

// overBudget returns the budget's error when err is (or was caused by) it, so that a decoder's wrapping does
// not turn a budget into "corrupt file".
func (b *budget) overBudget(err error) error {
	if b != nil && b.err != nil {
		return b.err
	}
	if b != nil && err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return b.timeout(err)
	}
	return nil
}
