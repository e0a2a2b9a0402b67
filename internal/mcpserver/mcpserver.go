// Package mcpserver is ragd's Model Context Protocol server (github.com/modelcontextprotocol/go-sdk): the
// tools an agent or IDE uses to search the documents, get cited answers, browse collections and documents,
// and add a text. `ragd mcp` serves it over stdio as the local principal; `ragd serve` serves it over
// streamable HTTP at /mcp, as the principal of the request's API key (internal/server). Like the HTTP
// server it knows ragd's services only through small interfaces, and every failure is an MCP tool error
// (the result's isError) whose text is ragd's error code and safe message, never a crash of the session.
package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/buildinfo"
	"github.com/ragd/ragd/internal/filter"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// Searcher searches the documents (*reembed.Service implements it).
type Searcher interface {
	Search(ctx context.Context, p rag.Principal, req rag.SearchRequest) (*rag.SearchResult, error)
}

// Answerer answers questions (*answer.Service implements it).
type Answerer interface {
	Ask(ctx context.Context, p rag.Principal, req rag.AskRequest, emit func(rag.AnswerEvent) error) (*rag.Answer, error)
}

// Collections lists collections (rag.Store implements it).
type Collections interface {
	ListCollections(ctx context.Context) ([]*rag.Collection, error)
}

// Documents lists and reads documents as a principal sees them (rag.Store implements it).
type Documents interface {
	ListDocuments(ctx context.Context, p rag.Principal, q rag.DocumentQuery) (*rag.DocumentPage, error)
	GetDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error)
	ListChunks(ctx context.Context, p rag.Principal, id string) ([]*rag.Chunk, error)
}

// Ingester adds a document: `ragd mcp` processes it before answering (the CLI's path), `ragd serve` queues
// it for the job runner (the upload path).
type Ingester interface {
	IngestText(ctx context.Context, p rag.Principal, req ingest.Request) (Ingested, error)
}

// Ingested is what an Ingester did: the document, its status now, its chunks, and whether the content was
// new (ingest.Queued) or already current (ingest.Unchanged).
type Ingested struct {
	ID      string
	Status  rag.Status
	Chunks  int
	Outcome ingest.Outcome
}

// Deps is what the MCP server serves.
type Deps struct {
	Search      Searcher
	Answers     Answerer
	Collections Collections
	Documents   Documents
	Ingest      Ingester
	// Principal is who a call runs as when the request carries no authenticated principal (stdio, an HTTP
	// server without API keys). Nil refuses such calls with unauthorized: an HTTP server with keys.
	Principal *rag.Principal
	// CanWrite says whether a principal may add documents (ingest_text); nil means CanWrite.
	CanWrite func(rag.Principal) bool
	// MaxTextBytes bounds ingest_text's text; 0 means MaxTextBytes.
	MaxTextBytes int64
	// Audit, when set, is told of every tool call and resource read once it is answered (the HTTP server
	// records it in the audit log).
	Audit func(ctx context.Context, c Call)
}

// Call is a tool call or resource read as Deps.Audit is told of it.
type Call struct {
	// Principal is who called (its ID is "" when the call was refused for want of one).
	Principal rag.Principal
	// Tool is the tool"s name, or "resource" for a read of a document resource.
	Tool string
	// Documents are the documents the call read or changed: the hits of search, the passages given to ask,
	// the document read, listed or added.
	Documents []string
	// Code is the error code of a failed call ("" when it succeeded).
	Code rag.Code
}

// actions names the audit action of a tool call (Call.Tool); others are "request".
var actions = map[string]string{
	"search":         audit.Search,
	"ask":            audit.Chat,
	"get_document":   audit.DocumentRead,
	"resource":       audit.DocumentRead,
	"list_documents": audit.DocumentList,
	"ingest_text":    audit.DocumentUpload,
}

