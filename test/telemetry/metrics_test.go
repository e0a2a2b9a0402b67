// Package telemetry tests ragd's instrumentation on the real binary: /metrics scraped after uploads,
// searches and questions and parsed with Prometheus' own text parser (expfmt), and the spans exported by
// OTLP/HTTP to a collector in the test that decodes the protobuf payload (go.opentelemetry.io/proto/otlp).
// The models are the OpenAI and Gemini wire-format fakes (internal/fakeapi), so model calls, tokens, retries and the
// embedding cache show.
package telemetry

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/testkit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveBinary()
	os.Exit(code)
}

const metricsToken = "scrape-token-for-tests"

// call sends body ("" for none) as JSON to the server and checks the status.
func call(t *testing.T, srv *testkit.Server, method, path, body string, want int) []byte {
	t.Helper()
	var b any
	if body != "" {
		b = json.RawMessage(body)
	}
	code, out := srv.Call(t, "", method, path, b)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, out, want)
	}
	return out
}

// scrape fetches /metrics with token ("" for none) and returns the status and the parsed families.
func scrape(t *testing.T, base, token string) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("/metrics Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return resp.StatusCode, fams
}

// value is the value of the series of family name whose labels include want (summed over the others);
// found is false when no series matches.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (v float64, found bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, w := range want {
			if labels[k] != w {
				match = false
			}
		}
		if !match {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		case m.Histogram != nil:
			v += float64(m.Histogram.GetSampleCount())
		}
	}
	return v, found
}

// labelValues lists the values of label in family name.
func labelValues(fams map[string]*dto.MetricFamily, name, label string) []string {
	var out []string
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out = append(out, l.GetValue())
			}
		}
	}
	return out
}

