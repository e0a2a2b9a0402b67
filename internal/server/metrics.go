package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/telemetry"
)

// instrument counts and times every request by its route pattern (ragd_http_requests_total,
// ragd_http_request_duration_seconds) and serves it inside a server span named "<method> <route>", the
// parent of the spans of its retrieval stages and model calls. A traceparent header continues the
// caller's trace when tracing is on. It is the outermost middleware, so refused requests and recovered
// panics (500) are counted too.
func (s *Server) instrument(next http.Handler) http.Handler {
	tracer := otel.Tracer("github.com/ragd/ragd") // delegates to the provider SetupTracing installs, if any
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		route := s.routeOf(r)
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tracer.Start(ctx, r.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("http.route", route),
				attribute.String("url.path", r.URL.Path)))
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			telemetry.ObserveHTTP(r.Method, route, status, time.Since(start))
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
			span.End()
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// routeOf is the path of the pattern that serves r ("/api/documents/{id}"), never the raw path, which
// would make a series per document; "other" when no pattern matches (a path the mux redirects).
func (s *Server) routeOf(r *http.Request) string {
	_, pattern := s.mux.Handler(r)
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	if pattern == "" {
		return "other"
	}
	return pattern
}

// handleMetrics serves /metrics in the Prometheus text format. With RAGD_METRICS_TOKEN set it needs
// "Authorization: Bearer <token>" (401 otherwise); API keys do not open it, nor does the token open /api.
func (s *Server) handleMetrics() http.Handler {
	metrics := telemetry.Handler(s.metricsState, s.log)
	var want [32]byte
	if s.set.MetricsToken != "" {
		want = sha256.Sum256([]byte(s.set.MetricsToken))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.set.MetricsToken != "" {
			got := sha256.Sum256([]byte(presentedKey(r)))
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="ragd-metrics"`)
				s.writeError(w, r, rag.Errorf(rag.CodeUnauthorized, "the metrics token is missing or wrong (Authorization: Bearer <RAGD_METRICS_TOKEN>)"))
				return
			}
		}
		metrics.ServeHTTP(w, r)
	})
}

// metricsState reads what a scrape reports of the store and the queue: documents by status (all of them,
// as an admin sees them), jobs by state (when the enqueuer is the job runner) and the store's size (when
// the store reports it). What cannot be read is left out and the error returned.
func (s *Server) metricsState(ctx context.Context) (telemetry.State, error) {
	st := telemetry.State{StoreBytes: -1}
	counts, err := s.documentCounts(ctx, rag.LocalPrincipal)
	if err != nil {
		return st, err
	}
	delete(counts, "total")
	st.Documents = counts
	if q, ok := s.deps.Enqueuer.(interface {
		JobCounts(ctx context.Context) (map[string]int, error)
	}); ok {
		if st.Jobs, err = q.JobCounts(ctx); err != nil {
			return st, err
		}
	}
	if sz, ok := s.deps.Store.(rag.StoreSizer); ok {
		if st.StoreBytes, err = sz.StoreSize(ctx); err != nil {
			st.StoreBytes = -1
			return st, err
		}
	}
	return st, nil
}
