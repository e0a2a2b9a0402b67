package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
)

// Kind is the name of the web kind in connector.Kinds.
const Kind = "web"

// Settings are a web source's settings.
type Settings struct {
	// URL is the page the crawl starts from; its scheme and host are the site: links elsewhere are not
	// followed. Either URL or Sitemap is required.
	URL string `json:"url"`
	// Sitemap is a sitemap (or sitemap index) on the same site whose pages are crawled as start pages.
	Sitemap string `json:"sitemap"`
	// MaxDepth is how many links away from a start page the crawl goes (default 2; 0 fetches the start
	// pages only; at most MaxDepthLimit).
	MaxDepth *int `json:"max_depth"`
	// MaxPages bounds the pages listed in one sync (default 200, at most MaxPagesLimit).
	MaxPages int `json:"max_pages"`
	// Prefix, when set, limits the crawl to paths that start with it (e.g. "/docs/").
	Prefix string `json:"prefix"`
}

// Limits and defaults of Settings.
const (
	DefaultMaxDepth = 2
	MaxDepthLimit   = 20
	DefaultMaxPages = 200
	MaxPagesLimit   = 10000
	// maxSitemaps bounds the sitemaps read from a sitemap index.
	maxSitemaps = 20
	// maxMetaBytes bounds robots.txt and each sitemap.
	maxMetaBytes = 10 << 20
	// cacheBytes bounds the page bodies List keeps for the Fetch calls that follow it.
	cacheBytes = 64 << 20
)

// Source is a web site crawled within its settings' limits. Every listing is full: a page no longer
// reachable (gone, or no longer linked) is reported gone by omission.
type Source struct {
	start, sitemap *url.URL
	site           string // scheme://host of the start URL or sitemap
	depth, pages   int
	prefix         string
	client         *http.Client
	maxBytes       int64

	mu     sync.Mutex
	cache  map[string][]byte // bodies fetched by the last List, handed to Fetch once
	cached int64
}

// New is the web kind's connector.Factory. Errors: CodeInvalid for bad settings.
func New(c connector.Config) (connector.Source, error) {
	var st Settings
	if len(c.Settings) > 0 {
		d := json.NewDecoder(strings.NewReader(string(c.Settings)))
		d.DisallowUnknownFields()
		if err := d.Decode(&st); err != nil {
			return nil, rag.Errorf(rag.CodeInvalid, "web source settings: %v", err)
		}
	}
	s := &Source{depth: DefaultMaxDepth, pages: DefaultMaxPages, prefix: st.Prefix, client: c.HTTP, maxBytes: c.MaxBytes,
		cache: map[string][]byte{}}
	if s.client == nil {
		s.client = netguard.Options{}.Client()
	}
	if s.maxBytes <= 0 {
		s.maxBytes = rag.DefaultMaxUploadBytes
	}
	var err error
	if st.URL == "" && st.Sitemap == "" {
		return nil, rag.Errorf(rag.CodeInvalid, "a web source needs a \"url\" or a \"sitemap\"")
	}
	if st.URL != "" {
		if s.start, err = ParseURL(st.URL); err != nil {
			return nil, err
		}
		s.start = canonical(s.start)
		s.site = s.start.Scheme + "://" + s.start.Host
	}
	if st.Sitemap != "" {
		if s.sitemap, err = ParseURL(st.Sitemap); err != nil {
			return nil, err
		}
		s.sitemap = canonical(s.sitemap)
		site := s.sitemap.Scheme + "://" + s.sitemap.Host
		if s.site != "" && site != s.site {
			return nil, rag.Errorf(rag.CodeInvalid, "the sitemap %s is not on the site of %s", st.Sitemap, st.URL)
		}
		s.site = site
	}
	if st.MaxDepth != nil {
		if *st.MaxDepth < 0 || *st.MaxDepth > MaxDepthLimit {
			return nil, rag.Errorf(rag.CodeInvalid, "max_depth must be between 0 and %d", MaxDepthLimit)
		}
		s.depth = *st.MaxDepth
	}
	if st.MaxPages != 0 {
		if st.MaxPages < 1 || st.MaxPages > MaxPagesLimit {
			return nil, rag.Errorf(rag.CodeInvalid, "max_pages must be between 1 and %d", MaxPagesLimit)
		}
		s.pages = st.MaxPages
	}
	if s.prefix != "" && !strings.HasPrefix(s.prefix, "/") {
		return nil, rag.Errorf(rag.CodeInvalid, "prefix must be a path starting with /")
	}
	return s, nil
}