// Event is c as an audit event from client (docs/security.md "Audit log"): the tool is the detail, the
// documents it read or added, the error code of a failed call (denied for unauthorized and forbidden).
func (c Call) Event(client string) audit.Event {
	e := audit.Event{At: time.Now(), Principal: c.Principal.ID, Action: cmp.Or(actions[c.Tool], "request"), Documents: c.Documents,
		Client: client, Outcome: audit.OK, Detail: "mcp " + c.Tool}
	if e.Action == audit.DocumentRead && len(c.Documents) == 1 {
		e.Target = c.Documents[0]
	}
	if c.Code != "" {
		e.Outcome, e.Detail = audit.Failed, e.Detail+": "+string(c.Code)
		if c.Code == rag.CodeUnauthorized || c.Code == rag.CodeForbidden {
			e.Outcome = audit.Denied
		}
	}
	return e
}

// callNote collects the documents a call touches, for Deps.Audit.
type callNote struct {
	mu   sync.Mutex
	docs []string
}

type callNoteKey struct{}

// noteDocuments adds ids to the audit record of the call running in ctx.
func noteDocuments(ctx context.Context, ids ...string) {
	n, ok := ctx.Value(callNoteKey{}).(*callNote)
	if !ok {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range ids {
		if id != "" && !slices.Contains(n.docs, id) {
			n.docs = append(n.docs, id)
		}
	}
}

// audit runs a call with a note in its context and tells Deps.Audit what it did.
func (h *handlers) audit(ctx context.Context, extra *mcp.RequestExtra, tool string, run func(ctx context.Context) error) {
	if h.d.Audit == nil {
		_ = run(ctx)
		return
	}
	note := &callNote{}
	err := run(context.WithValue(ctx, callNoteKey{}, note))
	p, _ := h.principalOf(extra)
	c := Call{Principal: p, Tool: tool, Documents: note.docs}
	if err != nil {
		c.Code = rag.CodeInternal
		var te *toolErr
		if errors.As(err, &te) {
			c.Code = te.code
		}
	}
	h.d.Audit(ctx, c)
}

// audited is a tool handler that tells Deps.Audit of each call.
func audited[In, Out any](h *handlers, tool string, fn mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		h.audit(ctx, req.Extra, tool, func(ctx context.Context) error {
			res, out, err = fn(ctx, req, in)
			return err
		})
		return res, out, err
	}
}

// CanWrite is the default write permission: admins. Every API key is an admin today; when keys get scopes
// this is where "write" is read.
func CanWrite(p rag.Principal) bool { return p.Admin }

// PrincipalExtra is the key of auth.TokenInfo.Extra under which the HTTP server puts the request's
// rag.Principal.
const PrincipalExtra = "ragd.principal"

// Limits of the tools' inputs and outputs.
const (
	// MaxListDocuments is list_documents' largest limit (default 20).
	MaxListDocuments = 100
	// MaxDocumentChars is the most text get_document returns at once; a longer range is cut at a chunk
	// boundary and says truncated, with the page to continue from.
	MaxDocumentChars = 100_000
	// MaxTextBytes is the largest text ingest_text takes by default (1 MiB, within the 4 MiB body the
	// streamable HTTP transport reads); a larger file goes through POST /api/documents.
	MaxTextBytes = 1 << 20
)

