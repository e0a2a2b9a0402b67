// Package telemetry is ragd's instrumentation: Prometheus metrics (served at /metrics by internal/server)
// and OpenTelemetry traces (exported by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, see SetupTracing).
//
// The instruments are package-level, as Prometheus collectors usually are: the HTTP middleware, the
// retriever, the answer service, the model adapters and the job runner record into them without each
// being handed a registry. Recording costs a few atomic adds and, without an exporter, a no-op span — the
// figures are in docs/integrations.md.
//
// One call records both signals where they share a shape: Stage times a pipeline stage (a histogram
// observation and a span), Embedder and Generator wrap a model adapter (call, error and token counters,
// a duration histogram and a span per call), WorkerMiddleware does the same for River jobs.
package telemetry