// crawlState is the cursor of a web source: what the last crawl saw of each page, so that a page the site
// reports unchanged (304) keeps its name and its links without being downloaded.
type crawlState struct {
	URLs  []string    `json:"urls"`
	Pages []pageState `json:"pages"` // Pages[i] is URLs[i]
}

type pageState struct {
	Version string `json:"v,omitempty"`
	Name    string `json:"n,omitempty"`
	Links   []int  `json:"l,omitempty"` // indexes into URLs
}

type seenPage struct {
	version, name string
	links         []string
}

func decodeState(cursor string) map[string]seenPage {
	out := map[string]seenPage{}
	var st crawlState
	if cursor == "" || json.Unmarshal([]byte(cursor), &st) != nil || len(st.Pages) != len(st.URLs) {
		return out // a cursor of an older format only costs a full download
	}
	for i, u := range st.URLs {
		p := st.Pages[i]
		sp := seenPage{version: p.Version, name: p.Name}
		for _, l := range p.Links {
			if l >= 0 && l < len(st.URLs) {
				sp.links = append(sp.links, st.URLs[l])
			}
		}
		out[u] = sp
	}
	return out
}

func encodeState(order []string, pages map[string]seenPage) string {
	st := crawlState{URLs: order, Pages: make([]pageState, len(order))}
	index := make(map[string]int, len(order))
	for i, u := range order {
		index[u] = i
	}
	for i, u := range order {
		p := pages[u]
		st.Pages[i] = pageState{Version: p.version, Name: p.name}
		for _, l := range p.links {
			if j, ok := index[l]; ok {
				st.Pages[i].Links = append(st.Pages[i].Links, j)
			}
		}
	}
	b, _ := json.Marshal(st)
	return string(b)
}

// inScope says whether the crawl may follow u: the same site, under the prefix, worth fetching.
func (s *Source) inScope(u *url.URL) bool {
	return u.Scheme+"://"+u.Host == s.site && strings.HasPrefix(u.Path, s.prefix) && worthFetching(u)
}

type queued struct {
	u     *url.URL
	depth int
}

// List crawls the site breadth first from its start pages (the URL, the sitemap's pages): same site only,
// at most the depth and page limits, paths robots.txt disallows skipped. Pages the crawl saw before are
// requested conditionally; a page answered 304 keeps its version. A page that cannot be fetched (404, a
// redirect loop, over the size limit, a type ragd does not extract) is left out; one that fails for a
// while (5xx, 429, a network error) is listed as it was, so that a bad moment does not delete it. Errors:
// the start URL, robots.txt or the sitemap cannot be read.
func (s *Source) List(ctx context.Context, cursor string) (connector.Listing, error) {
	prev := decodeState(cursor)
	s.mu.Lock()
	s.cache, s.cached = map[string][]byte{}, 0
	s.mu.Unlock()
	rules, err := s.robots(ctx)
	if err != nil {
		return connector.Listing{}, err
	}
	var queue []queued
	seen := map[string]bool{}
	enqueue := func(u *url.URL, depth int) {
		u = canonical(u)
		if k := u.String(); !seen[k] && s.inScope(u) && rules.allowed(u.RequestURI()) {
			seen[k] = true
			queue = append(queue, queued{u, depth})
		}
	}
	if s.start != nil {
		if !rules.allowed(s.start.RequestURI()) {
			return connector.Listing{}, rag.Errorf(rag.CodeForbidden, "robots.txt of %s disallows %s", s.site, s.start.Redacted())
		}
		enqueue(s.start, 0)
	}
	if s.sitemap != nil {
		pages, err := s.sitemapPages(ctx)
		if err != nil {
			return connector.Listing{}, err
		}
		for _, p := range pages {
			enqueue(p, 0)
		}
	}

	var items []connector.Item
	var order []string
	found := map[string]seenPage{}
	var firstErr error
	requests, maxRequests := 0, 2*s.pages+20 // failures count too, so a site of 404s ends the crawl
	for len(queue) > 0 && len(items) < s.pages && requests < maxRequests {
		q := queue[0]
		queue = queue[1:]
		key := q.u.String()
		before, known := prev[key]
		requests++
		page, err := Get(ctx, s.client, Request{URL: key, MaxBytes: s.maxBytes, Version: before.version})
		if err != nil {
			if ctx.Err() != nil {
				return connector.Listing{}, ctx.Err()
			}
			if firstErr == nil {
				firstErr = err
			}
			switch rag.ErrorCode(err) {
			case rag.CodeInternal, rag.CodeRateLimited:
				if known {
					page = &Page{URL: q.u, NotModified: true} // listed as it was
					break
				}
				continue
			default:
				continue
			}
		}
		final := canonical(page.URL)
		id := final.String()
		if id != key {
			// Redirected: the page is known by where it is.
			if _, dup := found[id]; dup || !s.inScope(final) {
				continue
			}
			seen[id] = true
			before, known = prev[id]
		}
		sp := seenPage{name: page.Name, version: page.Version()}
		if page.NotModified {
			sp = before
			if !known {
				continue // a 304 for a page never seen: nothing to list
			}
		} else {
			if sp.version == "" {
				sum := sha256.Sum256(page.Data)
				sp.version = "sha256:" + hex.EncodeToString(sum[:])
			}
			if extract.MediaType(page.Name, page.Data) == extract.MediaHTML {
				for _, l := range htmlLinks(final, page.Data) {
					if l = canonical(l); s.inScope(l) {
						sp.links = append(sp.links, l.String())
					}
				}
			}
			s.keep(id, page.Data)
		}
		found[id] = sp
		order = append(order, id)
		items = append(items, connector.Item{ID: id, Name: sp.name, Source: id, Version: sp.version})
		if q.depth < s.depth {
			for _, l := range sp.links {
				if u, err := url.Parse(l); err == nil {
					enqueue(u, q.depth+1)
				}
			}
		}
	}
	if len(items) == 0 && firstErr != nil {
		return connector.Listing{}, fmt.Errorf("web source %s: %w", s.site, firstErr)
	}
	return connector.Listing{Full: true, Items: items, Cursor: encodeState(order, found)}, nil
}