// New returns the MCP server with ragd's tools.
func New(d Deps) *mcp.Server {
	if d.CanWrite == nil {
		d.CanWrite = CanWrite
	}
	if d.MaxTextBytes <= 0 {
		d.MaxTextBytes = MaxTextBytes
	}
	h := &handlers{d: d, maxDocumentChars: MaxDocumentChars}
	// Hints for clients that ask before running a tool: the read tools change nothing and reach nothing
	// outside ragd; ingest_text adds (a version of) a document and destroys nothing.
	no := false
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no}
	s := mcp.NewServer(&mcp.Implementation{Name: "ragd", Title: "ragd documents", Version: buildinfo.Get().Version},
		&mcp.ServerOptions{Instructions: "ragd answers questions from the documents in its collections, with numbered " +
			"citations. Use ask for a cited answer, search for the passages themselves, list_collections and " +
			"list_documents to see what is there, get_document to read pages of one document."})
	mcp.AddTool(s, &mcp.Tool{Name: "search", Annotations: readOnly, Title: "Search the documents",
		Description: "Hybrid (vector + keyword) search over the documents. Returns the best passages, each with its document, " +
			"pages, section and score. Use it to find where something is said; use ask for an answer."}, audited(h, "search", h.search))
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Annotations: readOnly, Title: "Answer from the documents",
		Description: "Answers a question from the documents, citing passages as [n]; the sources list says which document, page " +
			"and section each number is. not_found is true when the documents do not cover the question."}, audited(h, "ask", h.ask))
	mcp.AddTool(s, &mcp.Tool{Name: "list_collections", Annotations: readOnly, Title: "List collections",
		Description: "Lists the collections (groups of documents) with their descriptions and document counts."}, audited(h, "list_collections", h.listCollections))
	mcp.AddTool(s, &mcp.Tool{Name: "list_documents", Annotations: readOnly, Title: "List documents",
		Description: "Lists documents, newest first, optionally in one collection or with a title containing some text."}, audited(h, "list_documents", h.listDocuments))
	mcp.AddTool(s, &mcp.Tool{Name: "get_document", Annotations: readOnly, Title: "Read a document",
		Description: fmt.Sprintf("Returns the text of a document, or of a page range of it (PDF and other paged formats). "+
			"At most %d characters at a time: a longer text is cut and says where to continue.", MaxDocumentChars)}, audited(h, "get_document", h.getDocument))
	mcp.AddTool(s, &mcp.Tool{Name: "ingest_text", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}, Title: "Add a text document",
		Description: "Adds a text (Markdown by default) as a document to a collection, or a new version of the document with the " +
			"same name. Needs an API key with write permission."}, audited(h, "ingest_text", h.ingestText))
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: DocumentURIPrefix + "{id}", Name: "document", Title: "A document's text",
		Description: fmt.Sprintf("The text of a document (its first %d characters; get_document reads page ranges).", MaxDocumentChars),
		MIMEType:    "text/markdown"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (res *mcp.ReadResourceResult, err error) {
		h.audit(ctx, req.Extra, "resource", func(ctx context.Context) error {
			res, err = h.readDocument(ctx, req)
			return err
		})
		return res, err
	})
	return s
}

// DocumentURIPrefix starts the URI of a document resource: ragd://documents/<id>.
const DocumentURIPrefix = "ragd://documents/"

// readDocument reads the resource ragd://documents/<id>: the document's title as a heading, then its text
// (as get_document gives it, from the first page). A document the principal cannot see is not found.
func (h *handlers) readDocument(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	p, err := h.principalOf(req.Extra)
	if err != nil {
		return nil, toolError(err)
	}
	id, ok := strings.CutPrefix(uri, DocumentURIPrefix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	doc, err := h.d.Documents.GetDocument(ctx, p, id)
	if err == nil {
		noteDocuments(ctx, doc.ID)
	}
	if errors.Is(err, rag.ErrNotFound) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, toolError(err)
	}
	chunks, err := h.d.Documents.ListChunks(ctx, p, doc.ID)
	if err != nil {
		return nil, toolError(err)
	}
	out := pagesText(chunks, 0, 0, h.maxDocumentChars)
	text := "# " + doc.Title + "\n\n" + out.Text
	if out.Truncated {
		text += fmt.Sprintf("\n\n[… cut at %d characters: get_document with page_start %d reads on]", h.maxDocumentChars, out.NextPage)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}, nil
}

type handlers struct {
	d                Deps
	maxDocumentChars int
}

