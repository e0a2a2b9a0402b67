package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/filter"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/meta"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
)

// documentView is a document as the API shows it. Progress is a percentage (0–100) of the current work;
// Pending is true while a new version is queued or being processed (the current version stays searchable).
type documentView struct {
	ID           string         `json:"id"`
	CollectionID string         `json:"collection_id"`
	ExternalID   string         `json:"external_id"`
	Title        string         `json:"title"`
	Source       string         `json:"source"`
	MediaType    string         `json:"media_type"`
	Status       rag.Status     `json:"status"`
	Stage        rag.Stage      `json:"stage"`
	Progress     int            `json:"progress"`
	Pending      bool           `json:"pending"`
	ErrorCode    rag.Code       `json:"error_code,omitempty"`
	Error        string         `json:"error,omitempty"`
	Version      int            `json:"version"`
	ChunkCount   int            `json:"chunk_count"`
	Size         int64          `json:"size"`
	ContentHash  string         `json:"content_hash,omitempty"`
	Tags         []string       `json:"tags"`
	Metadata     map[string]any `json:"metadata,omitempty"`
	Owner        string         `json:"owner"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
	// Outcome is set on upload responses: queued (will be processed) or unchanged (same content as now).
	Outcome string `json:"outcome,omitempty"`
	// Versions is set by GET /api/documents/{id}: the committed versions, newest first.
	Versions []*rag.DocumentVersion `json:"versions,omitempty"`
	// DeletedAt is set on a deleted document (GET /api/documents?deleted=true), PurgeAt when it will be
	// removed for good; it can be restored until then.
	DeletedAt *time.Time `json:"deleted_at,omitempty"`
	PurgeAt   *time.Time `json:"purge_at,omitempty"`
}

func viewDocument(d *rag.Document) documentView {
	tags := d.Tags
	if tags == nil {
		tags = []string{}
	}
	return documentView{
		ID: d.ID, CollectionID: d.CollectionID, ExternalID: d.ExternalID, Title: d.Title, Source: d.Source,
		MediaType: d.MediaType, Status: d.Status, Stage: d.Stage,
		Progress: int(math.Round(100 * math.Max(0, math.Min(1, d.Progress)))),
		Pending:  d.PendingHash != "", ErrorCode: d.ErrorCode, Error: d.Error, Version: d.Version,
		ChunkCount: d.ChunkCount, Size: d.Size, ContentHash: d.ContentHash, Tags: tags, Metadata: d.Metadata,
		Owner: d.Owner, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
	}
}

// ---- listing and reading ----

// documentQuery reads GET /api/documents parameters: q (title contains), tag, type, collection, status
// (each repeatable or comma-separated), created_after/created_before/updated_after/updated_before, limit
// (1–500, default 50), offset. Types and dates read as everywhere (package filter): a short type name such as
// pdf stands for its media types, and a date YYYY-MM-DD for the whole day.
func documentQuery(r *http.Request) (rag.DocumentQuery, error) {
	q := rag.DocumentQuery{Limit: 50}
	// Not r.URL.Query(), which drops what it cannot parse (over 10,000 parameters, say) and so would
	// widen the listing without a word.
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return q, rag.Errorf(rag.CodeInvalid, "malformed query string: %v", err)
	}
	q.TitleContains = strings.TrimSpace(v.Get("q"))
	if q.Deleted, err = boolParam(v.Get("deleted")); err != nil {
		return q, rag.Errorf(rag.CodeInvalid, "deleted: %v", err)
	}
	for _, key := range []string{"tag", "collection", "type"} {
		if err := filter.Field(&q.Filter, key, listParam(v[key])); err != nil {
			return q, err
		}
	}
	for _, st := range listParam(v["status"]) {
		switch rag.Status(st) {
		case rag.StatusQueued, rag.StatusProcessing, rag.StatusReady, rag.StatusFailed:
			q.Statuses = append(q.Statuses, rag.Status(st))
		default:
			return q, rag.Errorf(rag.CodeInvalid, "status must be queued, processing, ready or failed (got %q)", st)
		}
	}
	for _, key := range []string{"created_after", "created_before", "updated_after", "updated_before"} {
		if d := strings.TrimSpace(v.Get(key)); d != "" {
			if err := filter.Field(&q.Filter, key, []string{d}); err != nil {
				return q, err
			}
		}
	}
	if q.Limit, err = intParam(v.Get("limit"), 50, 1, 500); err != nil {
		return q, rag.Errorf(rag.CodeInvalid, "limit: %v", err)
	}
	if q.Offset, err = intParam(v.Get("offset"), 0, 0, math.MaxInt32); err != nil {
		return q, rag.Errorf(rag.CodeInvalid, "offset: %v", err)
	}
	return q, q.Filter.Check()
}

func listParam(values []string) []string {
	var out []string
	for _, v := range values {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
	}
	return out
}

func intParam(s string, def, lo, hi int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("must be an integer between %d and %d", lo, hi)
	}
	return n, nil
}

func (s *Server) handleListDocuments(w http.ResponseWriter, r *http.Request) {
	q, err := documentQuery(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.deps.Documents.ListDocuments(r.Context(), principalOf(r), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	docs := make([]documentView, len(page.Documents))
	for i, d := range page.Documents {
		docs[i] = s.viewDeleted(d)
	}
	writeJSON(w, http.StatusOK, map[string]any{"documents": docs, "total": page.Total, "limit": q.Limit, "offset": q.Offset})
}

func (s *Server) handleGetDocument(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	d, err := s.deps.Documents.GetDocument(r.Context(), p, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	versions, err := s.deps.Documents.ListVersions(r.Context(), p, d.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v := viewDocument(d)
	v.Versions = versions
	if v.Versions == nil {
		v.Versions = []*rag.DocumentVersion{}
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) handleListChunks(w http.ResponseWriter, r *http.Request) {
	chunks, err := s.deps.Documents.ListChunks(r.Context(), principalOf(r), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"document_id": r.PathValue("id"), "chunks": chunkViews(chunks)})
}

// ---- uploads ----

// upload is one file of a request, read whole and checked before anything is stored.
type upload struct {
	name string // the file's base name: its extension selects the extractor
	// path is the file's path as the client sent it, folders included ("docs/a/readme.md"), when it has
	// folders: it is the document's source and identity, so that docs/a/readme.md and docs/b/readme.md are
	// two documents rather than two versions of one. "" for a bare file name.
	path string
	data []byte
}

// uploadForm is what a request to add documents carries besides the files.
type uploadForm struct {
	files      []upload
	collection string
	title      string
	tags       []string
	metadata   map[string]any
	externalID string
	// metaCSV is a table of per-file metadata (field meta_csv; metaKey names its file column).
	metaCSV []byte
	metaKey string
	// hasText is true for a JSON request with a "text" field (PUT: a new version from text).
	hasText bool
	// url is a JSON request's "url": a document fetched by its ingestion job.
	url string
	// release gives back the request's share of the upload budget; the handler calls it when done.
	release func()
}

// textDocument is the JSON form of POST /api/documents (and PUT /api/documents/{id}).
type textDocument struct {
	Title      string         `json:"title"`
	Text       *string        `json:"text"`
	Name       string         `json:"name"`
	ExternalID string         `json:"external_id"`
	Metadata   map[string]any `json:"metadata"`
	Tags       []string       `json:"tags"`
	Collection string         `json:"collection"`
	// URL (POST only) names a document to fetch: the ingestion job downloads it, under the SSRF rules.
	URL string `json:"url"`
}

const maxFormField = 64 << 10

// readUploadForm reads a multipart upload (files in field "file"; optional fields collection, title, tags,
// metadata as JSON, external_id) or a JSON text document. Every file is checked — size (per file, inclusive
// limit), emptiness and type — before the caller stores any, so a bad file in a batch stores nothing.
// Errors: CodePayloadTooLarge, CodeUnsupportedMediaType, CodeInvalid.
// defaultName names a JSON text that has no "name" ("" means its title + ".md").
//
// The request's bytes are reserved in the upload budget first (its Content-Length, or the most its type
// may carry): when the budget is spent the request is refused with 429 and Retry-After before its body is
// read. The form's release gives the reservation back. Metadata over the limits is invalid_request.
func (s *Server) readUploadForm(w http.ResponseWriter, r *http.Request, defaultName string) (*uploadForm, error) {
	maxFile := s.set.MaxUploadBytes
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var most int64
	switch ct {
	case "multipart/form-data":
		most = maxMultipart(maxFile)
	case "application/json":
		most = maxTextDocument(maxFile)
	case "":
		return nil, rag.Errorf(rag.CodeUnsupportedMediaType, "send multipart/form-data with files in field \"file\", or application/json")
	default:
		return nil, rag.Errorf(rag.CodeUnsupportedMediaType, "content type %s is not accepted; send multipart/form-data or application/json", ct)
	}
	release, err := s.reserveUpload(w, r, most)
	if err != nil {
		return nil, err
	}
	var f *uploadForm
	if ct == "multipart/form-data" {
		f, err = s.readMultipart(w, r, maxFile, checkFile)
	} else {
		f, err = readTextDocument(w, r, maxFile, defaultName)
	}
	if err == nil {
		err = s.set.Metadata.Check(f.metadata)
	}
	if err != nil {
		release()
		return nil, err
	}
	f.release = release
	return f, nil
}

// uploadRetryAfter is what a request refused by the upload budget is told to wait.
const uploadRetryAfter = 5 * time.Second

// reserveUpload takes the request's size (its Content-Length, or most when it has none) from the upload
// budget, or refuses it with 429 rate_limited and Retry-After.
func (s *Server) reserveUpload(w http.ResponseWriter, r *http.Request, most int64) (func(), error) {
	if s.uploads == nil {
		return func() {}, nil
	}
	n := most
	if r.ContentLength >= 0 && r.ContentLength < most {
		n = r.ContentLength
	}
	if !s.uploads.reserve(n) {
		w.Header().Set("Retry-After", strconv.Itoa(int(uploadRetryAfter.Seconds())))
		return nil, rag.Errorf(rag.CodeRateLimited, "uploads in progress hold the server's upload budget of %d bytes (RAGD_UPLOAD_BUDGET_BYTES); retry in %d s",
			s.set.UploadBudget, int(uploadRetryAfter.Seconds()))
	}
	var once sync.Once
	return func() { once.Do(func() { s.uploads.release(n) }) }, nil
}

// maxMultipart is the largest multipart upload request: several files, each checked against maxFile.
func maxMultipart(maxFile int64) int64 { return 4*maxFile + 1<<20 }

// maxTextDocument is the largest JSON text document: the text may be as large as a file, JSON escaping and
// the other fields get some room on top.
func maxTextDocument(maxFile int64) int64 { return 2*maxFile + maxFormField }

// readMultipart reads a multipart request's files (field "file") and form fields; check vets each file.
func (s *Server) readMultipart(w http.ResponseWriter, r *http.Request, maxFile int64, check func(upload) error) (*uploadForm, error) {
	// The whole request may hold several files; the per-file limit is checked on each.
	maxRequest := maxMultipart(maxFile)
	if r.ContentLength > maxRequest {
		return nil, rag.Errorf(rag.CodePayloadTooLarge, "request is over %d bytes; upload the files in separate requests", maxRequest)
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxRequest)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, rag.Errorf(rag.CodeInvalid, "malformed multipart request: %v", err)
	}
	f := &uploadForm{}
	tooBig := func(err error) error {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return rag.Errorf(rag.CodePayloadTooLarge, "request is over %d bytes; upload the files in separate requests", maxRequest)
		}
		return rag.Errorf(rag.CodeInvalid, "malformed multipart request: %v", err)
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, tooBig(err)
		}
		field := part.FormName()
		if field == "file" {
			sent := sentFileName(part)
			name := path.Base(sent)
			if name == "" || name == "." || name == "/" {
				return nil, rag.Errorf(rag.CodeInvalid, "every file needs a file name")
			}
			if len(f.files) == MaxFilesPerUpload {
				return nil, rag.Errorf(rag.CodeInvalid, "at most %d files per request", MaxFilesPerUpload)
			}
			data, err := io.ReadAll(io.LimitReader(part, maxFile+1))
			if err != nil {
				return nil, tooBig(err)
			}
			if int64(len(data)) > maxFile {
				return nil, rag.Errorf(rag.CodePayloadTooLarge, "%s is over the limit of %d bytes per file", name, maxFile)
			}
			u := upload{name: name, data: data}
			if strings.Contains(sent, "/") {
				u.path = sent
			}
			f.files = append(f.files, u)
			continue
		}
		b, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
		if err != nil {
			return nil, tooBig(err)
		}
		if len(b) > maxFormField {
			return nil, rag.Errorf(rag.CodePayloadTooLarge, "form field %q is over %d bytes", field, maxFormField)
		}
		val := strings.TrimSpace(string(b))
		switch field {
		case "collection":
			f.collection = val
		case "title":
			f.title = val
		case "external_id":
			f.externalID = val
		case "tags":
			f.tags = append(f.tags, listParam([]string{val})...)
		case "meta_csv":
			f.metaCSV = b
		case "meta_key":
			f.metaKey = val
		case "metadata":
			if val != "" {
				if err := json.Unmarshal([]byte(val), &f.metadata); err != nil {
					return nil, rag.Errorf(rag.CodeInvalid, "metadata must be a JSON object: %v", err)
				}
			}
		}
	}
	if len(f.files) == 0 && f.metaCSV == nil {
		return nil, rag.Errorf(rag.CodeInvalid, "no file: send the files in multipart field \"file\"")
	}
	if len(f.files) > 1 && (f.title != "" || f.externalID != "") {
		return nil, rag.Errorf(rag.CodeInvalid, "title and external_id apply to a single file")
	}
	for _, u := range f.files {
		if err := check(u); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func readTextDocument(w http.ResponseWriter, r *http.Request, maxFile int64, defaultName string) (*uploadForm, error) {
	var td textDocument
	// The text may be as large as a file; JSON escaping and the other fields get some room on top.
	if err := decodeJSON(w, r, maxTextDocument(maxFile), &td); err != nil {
		return nil, err
	}
	f := &uploadForm{collection: td.Collection, title: strings.TrimSpace(td.Title), tags: td.Tags,
		metadata: td.Metadata, externalID: td.ExternalID, hasText: td.Text != nil, url: strings.TrimSpace(td.URL)}
	if f.url != "" && f.hasText {
		return nil, rag.Errorf(rag.CodeInvalid, "send either \"url\" or \"text\", not both")
	}
	if td.Text == nil {
		return f, nil
	}
	name := strings.TrimSpace(td.Name)
	if name == "" {
		name = defaultName
	}
	if name == "" {
		if f.title == "" {
			return nil, rag.Errorf(rag.CodeInvalid, "a text document needs a title or a name")
		}
		name = connector.FileStem(f.title) + ".md"
	}
	u := upload{name: path.Base(name), data: []byte(*td.Text)}
	if int64(len(u.data)) > maxFile {
		return nil, rag.Errorf(rag.CodePayloadTooLarge, "text is over the limit of %d bytes", maxFile)
	}
	if err := checkFile(u); err != nil {
		return nil, err
	}
	f.files = []upload{u}
	return f, nil
}

// checkFile refuses empty files and types that cannot be extracted.
func checkFile(u upload) error {
	if len(u.data) == 0 {
		return rag.Errorf(rag.CodeInvalid, "%s is empty", u.name)
	}
	if extract.MediaType(u.name, u.data) == "" {
		return rag.Errorf(rag.CodeUnsupportedMediaType, "%s: unsupported file type (supported: %s)", u.name, extract.Formats)
	}
	return nil
}

// handleCreateDocuments stores the uploads, records them queued and schedules their processing; it answers
// 202 at once with {"documents": [{id, title, status, …}]}. Re-uploading a file name already in the
// collection is a new version of that document (or "unchanged" when the content is the same).
func (s *Server) handleCreateDocuments(w http.ResponseWriter, r *http.Request) {
	f, err := s.readUploadForm(w, r, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.release()
	if !f.hasText && f.url == "" && len(f.files) == 0 && f.metaCSV == nil {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "a JSON document needs \"text\" or \"url\""))
		return
	}
	p := principalOf(r)
	if err := s.mayWriteCollection(r.Context(), p, f.collection); err != nil {
		s.writeError(w, r, err)
		return
	}
	if f.url != "" {
		v, err := s.submit(r, p, ingest.Request{Collection: f.collection, ExternalID: f.externalID, URL: f.url,
			Title: f.title, Metadata: f.metadata, Tags: f.tags, Owner: p.ID})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		noteDocuments(r, v.ID)
		writeJSON(w, http.StatusAccepted, map[string]any{"documents": []documentView{v}})
		return
	}
	table, err := s.metadataTable(r.Context(), f, p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(f.files) == 0 && (table == nil || len(table.records) == 0) {
		// A table alone makes records only in a collection with a metadata schema.
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "no file: send the files in multipart field \"file\""))
		return
	}
	out := make([]documentView, 0, len(f.files))
	for i, u := range f.files {
		meta, externalID := f.metadata, f.externalID
		if table != nil && table.meta[i] != nil {
			meta = table.meta[i]
			externalID = cmp.Or(table.keys[i], externalID)
		}
		// A file sent with its folders is identified by its path (see upload.path).
		req := ingest.Request{
			Collection: f.collection, ExternalID: externalID, Name: u.name, Source: u.path, Title: f.title, Data: u.data,
			Metadata: meta, Tags: f.tags, Owner: p.ID,
		}
		v, err := s.submit(r, p, req)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out = append(out, v)
	}
	var report *metaReport
	if table != nil {
		report = table.report
		for _, req := range table.records {
			v, err := s.submit(r, p, req)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			out = append(out, v)
		}
	}
	for _, d := range out {
		noteDocuments(r, d.ID)
	}
	res := map[string]any{"documents": out}
	if report != nil {
		res["metadata_table"] = report
	}
	writeJSON(w, http.StatusAccepted, res)
}

// metaReport says how an upload's metadata table matched its files: files it has no row for (uploaded with
// the "metadata" field's values only) and rows that named no uploaded file.
type metaReport struct {
	FilesWithoutRow []string `json:"files_without_row"`
	UnmatchedRows   []string `json:"unmatched_rows"`
	// Records are the keys of rows no file named, stored as records of their own (a collection with a
	// metadata schema).
	Records []string `json:"records,omitempty"`
}

// metadataTable reads the upload's meta_csv table (typed by the collection's metadata schema, or its
// metadata_types setting) and returns each file's metadata (the table's row over the "metadata" field), in
// the order of f.files. With a schema, a file's row key becomes its external ID and the rows no file names
// are returned as records (documents made of the row).
func (s *Server) metadataTable(ctx context.Context, f *uploadForm, p rag.Principal) (*metaUpload, error) {
	if f.metaCSV == nil {
		return nil, nil
	}
	var settings map[string]any
	var sch *meta.Schema
	c, err := s.deps.Collections.GetCollection(ctx, cmp.Or(f.collection, rag.DefaultCollection))
	switch {
	case err == nil:
		settings = c.Settings
		if sch, err = profile.Schema(c); err != nil {
			return nil, err
		}
	case !errors.Is(err, rag.ErrNotFound):
		return nil, err
	}
	table, err := ingest.OpenTable(bytes.NewReader(f.metaCSV), f.metaKey, sch, settings)
	if err != nil {
		return nil, err
	}
	up := &metaUpload{report: &metaReport{FilesWithoutRow: []string{}}, meta: make([]map[string]any, len(f.files)),
		keys: make([]string, len(f.files))}
	for i, u := range f.files {
		key, row, ok := table.LookupKey(cmp.Or(u.path, u.name))
		if !ok {
			up.report.FilesWithoutRow = append(up.report.FilesWithoutRow, u.name)
			continue
		}
		for k, v := range f.metadata {
			if _, set := row[k]; !set {
				row[k] = v
			}
		}
		up.meta[i] = row
		if sch != nil {
			up.keys[i] = key
		}
	}
	up.report.UnmatchedRows = []string{}
	if sch == nil {
		if un := table.Unmatched(); un != nil {
			up.report.UnmatchedRows = un
		}
		return up, nil
	}
	for _, row := range table.UnusedRows() {
		up.records = append(up.records, ingest.RecordRequest(sch, row, f.collection, p.ID))
		up.report.Records = append(up.report.Records, row.Key)
	}
	return up, nil
}

// metaUpload is what an upload's metadata table gives its files: metadata and (with a schema) external
// IDs by file, and the records of rows without a file.
type metaUpload struct {
	report  *metaReport
	meta    []map[string]any
	keys    []string
	records []ingest.Request
}

// submit records one upload and schedules it. A version that cannot be scheduled (the jobs database is
// full or unreachable) is marked failed rather than left queued with no job: the upload fails, and says so.
func (s *Server) submit(r *http.Request, p rag.Principal, req ingest.Request) (documentView, error) {
	doc, outcome, err := s.deps.Ingest.Submit(r.Context(), p, req)
	if err != nil {
		return documentView{}, err
	}
	if outcome == ingest.Queued {
		if err := s.deps.Enqueuer.EnqueueIngest(r.Context(), doc.ID, doc.PendingHash); err != nil {
			reason := rag.WrapError(rag.CodeDBError, err, "%s could not be scheduled for processing (%s); upload it again", req.Name, storageProblem(err))
			if aerr := s.deps.Ingest.Abandon(context.WithoutCancel(r.Context()), doc.ID, doc.PendingHash, reason); aerr != nil {
				s.log.Error("record an unscheduled upload as failed", slog.String("document", doc.ID), slog.Any("err", aerr))
			}
			return documentView{}, reason
		}
	}
	v := viewDocument(doc)
	v.Outcome = string(outcome)
	return v, nil
}

// handleUpdateDocument makes a new version from one uploaded file or JSON {"text"}; a JSON body without
// "text" changes only title, tags and metadata (no new version). The new version is processed in the
// background while the current one stays searchable.
func (s *Server) handleUpdateDocument(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	doc, err := s.deps.Documents.GetDocument(r.Context(), p, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.mayWriteDocument(r.Context(), p, doc.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	f, err := s.readUploadForm(w, r, doc.Source)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.release()
	if f.url != "" {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "a new version is a file or text; to fetch a URL document again, POST /api/documents/%s/retry", doc.ID))
		return
	}
	if len(f.files) == 0 {
		u := rag.DocumentUpdate{Metadata: f.metadata, Tags: f.tags}
		if f.title != "" {
			u.Title = &f.title
		}
		d, err := s.deps.Documents.UpdateDocument(r.Context(), p, doc.ID, u)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, viewDocument(d))
		return
	}
	if len(f.files) > 1 {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "a new version is one file"))
		return
	}
	u := f.files[0]
	// The document keeps its source name (and so its extractor): a file of another type is a new document.
	if want := extract.MediaType(doc.Source, nil); want != "" && extract.MediaType(u.name, u.data) != want {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "a new version of %s must be of the same type (%s); upload %s as a new document", doc.Source, want, u.name))
		return
	}
	coll, err := s.deps.Collections.GetCollection(r.Context(), doc.CollectionID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, err := s.submit(r, p, ingest.Request{
		Collection: coll.Name, ExternalID: doc.ExternalID, Name: doc.Source, Source: doc.Source, Title: f.title,
		Data: u.data, Metadata: f.metadata, Tags: f.tags,
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusAccepted
	if v.Outcome == string(ingest.Unchanged) {
		status = http.StatusOK
	}
	writeJSON(w, status, map[string]any{"documents": []documentView{v}})
}

// sentFileName is the file name of a multipart part as the client sent it, folders included, made safe:
// backslashes are slashes, and it is cleaned of leading slashes, "." and ".." (mime/multipart's FileName
// keeps only the base name).
func sentFileName(part *multipart.Part) string {
	_, params, err := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
	name := params["filename"]
	if err != nil || name == "" {
		name = part.FileName()
	}
	var segs []string
	for _, seg := range strings.Split(strings.ReplaceAll(name, `\`, "/"), "/") {
		if seg != "" && seg != "." && seg != ".." {
			segs = append(segs, seg)
		}
	}
	return strings.Join(segs, "/")
}

// storageProblem names a full disk when err says so (SQLite reports SQLITE_FULL as "database or disk is
// full"; files report ENOSPC), else the database.
func storageProblem(err error) string {
	if errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "disk is full") || strings.Contains(err.Error(), "no space left") {
		return "the disk is full"
	}
	return "the jobs database failed"
}

// handleRetryDocument queues a document again (ingest.Pipeline.Retry): a URL document is fetched again, an
// uploaded one whose processing failed re-runs the bytes of that attempt. 202 with the document, its new
// version queued while the current one stays searchable; 409 when there is nothing to retry.
func (s *Server) handleRetryDocument(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	if err := s.mayWriteDocument(r.Context(), p, r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := s.deps.Ingest.Retry(r.Context(), p, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !s.schedule(w, r, d, d.Source) {
		return
	}
	noteDocuments(r, d.ID)
	v := viewDocument(d)
	v.Outcome = string(ingest.Queued)
	writeJSON(w, http.StatusAccepted, v)
}
