package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Notion is a local stand-in for Notion's REST API (version 2022-06-28): POST /v1/search and GET
// /v1/blocks/{id}/children with their JSON objects (page, block, list with next_cursor/has_more, error
// with status/code/message), bearer tokens, the Notion-Version header, and faults: a burst of 429s with
// Retry-After, and a token that expires.
type Notion struct {
	srv *httptest.Server
	sourceFake
	token string
	pages map[string]*NotionPage
}

// NotionPage is a page of the fake workspace.
type NotionPage struct {
	ID         string
	Title      string
	ParentID   string // a parent page's ID ("" for the workspace)
	LastEdited time.Time
	Blocks     []NotionBlock
	Archived   bool
}

// NotionBlock is a block: Type is a Notion block type (paragraph, heading_1, bulleted_list_item, to_do,
// code, table_row, …); Text its text (a table_row's cells separated by "|"); Children its nested blocks.
type NotionBlock struct {
	Type     string
	Text     string
	Checked  bool
	Children []NotionBlock
}

// NewNotion starts a fake workspace accepting token. Close stops it.
func NewNotion(token string) *Notion {
	f := &Notion{sourceFake: newSourceFake(), token: token, pages: map[string]*NotionPage{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/search", f.guard("search", f.search))
	mux.HandleFunc("GET /v1/blocks/{id}/children", f.guard("blocks", f.children))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		notionError(w, http.StatusBadRequest, "invalid_request_url", "Invalid request URL.")
	})
	f.srv = httptest.NewServer(mux)
	return f
}

// URL is the base URL to point a client at (instead of https://api.notion.com).
func (f *Notion) URL() string { return f.srv.URL }

// Close stops the server.
func (f *Notion) Close() { f.srv.Close() }

// Put adds or replaces a page (an edit: set a later LastEdited).
func (f *Notion) Put(p NotionPage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages[p.ID] = &p
}

// Delete removes a page from the workspace (the integration no longer sees it).
func (f *Notion) Delete(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.pages, id)
}

// SetToken replaces the accepted token: the old one is refused from now on, as an expired or revoked one.
func (f *Notion) SetToken(token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.token = token
}

func notionError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "error", "status": status, "code": code, "message": msg})
}

func (f *Notion) guard(endpoint string, h func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ok, ra := f.throttled(); ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(ra.Seconds())))
			notionError(w, http.StatusTooManyRequests, "rate_limited", "You have been rate limited. Please try again in a few minutes.")
			return
		}
		f.mu.Lock()
		token := f.token
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+token {
			notionError(w, http.StatusUnauthorized, "unauthorized", "API token is invalid.")
			return
		}
		if r.Header.Get("Notion-Version") == "" {
			f.violate("%s without Notion-Version", r.URL.Path)
			notionError(w, http.StatusBadRequest, "missing_version", "Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.")
			return
		}
		f.count(endpoint)
		h(w, r)
	}
}

func richTexts(s string) []map[string]any {
	return []map[string]any{{"type": "text", "text": map[string]any{"content": s, "link": nil},
		"annotations": map[string]any{"bold": false, "italic": false, "strikethrough": false, "underline": false, "code": false, "color": "default"},
		"plain_text":  s, "href": nil}}
}

func notionTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func (p *NotionPage) object() map[string]any {
	parent := map[string]any{"type": "workspace", "workspace": true}
	if p.ParentID != "" {
		parent = map[string]any{"type": "page_id", "page_id": p.ParentID}
	}
	return map[string]any{
		"object": "page", "id": p.ID, "created_time": notionTime(p.LastEdited), "last_edited_time": notionTime(p.LastEdited),
		"archived": p.Archived, "in_trash": p.Archived, "parent": parent,
		"url":        "https://www.notion.so/" + strings.ReplaceAll(p.Title, " ", "-") + "-" + strings.ReplaceAll(p.ID, "-", ""),
		"properties": map[string]any{"title": map[string]any{"id": "title", "type": "title", "title": richTexts(p.Title)}},
	}
}

// paginate cuts items after the cursor (an item's ID) to one page.
func paginate[T any](items []T, id func(T) string, cursor string, size int) ([]T, string) {
	start := 0
	if cursor != "" {
		start = slices.IndexFunc(items, func(it T) bool { return id(it) == cursor })
		if start < 0 {
			return nil, ""
		}
	}
	end := min(start+size, len(items))
	next := ""
	if end < len(items) {
		next = id(items[end])
	}
	return items[start:end], next
}