// principal is who the call runs as: the HTTP request's authenticated principal, else Deps.Principal.
func (h *handlers) principal(req *mcp.CallToolRequest) (rag.Principal, error) {
	return h.principalOf(req.Extra)
}

func (h *handlers) principalOf(extra *mcp.RequestExtra) (rag.Principal, error) {
	if extra != nil && extra.TokenInfo != nil {
		if p, ok := extra.TokenInfo.Extra[PrincipalExtra].(rag.Principal); ok {
			return p, nil
		}
	}
	if h.d.Principal != nil {
		return *h.d.Principal, nil
	}
	return rag.Principal{}, rag.Errorf(rag.CodeUnauthorized, "an API key is required")
}

// toolError is err as the tool's error text: ragd's code and its safe message ("internal error" for
// unexpected failures), as the HTTP API shows them.
func toolError(err error) error {
	return &toolErr{code: rag.ErrorCode(err), text: fmt.Sprintf("%s: %s", rag.ErrorCode(err), rag.ErrorMessage(err))}
}

// toolErr is a tool's error: its text, and its code for Deps.Audit.
type toolErr struct {
	code rag.Code
	text string
}

func (e *toolErr) Error() string { return e.text }

// filterOf is the retrieval filter of a tool's collection and filter expressions (internal/filter's syntax,
// as `ragd search --filter`).
func filterOf(collection string, exprs []string) (rag.Filter, error) {
	f, err := filter.Parse(exprs)
	if err != nil {
		return f, err
	}
	if c := strings.TrimSpace(collection); c != "" {
		f.Collections = append(f.Collections, c)
	}
	return f, f.Check()
}

// question normalises a query or question and truncates it at rag.MaxQuestionChars, as the HTTP API does.
func question(s string) (string, bool) {
	q := strings.TrimSpace(textproc.Normalize(s))
	if utf8.RuneCountInString(q) > rag.MaxQuestionChars {
		return string([]rune(q)[:rag.MaxQuestionChars]), true
	}
	return q, false
}

// Passage is a passage of a document as the tools return it.
type Passage struct {
	N          int     `json:"n" jsonschema:"the citation number"`
	DocumentID string  `json:"document_id"`
	Title      string  `json:"title"`
	Source     string  `json:"source" jsonschema:"the file or address the document came from"`
	PageStart  int     `json:"page_start,omitempty"`
	PageEnd    int     `json:"page_end,omitempty"`
	Section    string  `json:"section,omitempty"`
	Text       string  `json:"text"`
	Score      float64 `json:"score,omitempty"`
}

func passageOf(n int, h rag.Hit) Passage {
	return Passage{N: n, DocumentID: h.DocumentID, Title: h.Title, Source: h.Source, PageStart: h.PageStart,
		PageEnd: h.PageEnd, Section: h.Section, Text: h.Text, Score: h.Score}
}

// SearchInput is the search tool's input.
type SearchInput struct {
	Query      string   `json:"query" jsonschema:"what to search for, in any words (Korean or English); at most 500 characters are used"`
	Collection string   `json:"collection,omitempty" jsonschema:"only this collection (see list_collections)"`
	Filters    []string `json:"filters,omitempty" jsonschema:"conditions like type=pdf, tag=hr, year>=2020, created_after=2024-01-01, document=<id>; a|b for any of"`
	K          int      `json:"k,omitempty" jsonschema:"how many passages, 1 to 100 (default 10)"`
}

// SearchOutput is the search tool's result.
type SearchOutput struct {
	Query     string    `json:"query" jsonschema:"the query as searched"`
	Truncated bool      `json:"truncated,omitempty"`
	Passages  []Passage `json:"passages"`
}

