//go:build !ragd_offline

package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// installOTLP sets the global tracer provider to one that batches spans to an OTLP/HTTP exporter. The
// exporter reads the process's OTEL_EXPORTER_OTLP_* variables itself (endpoint, headers, timeout,
// compression, certificate); the resource is OTEL_SERVICE_NAME (default "ragd") and
// OTEL_RESOURCE_ATTRIBUTES. Only OTLP over HTTP with protobuf is built in: OTEL_EXPORTER_OTLP_PROTOCOL=grpc
// is an error.
func installOTLP(ctx context.Context, getenv func(string) string, version string) (func(context.Context) error, error) {
	none := func(context.Context) error { return nil }
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(getenv(v)); p != "" {
			if p != "http/protobuf" {
				return none, fmt.Errorf("%s=%s: ragd exports traces with OTLP over HTTP only (http/protobuf)", v, p)
			}
			break
		}
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return none, fmt.Errorf("otlp trace exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.version", version)))
	if err != nil {
		return none, fmt.Errorf("otel resource: %w", err)
	}
	if getenv("OTEL_SERVICE_NAME") == "" && !strings.Contains(getenv("OTEL_RESOURCE_ATTRIBUTES"), "service.name=") {
		res, _ = resource.Merge(res, resource.NewSchemaless(attribute.String("service.name", "ragd")))
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return func(ctx context.Context) error {
		return errors.Join(tp.ForceFlush(ctx), tp.Shutdown(ctx))
	}, nil
}