func (f *Notion) search(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Filter struct {
			Property string `json:"property"`
			Value    string `json:"value"`
		} `json:"filter"`
		StartCursor string `json:"start_cursor"`
		PageSize    int    `json:"page_size"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		notionError(w, http.StatusBadRequest, "invalid_json", "Error parsing JSON body.")
		return
	}
	if body.PageSize > 100 {
		notionError(w, http.StatusBadRequest, "validation_error", "body.page_size should be ≤ `100`.")
		return
	}
	f.mu.Lock()
	var pages []*NotionPage
	for _, p := range f.pages {
		if !p.Archived && (body.Filter.Value == "" || body.Filter.Value == "page") {
			pages = append(pages, p)
		}
	}
	size := f.pageSize
	f.mu.Unlock()
	if body.PageSize > 0 {
		size = min(size, body.PageSize)
	}
	slices.SortFunc(pages, func(a, b *NotionPage) int {
		if c := b.LastEdited.Compare(a.LastEdited); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	got, next := paginate(pages, func(p *NotionPage) string { return p.ID }, body.StartCursor, size)
	results := make([]map[string]any, len(got))
	for i, p := range got {
		results[i] = p.object()
	}
	writeNotionList(w, results, next, "page_or_database")
}

func writeNotionList(w http.ResponseWriter, results []map[string]any, next, typ string) {
	var cursor any
	if next != "" {
		cursor = next
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "results": results, "next_cursor": cursor,
		"has_more": next != "", "type": typ, typ: map[string]any{}})
}

// blockID names the blocks of a page: <page>/<i>/<j>… (Notion's are UUIDs; the fake only needs them unique).
func (f *Notion) find(id string) ([]NotionBlock, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pageID, path, _ := strings.Cut(id, "~")
	p, ok := f.pages[pageID]
	if !ok || p.Archived {
		return nil, false
	}
	blocks := p.Blocks
	if path == "" {
		return blocks, true
	}
	for _, part := range strings.Split(path, ".") {
		i, err := strconv.Atoi(part)
		if err != nil || i < 0 || i >= len(blocks) {
			return nil, false
		}
		blocks = blocks[i].Children
	}
	return blocks, true
}

func (f *Notion) children(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	blocks, ok := f.find(id)
	if !ok {
		notionError(w, http.StatusNotFound, "object_not_found", fmt.Sprintf("Could not find block with ID: %s. Make sure the relevant pages and databases are shared with your integration.", id))
		return
	}
	size := 100
	if ps := r.URL.Query().Get("page_size"); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 100 {
			notionError(w, http.StatusBadRequest, "validation_error", "page_size should be a number between 1 and 100.")
			return
		}
		size = n
	}
	f.mu.Lock()
	size = min(size, f.pageSize)
	f.mu.Unlock()
	prefix := id + "~"
	if strings.Contains(id, "~") {
		prefix = id + "."
	}
	type indexed struct {
		id string
		b  NotionBlock
	}
	all := make([]indexed, len(blocks))
	for i, b := range blocks {
		all[i] = indexed{prefix + strconv.Itoa(i), b}
	}
	got, next := paginate(all, func(x indexed) string { return x.id }, r.URL.Query().Get("start_cursor"), size)
	results := make([]map[string]any, len(got))
	for i, x := range got {
		c := map[string]any{"rich_text": richTexts(x.b.Text), "color": "default"}
		switch x.b.Type {
		case "to_do":
			c["checked"] = x.b.Checked
		case "code":
			c["language"] = "go"
		case "table_row":
			var cells [][]map[string]any
			for _, cell := range strings.Split(x.b.Text, "|") {
				cells = append(cells, richTexts(strings.TrimSpace(cell)))
			}
			c = map[string]any{"cells": cells}
		case "table":
			c = map[string]any{"table_width": 2, "has_column_header": true, "has_row_header": false}
		case "child_page":
			c = map[string]any{"title": x.b.Text}
		case "divider":
			c = map[string]any{}
		}
		results[i] = map[string]any{"object": "block", "id": x.id, "type": x.b.Type, "has_children": len(x.b.Children) > 0,
			"archived": false, "in_trash": false, x.b.Type: c}
	}
	writeNotionList(w, results, next, "block")
}
