package web

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode"

	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
)

// Page is one fetched URL.
type Page struct {
	// URL is the address the content came from, after redirects.
	URL *url.URL
	// Name is a file name for the content: the last segment of the URL's path with the extension its
	// Content-Type calls for ("index.html" for a directory), so that it selects the right extractor.
	Name        string
	ContentType string
	Data        []byte
	// ETag and LastModified are the response's validators; NotModified says the server answered a
	// conditional request with 304 (Data is then empty).
	ETag, LastModified string
	NotModified        bool
}

// Version is the page's change marker for connector.Item.Version: its ETag, else its Last-Modified, else "".
func (p *Page) Version() string { return versionOf(p.ETag, p.LastModified) }

func versionOf(etag, lastModified string) string {
	switch {
	case etag != "":
		return "etag:" + etag
	case lastModified != "":
		return "modified:" + lastModified
	}
	return ""
}

// Request says what Get fetches and how.
type Request struct {
	URL string
	// MaxBytes bounds the body; a longer one is CodePayloadTooLarge (0: rag.DefaultMaxUploadBytes).
	MaxBytes int64
	// Version, when it is a Page.Version of an earlier fetch, makes the request conditional
	// (If-None-Match or If-Modified-Since).
	Version string
	// AnyType accepts content whose type ragd does not extract (robots.txt, sitemaps) instead of failing
	// with CodeUnsupportedMediaType.
	AnyType bool
}

// userAgent names ragd to the sites it fetches from (robots.txt rules match it).
const userAgent = "ragd (+https://github.com/ragd/ragd)"

