package server

import (
	_ "embed" // the OpenAPI document
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"go.yaml.in/yaml/v3"
)

// openAPIYAML is the OpenAPI 3.1 document of /api and /v1, written by hand beside the handlers; TestOpenAPI
// checks that every route registered on the mux is in it and nothing else is.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// openAPIJSON is the document as JSON, converted once.
var openAPIJSON = sync.OnceValues(func() ([]byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(openAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return json.Marshal(doc)
})

// handleOpenAPI serves the OpenAPI document at GET /api/openapi.json.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	b, err := openAPIJSON()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(b)
}