func (h *handlers) search(ctx context.Context, req *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	p, err := h.principal(req)
	if err != nil {
		return nil, SearchOutput{}, toolError(err)
	}
	q, truncated := question(in.Query)
	if q == "" {
		return nil, SearchOutput{}, toolError(rag.Errorf(rag.CodeInvalid, "query is required"))
	}
	if err := rag.CheckK(in.K, rag.MaxSearchK); err != nil {
		return nil, SearchOutput{}, toolError(err)
	}
	f, err := filterOf(in.Collection, in.Filters)
	if err != nil {
		return nil, SearchOutput{}, toolError(err)
	}
	res, err := h.d.Search.Search(ctx, p, rag.SearchRequest{Query: q, Filter: f, K: in.K})
	if err != nil {
		return nil, SearchOutput{}, toolError(err)
	}
	out := SearchOutput{Query: q, Truncated: truncated, Passages: []Passage{}}
	var text strings.Builder
	for i, hit := range res.Hits {
		noteDocuments(ctx, hit.DocumentID)
		out.Passages = append(out.Passages, passageOf(i+1, hit))
		fmt.Fprintf(&text, "[%d] %s\n%s\n\n", i+1, rag.CitationLine(hit), hit.Text)
	}
	if len(res.Hits) == 0 {
		text.WriteString("No passage matches.")
	}
	return textResult(text.String()), out, nil
}

// textResult is a result whose content is text (the structured output goes beside it).
func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.TrimSpace(s)}}}
}

// AskInput is the ask tool's input.
type AskInput struct {
	Question    string   `json:"question" jsonschema:"the question, in Korean or English; at most 500 characters are used"`
	Collection  string   `json:"collection,omitempty" jsonschema:"answer only from this collection (see list_collections)"`
	Filters     []string `json:"filters,omitempty" jsonschema:"conditions like type=pdf, tag=hr, year>=2020; a|b for any of"`
	DocumentIDs []string `json:"document_ids,omitempty" jsonschema:"answer only from these documents (see list_documents)"`
	K           int      `json:"k,omitempty" jsonschema:"passages given to the answerer, 1 to 20 (default 5)"`
}

// AskOutput is the ask tool's result.
type AskOutput struct {
	Answer    string    `json:"answer" jsonschema:"the answer in markdown, citing sources as [n]"`
	NotFound  bool      `json:"not_found" jsonschema:"true when the documents do not cover the question"`
	Truncated bool      `json:"truncated,omitempty" jsonschema:"the question was cut at 500 characters"`
	Sources   []Passage `json:"sources" jsonschema:"the cited passages by their number n"`
}

func (h *handlers) ask(ctx context.Context, req *mcp.CallToolRequest, in AskInput) (*mcp.CallToolResult, AskOutput, error) {
	p, err := h.principal(req)
	if err != nil {
		return nil, AskOutput{}, toolError(err)
	}
	if strings.TrimSpace(in.Question) == "" {
		return nil, AskOutput{}, toolError(rag.Errorf(rag.CodeQuestionRequired, "a question is required"))
	}
	if err := rag.CheckK(in.K, rag.MaxAnswerK); err != nil {
		return nil, AskOutput{}, toolError(err)
	}
	f, err := filterOf(in.Collection, in.Filters)
	if err == nil {
		f.DocumentIDs = append(f.DocumentIDs, in.DocumentIDs...)
		err = f.Check()
	}
	if err != nil {
		return nil, AskOutput{}, toolError(err)
	}
	ans, err := h.d.Answers.Ask(ctx, p, rag.AskRequest{Question: in.Question, Filter: f, K: in.K}, func(ev rag.AnswerEvent) error {
		if ev.Type == rag.AnswerSources { // the passages given to the answer, cited or not
			for _, src := range ev.Sources {
				noteDocuments(ctx, src.DocumentID)
			}
		}
		return nil
	})
	if err != nil {
		return nil, AskOutput{}, toolError(err)
	}
	out := AskOutput{Answer: ans.Text, NotFound: ans.NotFound, Truncated: ans.Truncated, Sources: []Passage{}}
	for _, s := range ans.Sources {
		out.Sources = append(out.Sources, passageOf(s.N, s.Hit))
	}
	text := ans.Text
	if len(ans.Sources) > 0 {
		text += "\n\nSources:\n" + rag.CitationList(ans.Sources)
	}
	return textResult(text), out, nil
}

