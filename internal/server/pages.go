package server

import (
	"bytes"
	"cmp"
	"container/list"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
)

// Files reads the stored originals of documents as a principal sees them (rag.Store implements it).
type Files interface {
	DocumentBlob(ctx context.Context, p rag.Principal, documentID, hash string) ([]byte, error)
}

// PDFPages renders the pages of PDFs as PNG images and finds texts on them (*extract.Extractor implements
// it).
type PDFPages interface {
	RenderPage(ctx context.Context, pdf []byte, page, width int) (*extract.RenderedPage, error)
	FindOnPage(ctx context.Context, pdf []byte, page int, texts []string) (*extract.Found, error)
}

// Page image limits: the width a client may ask for, the width it gets by default, how long one page may
// take to render, and how many bytes of rendered pages the server keeps in memory.
const (
	MinPageWidth     = 100
	MaxPageWidth     = 2000
	DefaultPageWidth = 1000
	PageRenderTime   = 15 * time.Second
	PageCacheBytes   = 64 << 20
)

// Limits of one request for the boxes of texts on a page: how many texts, and their characters in all.
const (
	MaxFindTexts = 20
	MaxFindChars = 4000
)

// chunkView is a chunk as GET /api/documents/{id}/chunks shows it: with its size in tokens.
type chunkView struct {
	*rag.Chunk
	// Tokens counts the chunk's text with the tokenizer prompt budgets are counted with
	// (generate.TokenEncoding, cl100k_base).
	Tokens int `json:"tokens"`
}

func chunkViews(chunks []*rag.Chunk) []chunkView {
	out := make([]chunkView, len(chunks))
	for i, c := range chunks {
		out[i] = chunkView{Chunk: c, Tokens: generate.CountTokens(c.Text)}
	}
	return out
}

// handleDocumentFile serves a document's stored original: the current version's (the pending upload's
// while no version is ready), or ?version=N's. It is always an attachment, never shown inline from this
// origin: an uploaded HTML file must not run as a page of ragd.
func (s *Server) handleDocumentFile(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	d, err := s.deps.Documents.GetDocument(r.Context(), p, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	hash, mediaType, name := cmp.Or(d.ContentHash, d.PendingHash), d.MediaType, d.Source
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "malformed query string: %v", err))
		return
	}
	if v := q.Get("version"); v != "" {
		n, err := intParam(v, 0, 1, 1<<30)
		if err != nil {
			s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "version: %v", err))
			return
		}
		versions, err := s.deps.Documents.ListVersions(r.Context(), p, d.ID)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		hash = ""
		for _, ver := range versions {
			if ver.Version == n {
				hash, mediaType, name = ver.ContentHash, ver.MediaType, cmp.Or(ver.Source, name)
			}
		}
		if hash == "" {
			s.writeError(w, r, rag.Errorf(rag.CodeNotFound, "document %s has no version %d", d.ID, n))
			return
		}
	}
	if hash == "" {
		s.writeError(w, r, rag.Errorf(rag.CodeNotFound, "document %s has no stored file", d.ID))
		return
	}
	data, err := s.deps.Files.DocumentBlob(r.Context(), principalOf(r), d.ID, hash)
	if errors.Is(err, rag.ErrNotFound) {
		err = rag.WrapError(rag.CodeNotFound, err, "the file of document %s is no longer stored", d.ID)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	serveOriginal(w, r, data, hash, mediaType, downloadName(name, d.Title, mediaType))
}