// Get fetches one URL with client, which must be a netguard client (it refuses private addresses and bounds
// redirects). Errors are *rag.Error: CodeInvalid for a malformed or non-HTTP URL, a 4xx answer or a
// redirect loop; CodeForbidden for an address the SSRF rules refuse; CodePayloadTooLarge over MaxBytes;
// CodeUnsupportedMediaType for content ragd does not extract; CodeRateLimited for 429; CodeInternal (worth
// retrying) for a 5xx answer or a network failure.
func Get(ctx context.Context, client *http.Client, r Request) (*Page, error) {
	u, err := ParseURL(r.URL)
	if err != nil {
		return nil, err
	}
	maxBytes := r.MaxBytes
	if maxBytes <= 0 {
		maxBytes = rag.DefaultMaxUploadBytes
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, rag.Errorf(rag.CodeInvalid, "%s: %v", r.URL, err)
	}
	req.Header.Set("User-Agent", userAgent)
	switch kind, val, _ := strings.Cut(r.Version, ":"); kind {
	case "etag":
		req.Header.Set("If-None-Match", val)
	case "modified":
		req.Header.Set("If-Modified-Since", val)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, requestError(u, err)
	}
	defer resp.Body.Close()
	p := &Page{URL: resp.Request.URL, ContentType: resp.Header.Get("Content-Type"), ETag: resp.Header.Get("ETag"),
		LastModified: resp.Header.Get("Last-Modified")}
	switch {
	case resp.StatusCode == http.StatusNotModified:
		p.NotModified = true
		if p.ETag == "" && p.LastModified == "" {
			// The server sent no validators with the 304: the page is still the one the caller knows.
			p.ETag, p.LastModified = versionParts(r.Version)
		}
		return p, nil
	case resp.StatusCode == http.StatusTooManyRequests:
		retry := resp.Header.Get("Retry-After")
		return nil, rag.Errorf(rag.CodeRateLimited, "%s: the site is rate limiting (429, Retry-After %q)", u.Redacted(), retry)
	case resp.StatusCode >= 500:
		return nil, rag.Errorf(rag.CodeInternal, "%s: the site answered %s", u.Redacted(), resp.Status)
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return nil, rag.Errorf(rag.CodeNotFound, "%s: the site answered %s", u.Redacted(), resp.Status)
	case resp.StatusCode >= 300:
		return nil, rag.Errorf(rag.CodeInvalid, "%s: the site answered %s", u.Redacted(), resp.Status)
	}
	if resp.ContentLength > maxBytes {
		return nil, rag.Errorf(rag.CodePayloadTooLarge, "%s is %d bytes, over the limit of %d bytes", u.Redacted(), resp.ContentLength, maxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, requestError(u, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, rag.Errorf(rag.CodePayloadTooLarge, "%s is over the limit of %d bytes", u.Redacted(), maxBytes)
	}
	p.Data = data
	p.Name = FileName(p.URL, p.ContentType)
	if !r.AnyType && extract.MediaType(p.Name, data) == "" {
		return nil, rag.Errorf(rag.CodeUnsupportedMediaType, "%s: unsupported content type %q (supported: %s)", u.Redacted(), p.ContentType, extract.Formats)
	}
	return p, nil
}

func versionParts(v string) (etag, lastModified string) {
	switch kind, val, _ := strings.Cut(v, ":"); kind {
	case "etag":
		return val, ""
	case "modified":
		return "", val
	}
	return "", ""
}

// ParseURL checks that s is an absolute http or https URL with a host. Errors: CodeInvalid.
func ParseURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, rag.Errorf(rag.CodeInvalid, "malformed URL %q: %v", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, rag.Errorf(rag.CodeInvalid, "URL %q: only http and https URLs are fetched", s)
	}
	if u.Hostname() == "" {
		return nil, rag.Errorf(rag.CodeInvalid, "URL %q has no host", s)
	}
	u.Fragment = ""
	return u, nil
}

// requestError turns a failed request into a *rag.Error: a refused address is CodeForbidden, a redirect
// loop CodeInvalid, a cancelled context the context's error, anything else CodeInternal (retried).
func requestError(u *url.URL, err error) error {
	var ue *url.Error
	switch {
	case netguard.IsForbidden(err):
		return rag.WrapError(rag.CodeForbidden, err, "%s: the address is private or reserved and private addresses are not allowed (RAGD_FETCH_ALLOW_PRIVATE)", u.Redacted())
	case errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &ue) && strings.Contains(ue.Err.Error(), "redirect"):
		return rag.WrapError(rag.CodeInvalid, err, "%s: %v", u.Redacted(), ue.Err)
	}
	return rag.WrapError(rag.CodeInternal, err, "%s: the request failed: %v", u.Redacted(), unwrapURLError(err))
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// typeExtensions are the extensions content types call for.
var typeExtensions = map[string]string{
	"application/pdf":       ".pdf",
	"text/html":             ".html",
	"application/xhtml+xml": ".html",
	"text/markdown":         ".md",
	"text/x-markdown":       ".md",
	"text/plain":            ".txt",
	"text/csv":              ".csv",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   ".docx",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         ".xlsx",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
	"application/x-hwp":           ".hwp",
	"application/haansofthwp":     ".hwp",
	"application/vnd.hancom.hwpx": ".hwpx",
	"application/json":            ".json",
	"application/xml":             ".xml",
	"text/xml":                    ".xml",
}

// FileName names the content of u served as contentType: the last path segment ("index" for a directory),
// with the extension the content type calls for unless the segment's own extension already reads as that
// type. Generic types (application/octet-stream, text/plain for a file whose extension ragd reads as text)
// keep the segment's name, so that the extractor goes by the extension or, without one, by the content.
func FileName(u *url.URL, contentType string) string {
	base := path.Base(u.Path)
	if base == "." || base == "/" || base == "" || strings.HasSuffix(u.Path, "/") {
		base = "index"
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	ext, known := typeExtensions[mt]
	if !known {
		return base
	}
	own := extract.MediaType(base, nil)
	switch {
	case own != "" && own == extract.MediaType("x"+ext, nil):
		return base
	case mt == "text/plain" && own != "" && strings.HasPrefix(own, "text/"):
		return base // a .md, .py or .csv served as text/plain is read by its extension
	}
	if own := path.Ext(base); strings.ContainsFunc(own, unicode.IsLetter) {
		base = strings.TrimSuffix(base, own) // page.php → page.html; 2401.01234 keeps its number
	}
	return base + ext
}

// Fetcher returns ingest.Options.Fetch over client: the document at a URL, named for its extractor.
func Fetcher(client *http.Client) func(ctx context.Context, url string, maxBytes int64) (string, []byte, error) {
	return func(ctx context.Context, url string, maxBytes int64) (string, []byte, error) {
		p, err := Get(ctx, client, Request{URL: url, MaxBytes: maxBytes})
		if err != nil {
			return "", nil, err
		}
		return p.Name, p.Data, nil
	}
}