// TestMetrics runs uploads, searches and questions through the binary and checks the series they leave:
// requests by route pattern (never a document's ID), each retrieval stage, ingestion jobs and the queue,
// documents by status, model calls, retries, errors and tokens of the providers, both caches, the store's size;
// and that /metrics needs its own token.
func TestMetrics(t *testing.T) {
	fake := fakeapi.NewOpenAI("sk-metrics")
	t.Cleanup(fake.Close)
	gem := fakeapi.NewGemini("gemini-metrics")
	t.Cleanup(gem.Close)
	srv := testkit.Serve(t, testkit.CleanEnv("RAGD_DATA_DIR="+t.TempDir(), "RAGD_METRICS_TOKEN="+metricsToken,
		"RAGD_EMBEDDER=openai", "OPENAI_API_KEY="+fake.Key(), "OPENAI_BASE_URL="+fake.BaseURL(),
		"RAGD_GENERATOR=gemini", "GEMINI_API_KEY="+gem.Key(), "RAGD_GEMINI_BASE_URL="+gem.BaseURL(),
		"RAGD_ANSWER_CACHE_TTL=10m"))
	base := srv.URL

	for _, tok := range []string{"", "wrong-token"} {
		if code, _ := scrape(t, base, tok); code != http.StatusUnauthorized {
			t.Fatalf("/metrics with token %q: %d, want 401", tok, code)
		}
	}

	var up struct {
		Documents []struct {
			ID string `json:"id"`
		} `json:"documents"`
	}
	body := `{"title": "Lighthouse log", "collection": "logs", "text": "The keeper of the lighthouse counted nineteen gales in the winter of the whale. Each gale is written in the ledger with its date and the damage to the lamp."}`
	if err := json.Unmarshal(call(t, srv, "POST", "/api/documents", body, 202), &up); err != nil || len(up.Documents) != 1 {
		t.Fatalf("upload: %v %+v", err, up)
	}
	id := up.Documents[0].ID
	testkit.WaitFor(t, "the document ready", time.Minute, func() bool {
		return strings.Contains(string(call(t, srv, "GET", "/api/documents/"+id, "", 200)), `"status":"ready"`)
	})
	// One embedding request fails with 503 and is retried by the provider's caller.
	fake.FailNext(1, fakeapi.Fault{Status: http.StatusServiceUnavailable})
	call(t, srv, "POST", "/api/search", `{"query": "how many gales did the keeper count"}`, 200)
	// The same search again: its query vector comes from the embedding cache.
	call(t, srv, "POST", "/api/search", `{"query": "how many gales did the keeper count"}`, 200)
	// Three 503s in a row fail the call after its retries: an embedding error.
	fake.FailNext(3, fakeapi.Fault{Status: http.StatusServiceUnavailable})
	call(t, srv, "POST", "/api/search", `{"query": "the damage to the lamp"}`, http.StatusBadGateway)
	ask := `{"question": "How many gales did the keeper count?", "collection": "logs"}`
	call(t, srv, "POST", "/api/chat", ask, 200)
	call(t, srv, "POST", "/api/chat", ask, 200) // the answer cache
	call(t, srv, "GET", "/api/documents/no-such-document", "", 404)

	code, fams := scrape(t, base, metricsToken)
	if code != http.StatusOK {
		t.Fatalf("/metrics with the token: %d", code)
	}
	checks := []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"ragd_http_requests_total", map[string]string{"method": "POST", "route": "/api/documents", "status": "202"}, 1},
		{"ragd_http_requests_total", map[string]string{"method": "GET", "route": "/api/documents/{id}", "status": "200"}, 1},
		{"ragd_http_requests_total", map[string]string{"method": "GET", "route": "/api/documents/{id}", "status": "404"}, 1},
		{"ragd_http_requests_total", map[string]string{"method": "POST", "route": "/api/chat", "status": "200"}, 2},
		{"ragd_http_requests_total", map[string]string{"method": "GET", "route": "/metrics", "status": "401"}, 2},
		{"ragd_http_request_duration_seconds", map[string]string{"method": "POST", "route": "/api/search"}, 2},
		{"ragd_retrieval_stage_duration_seconds", map[string]string{"stage": "embed"}, 3},
		{"ragd_retrieval_stage_duration_seconds", map[string]string{"stage": "vector"}, 3},
		{"ragd_retrieval_stage_duration_seconds", map[string]string{"stage": "keyword"}, 3},
		{"ragd_retrieval_stage_duration_seconds", map[string]string{"stage": "fusion"}, 3},
		{"ragd_retrieval_stage_duration_seconds", map[string]string{"stage": "search"}, 3},
		{"ragd_retrieval_stage_duration_seconds", map[string]string{"stage": "generate"}, 1},
		{"ragd_retrieval_stage_duration_seconds", map[string]string{"stage": "answer"}, 2},
		{"ragd_jobs_worked_total", map[string]string{"kind": "ragd_ingest", "outcome": "succeeded"}, 1},
		{"ragd_job_duration_seconds", map[string]string{"kind": "ragd_ingest"}, 1},
		{"ragd_jobs", map[string]string{"state": "completed"}, 1},
		{"ragd_documents", map[string]string{"status": "ready"}, 1},
		{"ragd_model_calls_total", map[string]string{"provider": "openai", "operation": "embed_documents"}, 1},
		{"ragd_model_calls_total", map[string]string{"provider": "openai", "operation": "embed_query"}, 1},
		{"ragd_model_calls_total", map[string]string{"provider": "gemini", "operation": "generate"}, 1},
		{"ragd_model_retries_total", map[string]string{"provider": "openai"}, 3},
		{"ragd_model_errors_total", map[string]string{"provider": "openai", "operation": "embed_query"}, 1},
		{"ragd_http_requests_total", map[string]string{"method": "POST", "route": "/api/search", "status": "502"}, 1},
		{"ragd_model_tokens_total", map[string]string{"provider": "gemini", "direction": "input"}, 1},
		{"ragd_model_tokens_total", map[string]string{"provider": "gemini", "direction": "output"}, 1},
		{"ragd_cache_lookups_total", map[string]string{"cache": "embedding", "result": "hit"}, 1},
		{"ragd_cache_lookups_total", map[string]string{"cache": "embedding", "result": "miss"}, 2},
		{"ragd_cache_lookups_total", map[string]string{"cache": "answer", "result": "hit"}, 1},
		{"ragd_cache_lookups_total", map[string]string{"cache": "answer", "result": "miss"}, 1},
		{"ragd_store_size_bytes", nil, 4096},
		{"go_goroutines", nil, 1},
	}
	for _, c := range checks {
		if v, ok := value(fams, c.name, c.labels); !ok || v < c.min {
			t.Errorf("%s%v = %v (found %v), want at least %v", c.name, c.labels, v, ok, c.min)
		}
	}
	if v, ok := value(fams, "ragd_ingest_queue_depth", nil); !ok || v != 0 {
		t.Errorf("ragd_ingest_queue_depth = %v (found %v), want 0 once the document is ready", v, ok)
	}
	if v, ok := value(fams, "ragd_documents", map[string]string{"status": "failed"}); !ok || v != 0 {
		t.Errorf(`ragd_documents{status="failed"} = %v (found %v), want 0`, v, ok)
	}
	if v, _ := value(fams, "ragd_state_scrape_error", nil); v != 0 {
		t.Errorf("ragd_state_scrape_error = %v\n%s", v, srv.Output.String())
	}
	// Rerank is off by default: its stage has no series.
	if _, ok := value(fams, "ragd_retrieval_stage_duration_seconds", map[string]string{"stage": "rerank"}); ok {
		t.Errorf("a rerank stage series without a re-ranker")
	}
	checkDashboard(t, fams)
	for _, route := range labelValues(fams, "ragd_http_requests_total", "route") {
		if strings.Contains(route, id) || strings.Contains(route, "no-such-document") {
			t.Errorf("a route label holds a raw path: %q", route)
		}
	}
}

// checkDashboard checks that every ragd_ series the Grafana dashboard (docs/grafana-ragd.json) queries is
// one the binary exports, so a renamed metric cannot leave an empty panel behind.
func checkDashboard(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testkit.Root(), "docs", "grafana-ragd.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("docs/grafana-ragd.json: %v", err)
	}
	name := regexp.MustCompile(`\bragd_[a-z_]+`)
	used := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				used++
				base := m
				if f := fams[m]; f == nil {
					for _, suffix := range []string{"_bucket", "_count", "_sum"} {
						base = strings.TrimSuffix(base, suffix)
					}
					if f := fams[base]; f == nil || f.GetType() != dto.MetricType_HISTOGRAM || base == m {
						t.Errorf("dashboard panel %q queries %s, which /metrics does not export", p.Title, m)
					}
				}
			}
		}
	}
	if used < 15 {
		t.Errorf("the dashboard queries only %d ragd series", used)
	}
}
