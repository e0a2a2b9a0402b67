// Package notion is the "notion" source kind: the pages a Notion integration can see, each synced as one
// Markdown document. Notion has no official Go client, and the community ones (jomei/notionapi,
// dstotijn/go-notion) neither expose the Retry-After of a 429 nor take a base URL; the three endpoints a
// sync needs (search, block children, errors) are small, so this package speaks the REST API (version
// 2022-06-28) itself, through the SSRF-guarded client with rate-limit back-off (internal/connector/ratelimit).
package notion

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/connector/ratelimit"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
)

// Kind is the name of the notion kind in connector.Kinds.
const Kind = "notion"

// DefaultBaseURL is Notion's API.
const DefaultBaseURL = "https://api.notion.com"

// APIVersion is the Notion-Version every request sends.
const APIVersion = "2022-06-28"

// Limits of one page's rendering.
const (
	maxDepth    = 8    // nested blocks rendered
	maxRequests = 2000 // block-children requests per page
)

// Settings are a notion source's settings. The credentials are the integration's token.
type Settings struct {
	// Pages, when set, limits the sync to these pages (IDs, with or without dashes) and to pages whose
	// parent is one of them; else every page shared with the integration.
	Pages []string `json:"pages"`
}

// Source is the pages a Notion integration sees.
type Source struct {
	base     string
	token    string
	pages    map[string]bool
	client   *http.Client
	maxBytes int64
}

// New is the notion kind's connector.Factory, against Notion's API.
var New = Factory(DefaultBaseURL, nil)

// Factory returns a connector.Factory against the API at baseURL (a fake in tests). sleep, when not nil,
// stands in for the back-off waits (tests record them).
func Factory(baseURL string, sleep func(context.Context, time.Duration) error) connector.Factory {
	return func(c connector.Config) (connector.Source, error) {
		var st Settings
		if len(c.Settings) > 0 {
			d := json.NewDecoder(bytes.NewReader(c.Settings))
			d.DisallowUnknownFields()
			if err := d.Decode(&st); err != nil {
				return nil, rag.Errorf(rag.CodeInvalid, "notion source settings: %v", err)
			}
		}
		token := strings.TrimSpace(string(c.Credentials))
		if token == "" {
			return nil, rag.Errorf(rag.CodeInvalid, "a notion source needs the integration's token as its credentials")
		}
		s := &Source{base: strings.TrimSuffix(baseURL, "/"), token: token, client: c.HTTP, maxBytes: c.MaxBytes}
		if s.client == nil {
			s.client = netguard.Options{}.Client()
		}
		s.client = ratelimit.Client(s.client, ratelimit.Transport{Sleep: sleep})
		if s.maxBytes <= 0 {
			s.maxBytes = rag.DefaultMaxUploadBytes
		}
		for _, p := range st.Pages {
			id := normalizeID(p)
			if len(id) != 32 {
				return nil, rag.Errorf(rag.CodeInvalid, "page %q is not a Notion page ID", p)
			}
			if s.pages == nil {
				s.pages = map[string]bool{}
			}
			s.pages[id] = true
		}
		return s, nil
	}
}

// normalizeID returns a page ID without dashes, lower case (Notion accepts both forms).
func normalizeID(id string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(id), "-", ""))
}

