package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Stages of the search and answer pipelines, the values of the "stage" label of
// ragd_retrieval_stage_duration_seconds and the names of their spans ("retrieve.<stage>").
const (
	StageEmbed    = "embed"    // embedding the query
	StageVector   = "vector"   // vector candidates from the store
	StageKeyword  = "keyword"  // keyword candidates (and the passages of documents the query names)
	StageFusion   = "fusion"   // weighted reciprocal-rank fusion, feedback, threshold and hydration
	StageRerank   = "rerank"   // the re-ranking stage (only when it is on)
	StageSearch   = "search"   // a whole search, the stages above included
	StageGenerate = "generate" // writing the answer from the passages
	StageAnswer   = "answer"   // a whole question, retrieval and generation included
)

// latencyBuckets spans 1 ms to about 33 s: a keyword search of a small collection to a slow hosted model.
var latencyBuckets = prometheus.ExponentialBuckets(0.001, 2, 16)

var (
	registry = prometheus.NewRegistry()

	httpRequests = counterVec("ragd_http_requests_total",
		"HTTP requests served, by method, route pattern and status code.",
		"method", "route", "status")
	httpDuration = histogramVec("ragd_http_request_duration_seconds",
		"Time to serve an HTTP request (a streamed answer until its last event), by method and route pattern.",
		"method", "route")

	stageDuration = histogramVec("ragd_retrieval_stage_duration_seconds",
		"Time spent in each stage of search and answering (embed, vector, keyword, fusion, rerank, search, generate, answer).",
		"stage")

	modelCalls = counterVec("ragd_model_calls_total",
		"Calls to embedders and generators, by provider and operation (embed_documents, embed_query, generate, complete, complete_json).",
		"provider", "operation")
	modelErrors = counterVec("ragd_model_errors_total",
		"Model calls that failed (after the provider's retries), by provider and operation.",
		"provider", "operation")
	modelRetries = counterVec("ragd_model_retries_total",
		"Retried attempts of hosted model calls (429, 408, 5xx, network errors), by provider.",
		"provider")
	modelTokens = counterVec("ragd_model_tokens_total",
		"Tokens reported by generators, by provider and direction (input, output); texts embedded by embedders (direction texts).",
		"provider", "direction")
	modelDuration = histogramVec("ragd_model_call_duration_seconds",
		"Duration of embedder and generator calls, retries included, by provider and operation.",
		"provider", "operation")

	cacheLookups = counterVec("ragd_cache_lookups_total",
		"Cache lookups by cache (embedding: texts looked up in the embedding cache; answer: questions looked up in the answer cache) and result (hit, miss).",
		"cache", "result")

	jobsWorked = counterVec("ragd_jobs_worked_total",
		"Background job attempts finished by this process, by kind and outcome (succeeded, retried, discarded, cancelled, snoozed, released).",
		"kind", "outcome")
	jobDuration = histogramVec("ragd_job_duration_seconds",
		"Duration of background job attempts, by kind.",
		"kind")
)

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func histogramVec(name, help string, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets}, labels)
}

func init() {
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		httpRequests, httpDuration, stageDuration, modelCalls, modelErrors, modelRetries, modelTokens, modelDuration,
		cacheLookups, jobsWorked, jobDuration)
}

// ObserveHTTP records one served request. route is the pattern that matched (without its method), never
// the raw path, so the series stay few.
func ObserveHTTP(method, route string, status int, d time.Duration) {
	method = knownMethod(method)
	httpRequests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	httpDuration.WithLabelValues(method, route).Observe(d.Seconds())
}

// knownMethod keeps the method label to the methods HTTP defines: a client can send any token.
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// ModelRetry counts one retried attempt of a hosted model call.
func ModelRetry(provider string) { modelRetries.WithLabelValues(provider).Inc() }

// CacheLookup counts lookups of cache ("embedding" or "answer"): hits found, misses not.
func CacheLookup(cache string, hits, misses int) {
	if hits > 0 {
		cacheLookups.WithLabelValues(cache, "hit").Add(float64(hits))
	}
	if misses > 0 {
		cacheLookups.WithLabelValues(cache, "miss").Add(float64(misses))
	}
}

// State is what a scrape reads from the store and the job queue: documents by status, River jobs by state,
// the store's size in bytes. A nil map or negative size is left out.
type State struct {
	Documents  map[string]int
	Jobs       map[string]int
	StoreBytes int64
}

// StateFunc reads the State at scrape time.
type StateFunc func(ctx context.Context) (State, error)

// stateTimeout bounds the reads of one scrape.
const stateTimeout = 10 * time.Second

var (
	documentsDesc  = prometheus.NewDesc("ragd_documents", "Documents by status (queued, processing, ready, failed; deleted ones awaiting purge are not counted).", []string{"status"}, nil)
	queueDesc      = prometheus.NewDesc("ragd_ingest_queue_depth", "Documents waiting for ingestion (status queued).", nil, nil)
	jobsDesc       = prometheus.NewDesc("ragd_jobs", "Background jobs in the queue by River state (available, scheduled, running, retryable, completed, cancelled, discarded, pending).", []string{"state"}, nil)
	storeBytesDesc = prometheus.NewDesc("ragd_store_size_bytes", "Size of the document store: the SQLite database's pages, or the PostgreSQL schema's tables and indexes.", nil, nil)
	scrapeErrDesc  = prometheus.NewDesc("ragd_state_scrape_error", "1 when reading the store or job state for this scrape failed (the error is logged), else 0.", nil, nil)
)

// stateCollector reads a State on each scrape.
type stateCollector struct {
	read StateFunc
	log  *slog.Logger
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- documentsDesc
	ch <- queueDesc
	ch <- jobsDesc
	ch <- storeBytesDesc
	ch <- scrapeErrDesc
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	st, err := c.read(ctx)
	failed := 0.0
	if err != nil {
		failed = 1
		c.log.Warn("metrics: read state", slog.Any("err", err))
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrDesc, prometheus.GaugeValue, failed)
	if st.Documents != nil {
		for status, n := range st.Documents {
			ch <- prometheus.MustNewConstMetric(documentsDesc, prometheus.GaugeValue, float64(n), status)
		}
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(st.Documents["queued"]))
	}
	for state, n := range st.Jobs {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n), state)
	}
	if st.StoreBytes >= 0 {
		ch <- prometheus.MustNewConstMetric(storeBytesDesc, prometheus.GaugeValue, float64(st.StoreBytes))
	}
}

// Handler serves the metrics in the Prometheus text (or, when asked, OpenMetrics) format: this process's
// instruments, the Go runtime's and the process's, and the State read on each scrape (read may be nil).
func Handler(read StateFunc, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	gatherers := prometheus.Gatherers{registry}
	if read != nil {
		state := prometheus.NewRegistry()
		state.MustRegister(&stateCollector{read: read, log: logger})
		gatherers = append(gatherers, state)
	}
	return promhttp.HandlerFor(gatherers, promhttp.HandlerOpts{
		ErrorLog:          slogPrinter{logger},
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	})
}

// slogPrinter adapts a *slog.Logger to promhttp's Logger.
type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.log.Warn("metrics", slog.Any("err", v)) }
