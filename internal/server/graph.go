package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/ragd/ragd/internal/graph"
	"github.com/ragd/ragd/internal/rag"
)

// Graphs imports collections' knowledge graphs and record tables (*graph.Service implements it).
type Graphs interface {
	Import(ctx context.Context, collection string, b *graph.Bundle) (*graph.ImportResult, error)
	ImportTable(ctx context.Context, collection, table string, r io.Reader) (*graph.TableResult, error)
	Stats(ctx context.Context, p rag.Principal, collection string) (*rag.GraphStats, error)
}

// bundleRejected is the body of a 400 for a broken graph bundle: the usual error body and every problem.
type bundleRejected struct {
	errorBody
	Problems []graph.Problem `json:"problems"`
	More     int             `json:"more_problems,omitempty"`
}

// handleImportGraph is POST /api/collections/{name}/graph: multipart files (field "file") named
// sections.jsonl, entities.jsonl, relations.jsonl and chunks.jsonl become the collection's graph (created
// when it does not exist). 200 with what changed; 400 with the problems of a broken bundle, nothing changed.
func (s *Server) handleImportGraph(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	form, err := s.readMultipart(w, r, min(s.set.MaxUploadBytes, graph.MaxBundleBytes), anyFile)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	files := map[string][]byte{}
	for _, f := range form.files {
		if _, dup := files[f.name]; dup {
			s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "%s was sent twice", f.name))
			return
		}
		files[f.name] = f.data
	}
	b, err := graph.Parse(files)
	var be *graph.BundleError
	if errors.As(err, &be) {
		writeJSON(w, http.StatusBadRequest, bundleRejected{errorBody: errorBodyOf(err), Problems: be.Problems, More: be.More})
		return
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, err := s.deps.Collections.EnsureCollection(r.Context(), name, principalOf(r).ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.deps.Graph.Import(r.Context(), name, b)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// handleGraphStats is GET /api/collections/{name}/graph: what the collection's graph and tables hold.
func (s *Server) handleGraphStats(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	if err := s.mayReadWhole(r.Context(), p, r.PathValue("name")); err != nil {
		s.writeError(w, r, err)
		return
	}
	st, err := s.deps.Graph.Stats(r.Context(), p, r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// handleImportTable is POST /api/collections/{name}/tables/{table}: a CSV file (a text/csv body, or one
// multipart file in field "file") replaces the rows of a record table declared in the collection's graph
// section. 200 with the row count; 400 naming the line and column of a bad value, nothing changed.
func (s *Server) handleImportTable(w http.ResponseWriter, r *http.Request) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var data []byte
	switch ct {
	case "multipart/form-data":
		form, err := s.readMultipart(w, r, s.set.MaxUploadBytes, anyFile)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if len(form.files) != 1 {
			s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "send one CSV file in field \"file\" (got %d)", len(form.files)))
			return
		}
		data = form.files[0].data
	case "text/csv", "text/plain":
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.set.MaxUploadBytes))
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.writeError(w, r, rag.Errorf(rag.CodePayloadTooLarge, "the table is over %d bytes", s.set.MaxUploadBytes))
			return
		}
		if err != nil {
			s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "cannot read the body: %v", err))
			return
		}
		data = body
	default:
		s.writeError(w, r, rag.Errorf(rag.CodeUnsupportedMediaType, "send the table as text/csv or as multipart/form-data with the file in field \"file\""))
		return
	}
	res, err := s.deps.Graph.ImportTable(r.Context(), r.PathValue("name"), strings.TrimSpace(r.PathValue("table")), bytes.NewReader(data))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// anyFile accepts every file: graph.Parse and graph.ParseTable check their contents.
func anyFile(upload) error { return nil }