// serveOriginal answers with a stored original (its sha256 is hash) as an attachment saved as name: the
// media type, the ETag, Range and If-None-Match, and a sandbox should it be opened anyway.
func serveOriginal(w http.ResponseWriter, r *http.Request, data []byte, hash, mediaType, name string) {
	h := w.Header()
	h.Set("Content-Type", cmp.Or(mediaType, "application/octet-stream"))
	h.Set("Content-Disposition", attachment(name))
	// Opened by mistake as a document of this origin anyway, it runs nothing.
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("ETag", `"`+hash+`"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// extensions are the file extensions of the media types ragd extracts whose names carry no extension of
// their own (a text document named by its title, a record).
var extensions = map[string]string{
	extract.MediaPDF: ".pdf", extract.MediaDOCX: ".docx", extract.MediaHTML: ".html", extract.MediaMarkdown: ".md",
	extract.MediaMDX: ".mdx", extract.MediaText: ".txt", extract.MediaHWPX: ".hwpx", extract.MediaHWP: ".hwp",
	extract.MediaXLSX: ".xlsx", extract.MediaPPTX: ".pptx",
}

// downloadName is the file name a download is saved as: the base name of the document's source, else its
// title, with the media type's extension when it has none.
func downloadName(source, title, mediaType string) string {
	name := path.Base(strings.ReplaceAll(source, `\`, "/"))
	if name == "." || name == "/" {
		name = ""
	}
	name = strings.TrimSpace(cmp.Or(name, connector.FileStem(title), "document"))
	if path.Ext(name) == "" {
		name += extensions[mediaType]
	}
	return name
}

// attachment is a Content-Disposition header for a download saved as name (RFC 6266), control characters
// replaced: an ASCII filename
// for old clients — other characters, quotes, backslashes and percent signs replaced — and, when that is
// not the name itself, the UTF-8 name in filename* (RFC 5987 percent-encoding), which clients prefer.
func attachment(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '_'
		}
		return r
	}, name)
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' || r == '%' || r == '/' {
			return '_'
		}
		return r
	}, name)
	v := `attachment; filename="` + ascii + `"`
	if ascii != name {
		var b strings.Builder
		for _, c := range []byte(name) {
			if isAttrChar(c) {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		}
		v += "; filename*=UTF-8''" + b.String()
	}
	return v
}

// isAttrChar reports RFC 5987's attr-char: the bytes a filename* value carries unencoded.
func isAttrChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}

// handlePageImage serves page n of a PDF document as a PNG image w pixels wide (?w=, MinPageWidth to
// MaxPageWidth, default DefaultPageWidth), rendered once per version, page and width and then kept in the
// page cache. Errors: those of pdfPage, invalid_request for a bad width, too_complex for a page that takes
// over PageRenderTime.
func (s *Server) handlePageImage(w http.ResponseWriter, r *http.Request) {
	num, ok := strings.CutSuffix(r.PathValue("page"), ".png")
	if !ok {
		s.writeError(w, r, rag.Errorf(rag.CodeNotFound, "page images are {n}.png"))
		return
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "malformed query string: %v", err))
		return
	}
	width, err := intParam(q.Get("w"), DefaultPageWidth, MinPageWidth, MaxPageWidth)
	if err != nil {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "w: %v", err))
		return
	}
	d, n, err := s.pdfPage(r, num)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	etag := fmt.Sprintf(`"%s-%d-%d"`, d.ContentHash, n, width)
	h := w.Header()
	h.Set("ETag", etag)
	// The URL names a document, not a version: the browser keeps the image but asks again (a 304 when the
	// version is the same).
	h.Set("Cache-Control", "private, no-cache")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	pg, err := s.pages.get(etag, func() (*extract.RenderedPage, error) {
		var pg *extract.RenderedPage
		err := s.withPDF(r, d, n, func(ctx context.Context, pdf []byte) (err error) {
			pg, err = s.deps.Pages.RenderPage(ctx, pdf, n, width)
			return err
		})
		return pg, err
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h.Set("Content-Type", "image/png")
	h.Set("X-Page-Count", strconv.Itoa(pg.Pages))
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(pg.PNG))
}

// handlePageBoxes finds texts (?text=, repeated: up to MaxFindTexts, MaxFindChars characters in all) on
// page n of a PDF document: {"page", "boxes": [{"x", "y", "w", "h", "text"}], "share": [...]}, the boxes in
// fractions of the rendered page from its top left, share the part of each text found there (boxes only for
// texts found at least extract.MinFoundShare). The UI draws them over the page image. Errors: those of
// pdfPage, invalid_request for no text or too much.
func (s *Server) handlePageBoxes(w http.ResponseWriter, r *http.Request) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "malformed query string: %v", err))
		return
	}
	texts := q["text"]
	chars := 0
	for _, t := range texts {
		chars += utf8.RuneCountInString(t)
	}
	switch {
	case len(texts) == 0:
		err = rag.Errorf(rag.CodeInvalid, "text is required: the text to find on the page (repeatable)")
	case len(texts) > MaxFindTexts:
		err = rag.Errorf(rag.CodeInvalid, "at most %d texts per request (got %d)", MaxFindTexts, len(texts))
	case chars > MaxFindChars:
		err = rag.Errorf(rag.CodeInvalid, "the texts are %d characters, over the limit of %d", chars, MaxFindChars)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d, n, err := s.pdfPage(r, r.PathValue("page"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var found *extract.Found
	err = s.withPDF(r, d, n, func(ctx context.Context, pdf []byte) (err error) {
		found, err = s.deps.Pages.FindOnPage(ctx, pdf, n, texts)
		return err
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"page": n, "boxes": found.Boxes, "share": found.Share})
}

// pdfPage reads the document and page number of a page request. Errors: invalid_request for a page that is
// not a positive integer, not_found for a document the principal cannot see or one with no ready version,
// unsupported_media_type for a document that is not a PDF.
func (s *Server) pdfPage(r *http.Request, num string) (*rag.Document, int, error) {
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return nil, 0, rag.Errorf(rag.CodeInvalid, "page %q: pages are numbered from 1", num)
	}
	d, err := s.deps.Documents.GetDocument(r.Context(), principalOf(r), r.PathValue("id"))
	if err != nil {
		return nil, 0, err
	}
	if d.MediaType != extract.MediaPDF {
		return nil, 0, rag.Errorf(rag.CodeUnsupportedMediaType, "%s is %s: only the pages of PDF documents are rendered", d.Title, cmp.Or(d.MediaType, "of no known type"))
	}
	if d.ContentHash == "" {
		return nil, 0, rag.Errorf(rag.CodeNotFound, "%s has no ready version yet", d.Title)
	}
	return d, n, nil
}

// withPDF calls fn with the bytes of d's current version, within PageRenderTime. The client going away does
// not stop it (a rendered page is kept for whoever asks next), the time limit does: too_complex.
func (s *Server) withPDF(r *http.Request, d *rag.Document, n int, fn func(ctx context.Context, pdf []byte) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), PageRenderTime)
	defer cancel()
	data, err := s.deps.Files.DocumentBlob(ctx, principalOf(r), d.ID, d.ContentHash)
	if errors.Is(err, rag.ErrNotFound) {
		return rag.WrapError(rag.CodeNotFound, err, "the file of %s is no longer stored", d.Title)
	}
	if err != nil {
		return err
	}
	err = fn(ctx, data)
	if errors.Is(err, context.DeadlineExceeded) {
		return rag.WrapError(rag.CodeTooComplex, err, "page %d of %s took over %s", n, d.Title, PageRenderTime)
	}
	return err
}

// pageCache keeps rendered pages, least recently used first out, within a byte budget, and renders each
// key once however many requests ask for it at the same time. Failures are not kept.
type pageCache struct {
	max int64

	mu       sync.Mutex
	size     int64
	order    *list.List // of *pageEntry, most recently used at the front
	entries  map[string]*list.Element
	inflight map[string]*pageCall
}

type pageEntry struct {
	key  string
	page *extract.RenderedPage
}

type pageCall struct {
	done    chan struct{}
	page    *extract.RenderedPage
	err     error
	waiters int // callers waiting for this render besides the one rendering (c.mu)
}

func newPageCache(max int64) *pageCache {
	return &pageCache{max: max, order: list.New(), entries: map[string]*list.Element{}, inflight: map[string]*pageCall{}}
}

// get returns the page cached under key, or the result of render (once, for every caller waiting on key).
func (c *pageCache) get(key string, render func() (*extract.RenderedPage, error)) (*extract.RenderedPage, error) {
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		c.order.MoveToFront(e)
		c.mu.Unlock()
		return e.Value.(*pageEntry).page, nil
	}
	if call, ok := c.inflight[key]; ok {
		call.waiters++
		c.mu.Unlock()
		<-call.done
		return call.page, call.err
	}
	// Until render returns, the call has failed: a render that panics leaves no waiter hanging.
	call := &pageCall{done: make(chan struct{}), err: rag.Errorf(rag.CodeInternal, "the page could not be rendered")}
	c.inflight[key] = call
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.inflight, key)
		if call.err == nil {
			c.add(key, call.page)
		}
		c.mu.Unlock()
		close(call.done)
	}()
	call.page, call.err = render()
	return call.page, call.err
}

// add keeps page under key and drops the least recently used pages over the budget. A page larger than
// the whole budget is not kept. c.mu is held.
func (c *pageCache) add(key string, page *extract.RenderedPage) {
	n := int64(len(page.PNG))
	if n > c.max {
		return
	}
	c.entries[key] = c.order.PushFront(&pageEntry{key: key, page: page})
	c.size += n
	for c.size > c.max {
		last := c.order.Back()
		e := last.Value.(*pageEntry)
		c.order.Remove(last)
		delete(c.entries, e.key)
		c.size -= int64(len(e.page.PNG))
	}
}