// keep holds a page body fetched by List for Fetch, within the cache budget.
func (s *Source) keep(id string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cached+int64(len(data)) <= cacheBytes {
		s.cache[id] = data
		s.cached += int64(len(data))
	}
}

// Fetch returns a page's bytes: those List just downloaded, or a fresh download.
func (s *Source) Fetch(ctx context.Context, it connector.Item) ([]byte, error) {
	s.mu.Lock()
	data, ok := s.cache[it.ID]
	if ok {
		delete(s.cache, it.ID)
		s.cached -= int64(len(data))
	}
	s.mu.Unlock()
	if ok {
		return data, nil
	}
	p, err := Get(ctx, s.client, Request{URL: it.ID, MaxBytes: s.maxBytes})
	if err != nil {
		return nil, err
	}
	return p.Data, nil
}

// robots reads the site's robots.txt: missing (4xx) allows everything; unreadable (5xx, network) fails the
// sync, as RFC 9309 asks a crawler to assume everything is disallowed meanwhile.
func (s *Source) robots(ctx context.Context) (*robots, error) {
	p, err := Get(ctx, s.client, Request{URL: s.site + "/robots.txt", MaxBytes: maxMetaBytes, AnyType: true})
	switch code := rag.ErrorCode(err); {
	case err == nil:
		return parseRobots(p.Data), nil
	case code == rag.CodeNotFound || code == rag.CodeInvalid:
		return &robots{}, nil
	default:
		return nil, fmt.Errorf("web source %s: robots.txt: %w", s.site, err)
	}
}

// sitemapPages reads the sitemap, following a sitemap index one level down.
func (s *Source) sitemapPages(ctx context.Context) ([]*url.URL, error) {
	var out []*url.URL
	todo := []*url.URL{s.sitemap}
	for i := 0; i < len(todo) && i <= maxSitemaps; i++ {
		p, err := Get(ctx, s.client, Request{URL: todo[i].String(), MaxBytes: maxMetaBytes, AnyType: true})
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("web source %s: sitemap: %w", s.site, err)
			}
			continue // one broken sitemap of an index does not stop the others
		}
		pages, maps, err := parseSitemap(p.Data)
		if err != nil && i == 0 {
			return nil, rag.WrapError(rag.CodeInvalid, err, "sitemap %s is not a sitemap: %v", todo[i].Redacted(), err)
		}
		for _, raw := range pages {
			if u, err := url.Parse(raw); err == nil {
				out = append(out, u)
			}
		}
		if i == 0 {
			for _, raw := range maps {
				if u, err := url.Parse(raw); err == nil && canonical(u).Scheme+"://"+canonical(u).Host == s.site {
					todo = append(todo, u)
				}
			}
		}
	}
	return out, nil
}