// apiError is Notion's error body.
type apiError struct {
	Object  string `json:"object"`
	Status  int    `json:"status"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// call sends one request and decodes the answer into out. Errors: connector.ErrUnauthorized (wrapped)
// for a refused or expired token; *rag.Error for the rest.
func (s *Source) call(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Notion-Version", APIVersion)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if netguard.IsForbidden(err) {
			return rag.WrapError(rag.CodeForbidden, err, "notion: the API's address is not allowed")
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return rag.WrapError(rag.CodeInternal, err, "notion: request failed: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return rag.WrapError(rag.CodeInternal, err, "notion: reading the answer: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e apiError
		_ = json.Unmarshal(data, &e)
		msg := fmt.Sprintf("notion: %s %s: %d %s: %s", method, path, resp.StatusCode, e.Code, e.Message)
		switch {
		case resp.StatusCode == http.StatusUnauthorized:
			return fmt.Errorf("%s: %w", msg, connector.ErrUnauthorized)
		case resp.StatusCode == http.StatusTooManyRequests:
			return rag.Errorf(rag.CodeRateLimited, "%s (still after backing off)", msg)
		case resp.StatusCode == http.StatusNotFound:
			return rag.Errorf(rag.CodeNotFound, "%s", msg)
		case resp.StatusCode == http.StatusForbidden:
			return rag.Errorf(rag.CodeForbidden, "%s", msg)
		case resp.StatusCode >= 500:
			return rag.Errorf(rag.CodeInternal, "%s", msg)
		}
		return rag.Errorf(rag.CodeInvalid, "%s", msg)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return rag.WrapError(rag.CodeInternal, err, "notion: %s %s: malformed answer", method, path)
	}
	return nil
}

// richText is a run of Notion rich text.
type richText struct {
	PlainText string `json:"plain_text"`
	Href      string `json:"href"`
}

func plain(rt []richText) string {
	var b strings.Builder
	for _, r := range rt {
		b.WriteString(r.PlainText)
	}
	return b.String()
}

// page is a Notion page object (the fields a sync reads).
type page struct {
	Object         string    `json:"object"`
	ID             string    `json:"id"`
	LastEditedTime string    `json:"last_edited_time"`
	Archived       bool      `json:"archived"`
	InTrash        bool      `json:"in_trash"`
	URL            string    `json:"url"`
	Parent         parentRef `json:"parent"`
	Properties     map[string]struct {
		Type  string     `json:"type"`
		Title []richText `json:"title"`
	} `json:"properties"`
}

type parentRef struct {
	Type       string `json:"type"`
	PageID     string `json:"page_id"`
	DatabaseID string `json:"database_id"`
}

func (p *page) title() string {
	for _, prop := range p.Properties {
		if prop.Type == "title" {
			return strings.TrimSpace(plain(prop.Title))
		}
	}
	return ""
}

type list[T any] struct {
	Results    []T    `json:"results"`
	NextCursor string `json:"next_cursor"`
	HasMore    bool   `json:"has_more"`
}

// List reports every page the integration sees (a full listing each time: a page deleted, archived or no
// longer shared is gone by omission). Each page's version is its last-edited time, so the engine fetches
// only pages edited since the last sync. The cursor is the newest last-edited time seen.
func (s *Source) List(ctx context.Context, _ string) (connector.Listing, error) {
	var l connector.Listing
	l.Full = true
	body := map[string]any{
		"filter":    map[string]string{"property": "object", "value": "page"},
		"sort":      map[string]string{"direction": "descending", "timestamp": "last_edited_time"},
		"page_size": 100,
	}
	for {
		var res list[page]
		if err := s.call(ctx, http.MethodPost, "/v1/search", body, &res); err != nil {
			return connector.Listing{}, err
		}
		for _, p := range res.Results {
			if p.Object != "page" || p.Archived || p.InTrash || !s.wanted(&p) {
				continue
			}
			title := p.title()
			l.Items = append(l.Items, connector.Item{
				ID: p.ID, Name: cmp.Or(connector.FileStem(title), "Untitled") + ".md", Title: title, Source: p.URL, Version: p.LastEditedTime,
				Metadata: map[string]any{"notion_id": p.ID, "last_edited_time": p.LastEditedTime, "parent": p.Parent.PageID + p.Parent.DatabaseID},
			})
			if p.LastEditedTime > l.Cursor {
				l.Cursor = p.LastEditedTime
			}
		}
		if !res.HasMore || res.NextCursor == "" {
			return l, nil
		}
		body["start_cursor"] = res.NextCursor
	}
}

func (s *Source) wanted(p *page) bool {
	if s.pages == nil {
		return true
	}
	return s.pages[normalizeID(p.ID)] || s.pages[normalizeID(p.Parent.PageID)] || s.pages[normalizeID(p.Parent.DatabaseID)]
}

// block is a Notion block object: its type names the field holding its content.
type block struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	HasChildren bool   `json:"has_children"`
	raw         map[string]json.RawMessage
}

func (b *block) UnmarshalJSON(data []byte) error {
	type plainBlock block
	if err := json.Unmarshal(data, (*plainBlock)(b)); err != nil {
		return err
	}
	return json.Unmarshal(data, &b.raw)
}

// content is the type-specific part of a block.
type content struct {
	RichText []richText   `json:"rich_text"`
	Checked  bool         `json:"checked"`
	Language string       `json:"language"`
	Title    string       `json:"title"`
	Cells    [][]richText `json:"cells"`
	URL      string       `json:"url"`
}

// Fetch renders a page as Markdown: its title as the heading, then its blocks in order (headings, lists,
// to-dos, quotes, callouts, code, tables, toggles with their children), nested blocks indented.
func (s *Source) Fetch(ctx context.Context, it connector.Item) ([]byte, error) {
	r := renderer{s: s, ctx: ctx}
	r.b.WriteString("# " + strings.ReplaceAll(it.Title, "\n", " ") + "\n\n")
	if err := r.children(it.ID, 0, ""); err != nil {
		return nil, err
	}
	return r.b.Bytes(), nil
}

type renderer struct {
	s        *Source
	ctx      context.Context
	b        bytes.Buffer
	requests int
}

// children renders the blocks under id; parent is the type of the block they belong to ("" for the page).
func (r *renderer) children(id string, depth int, parent string) error {
	cursor, rows := "", 0
	indent := strings.Repeat("  ", depth)
	for {
		r.requests++
		if r.requests > maxRequests {
			return rag.Errorf(rag.CodeTooLarge, "notion page %s: over %d requests for its blocks", id, maxRequests)
		}
		q := url.Values{"page_size": {"100"}}
		if cursor != "" {
			q.Set("start_cursor", cursor)
		}
		var res list[block]
		if err := r.s.call(r.ctx, http.MethodGet, "/v1/blocks/"+url.PathEscape(id)+"/children?"+q.Encode(), nil, &res); err != nil {
			return err
		}
		number := 0
		for _, bl := range res.Results {
			var c content
			if raw, ok := bl.raw[bl.Type]; ok {
				_ = json.Unmarshal(raw, &c)
			}
			text := plain(c.RichText)
			if bl.Type == "numbered_list_item" {
				number++
			} else {
				number = 0
			}
			switch bl.Type {
			case "heading_1", "heading_2", "heading_3":
				r.b.WriteString(strings.Repeat("#", int(bl.Type[len(bl.Type)-1]-'0')+1) + " " + text + "\n\n")
			case "bulleted_list_item", "toggle":
				r.b.WriteString(indent + "- " + text + "\n")
			case "numbered_list_item":
				fmt.Fprintf(&r.b, "%s%d. %s\n", indent, number, text)
			case "to_do":
				mark := " "
				if c.Checked {
					mark = "x"
				}
				r.b.WriteString(indent + "- [" + mark + "] " + text + "\n")
			case "quote", "callout":
				r.b.WriteString(indent + "> " + text + "\n\n")
			case "code":
				r.b.WriteString("```" + c.Language + "\n" + text + "\n```\n\n")
			case "divider":
				r.b.WriteString("---\n\n")
			case "child_page", "child_database":
				r.b.WriteString(indent + "- " + c.Title + "\n")
			case "table_row":
				cells := make([]string, len(c.Cells))
				for i, cell := range c.Cells {
					cells[i] = strings.ReplaceAll(plain(cell), "|", `\|`)
				}
				r.b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
				if rows++; rows == 1 && parent == "table" {
					r.b.WriteString(strings.Repeat("| --- ", len(cells)) + "|\n")
				}
			case "bookmark", "embed", "link_preview":
				if c.URL != "" {
					r.b.WriteString(indent + c.URL + "\n\n")
				}
			default:
				if text != "" {
					r.b.WriteString(indent + text + "\n\n")
				}
			}
			if int64(r.b.Len()) > r.s.maxBytes {
				return rag.Errorf(rag.CodePayloadTooLarge, "notion page %s is over the limit of %d bytes", id, r.s.maxBytes)
			}
			if bl.HasChildren && depth < maxDepth && bl.Type != "child_page" && bl.Type != "child_database" {
				if err := r.children(bl.ID, depth+1, bl.Type); err != nil {
					return err
				}
				if bl.Type == "table" {
					r.b.WriteString("\n")
				}
			}
		}
		if !res.HasMore || res.NextCursor == "" {
			return nil
		}
		cursor = res.NextCursor
	}
}
