package server

import (
	"net/http"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func TestMetricsToken(t *testing.T) {
	b := setup(t, func(s *Settings) { s.MetricsToken = "metrics-secret"; s.APIKeys = []string{"api-key-1"} })
	// Requests whose raw paths must not become labels: the /api/ catch-all and an unknown method.
	b.do(t, request{method: "GET", path: "/api/no/such/endpoint-42"})
	b.do(t, request{method: "BREW", path: "/healthz"})
	b.run(t, []scenario{
		{name: "NoToken", method: "GET", path: "/metrics", status: http.StatusUnauthorized, code: rag.CodeUnauthorized,
			wantHeaders: map[string]string{"WWW-Authenticate": `Bearer realm="ragd-metrics"`}},
		{name: "WrongToken", method: "GET", path: "/metrics", headers: map[string]string{"Authorization": "Bearer metrics-secreT"},
			status: http.StatusUnauthorized, code: rag.CodeUnauthorized},
		{name: "APIKeyIsNotTheToken", method: "GET", path: "/metrics", headers: map[string]string{"Authorization": "Bearer api-key-1"},
			status: http.StatusUnauthorized, code: rag.CodeUnauthorized},
		{name: "TokenIsNotAnAPIKey", method: "GET", path: "/api/documents", headers: map[string]string{"Authorization": "Bearer metrics-secret"},
			status: http.StatusUnauthorized, code: rag.CodeUnauthorized},
		{name: "OK", method: "GET", path: "/metrics", headers: map[string]string{"Authorization": "Bearer metrics-secret"},
			status: http.StatusOK,
			contains: []string{`ragd_http_requests_total{method="GET",route="/api/",status="401"}`,
				`ragd_http_requests_total{method="OTHER",route="/",status="`,
				`ragd_documents{status="ready"} 0`, "ragd_ingest_queue_depth 0", "ragd_store_size_bytes ", "ragd_state_scrape_error 0"},
			notContains: []string{"endpoint-42", "BREW", "ragd_jobs{"}},
	})
}

func TestMetricsOpenWithoutToken(t *testing.T) {
	b := setup(t, nil)
	b.run(t, []scenario{{name: "OK", method: "GET", path: "/metrics", status: http.StatusOK, contains: []string{"go_goroutines "}}})
}
