package telemetry

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names ragd's instrumentation scope in exported spans.
const tracerName = "github.com/ragd/ragd"

// globalTracer is the global provider's tracer: a no-op until SetupTracing installs a provider, to which
// it then delegates (otel's global tracers do), so it can be taken once.
var globalTracer = otel.Tracer(tracerName)

func tracer() trace.Tracer { return globalTracer }

// Start starts a span named name, a child of ctx's span. Without SetupTracing the span is a no-op.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return tracer().Start(ctx, name, trace.WithAttributes(attrs...))
}

// End ends span, recording err (if any) as its status.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// Stage starts the span of a pipeline stage ("retrieve.<stage>"). done ends it, records err, observes the
// stage's duration in ragd_retrieval_stage_duration_seconds and returns that duration.
func Stage(ctx context.Context, stage string) (context.Context, func(err error) time.Duration) {
	start := time.Now()
	ctx, span := tracer().Start(ctx, "retrieve."+stage)
	return ctx, func(err error) time.Duration {
		d := time.Since(start)
		stageDuration.WithLabelValues(stage).Observe(d.Seconds())
		End(span, err)
		return d
	}
}

// Job starts the span of a background job attempt ("job <kind>"). done ends it with its outcome
// (succeeded, retried, cancelled, discarded), counted in ragd_jobs_worked_total.
func Job(ctx context.Context, kind string, attempt int) (context.Context, func(outcome string, err error)) {
	start := time.Now()
	ctx, span := tracer().Start(ctx, "job "+kind, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String("ragd.job.kind", kind), attribute.Int("ragd.job.attempt", attempt)))
	return ctx, func(outcome string, err error) {
		jobsWorked.WithLabelValues(kind, outcome).Inc()
		jobDuration.WithLabelValues(kind).Observe(time.Since(start).Seconds())
		span.SetAttributes(attribute.String("ragd.job.outcome", outcome))
		End(span, err)
	}
}

// TracingEnabled reports whether the environment asks for OTLP trace export: OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set, and OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER not turning it off.
func TracingEnabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if e := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); e != "" && e != "otlp" {
		return false
	}
	return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != "" ||
		strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) != ""
}

// SetupTracing installs an OTLP/HTTP trace exporter as the global tracer provider when the standard
// environment variables, read with getenv, ask for one (TracingEnabled), and accepts W3C traceparent
// headers on requests; it returns a shutdown that flushes the spans still buffered. Without those variables
// it installs nothing and spans stay no-ops. The exporter is left out of the offline build (-tags
// ragd_offline), where asking for it is an error.
func SetupTracing(ctx context.Context, getenv func(string) string, version string) (shutdown func(context.Context) error, err error) {
	if !TracingEnabled(getenv) {
		return func(context.Context) error { return nil }, nil
	}
	return installOTLP(ctx, getenv, version)
}

// LogHandler adds trace_id and span_id to every record logged with the context of a recorded span, so a
// log line leads to its trace.
func LogHandler(h slog.Handler) slog.Handler { return traceLogHandler{h} }

type traceLogHandler struct{ slog.Handler }

func (h traceLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceLogHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceLogHandler) WithGroup(name string) slog.Handler {
	return traceLogHandler{h.Handler.WithGroup(name)}
}
