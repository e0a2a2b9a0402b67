package telemetry

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ragd/ragd/internal/testkit"
)

// collector is an OTLP/HTTP trace receiver: it decodes each POST /v1/traces body (protobuf, gzip or not)
// and keeps the spans with their service names.
type collector struct {
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
	bad      []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		c.fail("unexpected request %s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		http.Error(w, "not a trace export", http.StatusBadRequest)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			c.fail("gzip: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(raw, &req)
	}
	if err != nil {
		c.fail("decode: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				c.spans = append(c.spans, sp)
				c.services = append(c.services, service)
			}
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (c *collector) fail(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bad = append(c.bad, fmt.Sprintf(format, args...))
}

// named returns the spans called name.
func (c *collector) named(name string) []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range c.spans {
		if s.GetName() == name {
			out = append(out, s)
		}
	}
	return out
}

// childOf returns the span called name whose parent is parent; nil when there is none.
func (c *collector) childOf(parent *tracepb.Span, name string) *tracepb.Span {
	for _, s := range c.named(name) {
		if bytes.Equal(s.GetTraceId(), parent.GetTraceId()) && bytes.Equal(s.GetParentSpanId(), parent.GetSpanId()) {
			return s
		}
	}
	return nil
}

// TestTraces runs ragd with OTEL_EXPORTER_OTLP_ENDPOINT pointing at the collector and checks the tree of
// spans a search, a question and an upload export: the request span continues the caller's traceparent,
// the retrieval stages are its children, the model calls the stages' children, the ingestion job has its
// own span with the embedding call under it; and the request's log line carries its trace ID.
func TestTraces(t *testing.T) {
	col := &collector{}
	otlp := httptest.NewServer(col)
	t.Cleanup(otlp.Close)
	srv := testkit.Serve(t, testkit.CleanEnv("RAGD_DATA_DIR="+t.TempDir(), "RAGD_LOG_LEVEL=debug",
		"OTEL_EXPORTER_OTLP_ENDPOINT="+otlp.URL, "OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_SERVICE_NAME="))
	base := srv.URL

	call(t, srv, "POST", "/api/documents", `{"title": "Lighthouse log", "collection": "logs", "text": "The keeper of the lighthouse counted nineteen gales in the winter of the whale."}`, 202)
	testkit.WaitFor(t, "the document indexed", time.Minute, func() bool {
		return strings.Contains(string(call(t, srv, "POST", "/api/search", `{"query": "keeper gales whale"}`, 200)), "Lighthouse")
	})

	const traceID, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest("POST", base+"/api/search", strings.NewReader(`{"query": "how many gales"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-"+callerSpan+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	call(t, srv, "POST", "/api/chat", `{"question": "How many gales did the keeper count?", "collection": "logs"}`, 200)

	var search *tracepb.Span
	testkit.WaitFor(t, "the spans exported", 30*time.Second, func() bool {
		for _, s := range col.named("POST /api/search") {
			if hex.EncodeToString(s.GetTraceId()) == traceID {
				search = s
			}
		}
		return search != nil && len(col.named("POST /api/chat")) > 0 && len(col.named("job ragd_ingest")) > 0
	})
	col.mu.Lock()
	bad := col.bad
	col.mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("the collector refused exports: %v", bad)
	}
	if got := hex.EncodeToString(search.GetParentSpanId()); got != callerSpan || search.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Fatalf("search span: parent %s kind %v, want the caller's %s and server", got, search.GetKind(), callerSpan)
	}
	// request → retrieve.search → stages → model call
	stages := col.childOf(search, "retrieve.search")
	if stages == nil {
		t.Fatal("no retrieve.search span under POST /api/search")
	}
	for _, st := range []string{"retrieve.embed", "retrieve.vector", "retrieve.keyword", "retrieve.fusion"} {
		if col.childOf(stages, st) == nil {
			t.Errorf("no %s span under retrieve.search", st)
		}
	}
	if emb := col.childOf(stages, "retrieve.embed"); emb != nil && col.childOf(emb, "embed_query hash") == nil {
		t.Errorf("no embed_query hash span under retrieve.embed")
	}

	chat := col.named("POST /api/chat")[0]
	ans := col.childOf(chat, "retrieve.answer")
	if ans == nil {
		t.Fatal("no retrieve.answer span under POST /api/chat")
	}
	if col.childOf(ans, "retrieve.search") == nil {
		t.Errorf("no retrieve.search span under retrieve.answer")
	}
	gen := col.childOf(ans, "retrieve.generate")
	if gen == nil || col.childOf(gen, "generate extractive") == nil {
		t.Errorf("no generate extractive span under retrieve.generate under retrieve.answer")
	}

	job := col.named("job ragd_ingest")[0]
	if col.childOf(job, "embed_documents hash") == nil {
		t.Errorf("no embed_documents hash span under job ragd_ingest")
	}
	col.mu.Lock()
	for i, s := range col.services {
		if s != "ragd" {
			t.Errorf("span %s has service.name %q, want ragd", col.spans[i].GetName(), s)
			break
		}
	}
	col.mu.Unlock()
	if !strings.Contains(srv.Output.String(), "trace_id="+traceID) {
		t.Errorf("no log line carries the trace ID %s:\n%s", traceID, srv.Output.String())
	}
}