// CollectionInfo is a collection as list_collections shows it.
type CollectionInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Documents   int    `json:"documents" jsonschema:"how many documents you can see in it"`
}

// ListCollectionsOutput is list_collections' result.
type ListCollectionsOutput struct {
	Collections []CollectionInfo `json:"collections"`
}

func (h *handlers) listCollections(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, ListCollectionsOutput, error) {
	p, err := h.principal(req)
	if err != nil {
		return nil, ListCollectionsOutput{}, toolError(err)
	}
	colls, err := h.d.Collections.ListCollections(ctx)
	if err != nil {
		return nil, ListCollectionsOutput{}, toolError(err)
	}
	out := ListCollectionsOutput{Collections: []CollectionInfo{}}
	for _, c := range colls {
		page, err := h.d.Documents.ListDocuments(ctx, p, rag.DocumentQuery{Filter: rag.Filter{Collections: []string{c.Name}}, Limit: 1})
		if err != nil {
			return nil, ListCollectionsOutput{}, toolError(err)
		}
		out.Collections = append(out.Collections, CollectionInfo{Name: c.Name, Description: c.Description, Documents: page.Total})
	}
	return nil, out, nil
}

// ListDocumentsInput is list_documents' input.
type ListDocumentsInput struct {
	Collection    string `json:"collection,omitempty" jsonschema:"only this collection"`
	TitleContains string `json:"title_contains,omitempty" jsonschema:"only documents whose title contains this text (any case)"`
	Limit         int    `json:"limit,omitempty" jsonschema:"how many, 1 to 100 (default 20)"`
	Offset        int    `json:"offset,omitempty" jsonschema:"skip this many (for the next page)"`
}

// DocumentInfo is a document as list_documents shows it.
type DocumentInfo struct {
	ID         string    `json:"id"`
	Title      string    `json:"title"`
	Source     string    `json:"source"`
	MediaType  string    `json:"media_type"`
	Status     string    `json:"status" jsonschema:"queued, processing, ready or failed"`
	Error      string    `json:"error,omitempty"`
	Chunks     int       `json:"chunks"`
	Tags       []string  `json:"tags,omitempty"`
	UpdatedAt  time.Time `json:"updated_at"`
	Collection string    `json:"collection_id"`
	URI        string    `json:"uri" jsonschema:"the document as an MCP resource (its text)"`
}

// ListDocumentsOutput is list_documents' result.
type ListDocumentsOutput struct {
	Documents []DocumentInfo `json:"documents"`
	Total     int            `json:"total" jsonschema:"how many documents match in all"`
}

func (h *handlers) listDocuments(ctx context.Context, req *mcp.CallToolRequest, in ListDocumentsInput) (*mcp.CallToolResult, ListDocumentsOutput, error) {
	p, err := h.principal(req)
	if err != nil {
		return nil, ListDocumentsOutput{}, toolError(err)
	}
	if in.Limit < 0 || in.Limit > MaxListDocuments || in.Offset < 0 {
		return nil, ListDocumentsOutput{}, toolError(rag.Errorf(rag.CodeInvalid, "limit must be between 1 and %d and offset not negative", MaxListDocuments))
	}
	if in.Limit == 0 {
		in.Limit = 20
	}
	q := rag.DocumentQuery{TitleContains: in.TitleContains, Limit: in.Limit, Offset: in.Offset}
	if c := strings.TrimSpace(in.Collection); c != "" {
		q.Collections = []string{c}
	}
	page, err := h.d.Documents.ListDocuments(ctx, p, q)
	if err != nil {
		return nil, ListDocumentsOutput{}, toolError(err)
	}
	out := ListDocumentsOutput{Documents: []DocumentInfo{}, Total: page.Total}
	for _, d := range page.Documents {
		out.Documents = append(out.Documents, DocumentInfo{ID: d.ID, Title: d.Title, Source: d.Source, MediaType: d.MediaType,
			Status: string(d.Status), Error: d.Error, Chunks: d.ChunkCount, Tags: d.Tags, UpdatedAt: d.UpdatedAt, Collection: d.CollectionID,
			URI: DocumentURIPrefix + d.ID})
	}
	return nil, out, nil
}

// GetDocumentInput is get_document's input.
type GetDocumentInput struct {
	ID        string `json:"id" jsonschema:"the document's id (from list_documents, search or ask)"`
	PageStart int    `json:"page_start,omitempty" jsonschema:"first page to return (default 1)"`
	PageEnd   int    `json:"page_end,omitempty" jsonschema:"last page to return (default the last)"`
}

// GetDocumentOutput is get_document's result.
type GetDocumentOutput struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Source    string `json:"source"`
	Pages     int    `json:"pages" jsonschema:"the document's last page (0 for formats without pages)"`
	PageStart int    `json:"page_start,omitempty" jsonschema:"first page of the text returned"`
	PageEnd   int    `json:"page_end,omitempty" jsonschema:"last page of the text returned"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated" jsonschema:"the range had more text: ask again from next_page"`
	NextPage  int    `json:"next_page,omitempty"`
}

func (h *handlers) getDocument(ctx context.Context, req *mcp.CallToolRequest, in GetDocumentInput) (*mcp.CallToolResult, GetDocumentOutput, error) {
	p, err := h.principal(req)
	if err != nil {
		return nil, GetDocumentOutput{}, toolError(err)
	}
	if strings.TrimSpace(in.ID) == "" {
		return nil, GetDocumentOutput{}, toolError(rag.Errorf(rag.CodeInvalid, "id is required"))
	}
	if in.PageStart < 0 || in.PageEnd < 0 || (in.PageEnd > 0 && in.PageEnd < in.PageStart) {
		return nil, GetDocumentOutput{}, toolError(rag.Errorf(rag.CodeInvalid, "page range %d–%d: want 1 ≤ page_start ≤ page_end", in.PageStart, in.PageEnd))
	}
	doc, err := h.d.Documents.GetDocument(ctx, p, in.ID)
	if err == nil {
		noteDocuments(ctx, doc.ID)
	}
	if errors.Is(err, rag.ErrNotFound) {
		err = rag.Errorf(rag.CodeNotFound, "no document %q", in.ID)
	}
	if err != nil {
		return nil, GetDocumentOutput{}, toolError(err)
	}
	chunks, err := h.d.Documents.ListChunks(ctx, p, doc.ID)
	if err != nil {
		return nil, GetDocumentOutput{}, toolError(err)
	}
	out := pagesText(chunks, in.PageStart, in.PageEnd, h.maxDocumentChars)
	out.ID, out.Title, out.Source = doc.ID, doc.Title, doc.Source
	return textResult(out.Text), out, nil
}

// pagesText joins the text of the chunks on pages from–to (0: open) in order, dropping the characters a
// chunk shares with the one before (chunks overlap), up to limit characters: the text stops before the
// chunk that would pass it, and NextPage is that chunk's page.
func pagesText(chunks []*rag.Chunk, from, to, limit int) GetDocumentOutput {
	var out GetDocumentOutput
	var b strings.Builder
	n, end := 0, -1 // characters written; the document offset the text reaches
	for _, c := range chunks {
		out.Pages = max(out.Pages, c.PageEnd)
		if (from > 0 && c.PageEnd > 0 && c.PageEnd < from) || (to > 0 && c.PageStart > to) {
			continue
		}
		if out.Truncated {
			continue
		}
		text := c.Text
		runes := utf8.RuneCountInString(text)
		sep := "\n\n"
		if end > c.StartOffset && end < c.EndOffset && runes == c.EndOffset-c.StartOffset {
			// The chunk is its span of the document: keep only what follows the text so far.
			text, sep = string([]rune(text)[end-c.StartOffset:]), ""
			runes = c.EndOffset - end
		} else if end >= c.EndOffset && runes == c.EndOffset-c.StartOffset {
			continue // wholly inside the text so far
		}
		if b.Len() == 0 {
			sep = ""
		}
		if n+runes+utf8.RuneCountInString(sep) > limit {
			out.Truncated, out.NextPage = true, c.PageStart
			continue
		}
		if out.PageStart == 0 || (c.PageStart > 0 && c.PageStart < out.PageStart) {
			out.PageStart = c.PageStart
		}
		out.PageEnd = max(out.PageEnd, c.PageEnd)
		b.WriteString(sep)
		b.WriteString(text)
		n += runes + utf8.RuneCountInString(sep)
		end = max(end, c.EndOffset)
	}
	out.Text = b.String()
	return out
}

// IngestTextInput is ingest_text's input.
type IngestTextInput struct {
	Title      string   `json:"title,omitempty" jsonschema:"the document's title (a title or a name is required)"`
	Text       string   `json:"text" jsonschema:"the document's text (Markdown unless name says another format)"`
	Collection string   `json:"collection,omitempty" jsonschema:"the collection to add it to (default: default, created when missing)"`
	Name       string   `json:"name,omitempty" jsonschema:"file name, whose extension picks the format (.md, .txt, .html); also the document's key: the same name again makes a new version (default <title>.md)"`
	Tags       []string `json:"tags,omitempty"`
}

// IngestTextOutput is ingest_text's result.
type IngestTextOutput struct {
	ID      string `json:"id"`
	Status  string `json:"status" jsonschema:"queued (being indexed), ready or failed"`
	Outcome string `json:"outcome" jsonschema:"queued (new content) or unchanged (the same text is already the current version)"`
	Chunks  int    `json:"chunks"`
}

func (h *handlers) ingestText(ctx context.Context, req *mcp.CallToolRequest, in IngestTextInput) (*mcp.CallToolResult, IngestTextOutput, error) {
	p, err := h.principal(req)
	if err != nil {
		return nil, IngestTextOutput{}, toolError(err)
	}
	if !h.d.CanWrite(p) {
		return nil, IngestTextOutput{}, toolError(rag.Errorf(rag.CodeForbidden, "this API key may not add documents (ingest_text needs write permission)"))
	}
	title, name := strings.TrimSpace(in.Title), strings.TrimSpace(in.Name)
	if title == "" && name == "" {
		return nil, IngestTextOutput{}, toolError(rag.Errorf(rag.CodeInvalid, "a text document needs a title or a name"))
	}
	if strings.TrimSpace(in.Text) == "" {
		return nil, IngestTextOutput{}, toolError(rag.Errorf(rag.CodeInvalid, "text is required"))
	}
	if int64(len(in.Text)) > h.d.MaxTextBytes {
		return nil, IngestTextOutput{}, toolError(rag.Errorf(rag.CodePayloadTooLarge, "text is over the limit of %d bytes (larger files: POST /api/documents)", h.d.MaxTextBytes))
	}
	if name == "" {
		name = title + ".md"
	}
	got, err := h.d.Ingest.IngestText(ctx, p, ingest.Request{Collection: strings.TrimSpace(in.Collection), Name: name,
		Title: title, Data: []byte(in.Text), Tags: in.Tags, Owner: p.ID})
	if err != nil {
		return nil, IngestTextOutput{}, toolError(err)
	}
	noteDocuments(ctx, got.ID)
	out := IngestTextOutput{ID: got.ID, Status: string(got.Status), Outcome: string(got.Outcome), Chunks: got.Chunks}
	return textResult(fmt.Sprintf("%s: document %s is %s (%d chunks)", got.Outcome, got.ID, got.Status, got.Chunks)), out, nil
}
