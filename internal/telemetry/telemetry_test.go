package telemetry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestTracingEnabled(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"Unset", nil, false},
		{"Endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{"TracesEndpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{"SDKDisabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}, false},
		{"ExporterNone", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_TRACES_EXPORTER": "none"}, false},
		{"ExporterOTLP", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_TRACES_EXPORTER": "otlp"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := TracingEnabled(env(c.env)); got != c.want {
				t.Fatalf("TracingEnabled = %v, want %v", got, c.want)
			}
		})
	}
}

// Without the variables nothing is installed: spans are the global no-op provider's, not recorded.
func TestSetupTracingOff(t *testing.T) {
	shutdown, err := SetupTracing(t.Context(), env(nil), "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, done := Stage(t.Context(), StageSearch)
	if _, span := Start(ctx, "x"); span.IsRecording() || span.SpanContext().IsValid() {
		t.Fatalf("a span is recorded without an exporter: %+v", span.SpanContext())
	}
	done(nil)
	if err := shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestSetupTracingGRPC(t *testing.T) {
	_, err := SetupTracing(t.Context(), env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}), "test")
	if err == nil || !strings.Contains(err.Error(), "http/protobuf") {
		t.Fatalf("err = %v, want the protocol refused", err)
	}
}

// BenchmarkStage is what instrumenting one stage costs without an exporter: a no-op span and a histogram
// observation (a search records six stages, a question eight and a model call or two).
func BenchmarkStage(b *testing.B) {
	ctx := context.Background()
	err := errors.New("x")
	for i := 0; b.Loop(); i++ {
		_, done := Stage(ctx, StageVector)
		if i%100 == 0 {
			done(err)
		} else {
			done(nil)
		}
	}
}

// Generators that do more than generate: the wrapper keeps each ability visible, and adds none.
type plainGen struct{}

func (plainGen) Name() string { return "fake/model" }
func (plainGen) Generate(context.Context, rag.GenerateRequest, func(string) error) (*rag.Generation, error) {
	return &rag.Generation{Text: "a", InputTokens: 3, OutputTokens: 1}, nil
}

type completerGen struct{ plainGen }

func (completerGen) Complete(context.Context, string, string) (string, error) { return "c", nil }

type jsonGen struct{ plainGen }

func (jsonGen) CompleteJSON(context.Context, string, string, rag.JSONSchema) ([]byte, error) {
	return []byte(`{}`), nil
}

type bothGen struct{ completerGen }

func (bothGen) CompleteJSON(context.Context, string, string, rag.JSONSchema) ([]byte, error) {
	return []byte(`{}`), nil
}

type quoteGen struct{ plainGen }

func (quoteGen) QuotesOnly() bool { return true }

func TestGeneratorKeepsAbilities(t *testing.T) {
	for _, c := range []struct {
		name                    string
		inner                   rag.Generator
		plain, structured, quot bool
	}{
		{"Plain", plainGen{}, false, false, false},
		{"Completer", completerGen{}, true, false, false},
		{"JSONCompleter", jsonGen{}, false, true, false},
		{"Both", bothGen{}, true, true, false},
		{"QuoteOnly", quoteGen{}, false, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := Generator(c.inner)
			cp, plain := g.(rag.Completer)
			jc, structured := g.(rag.JSONCompleter)
			q, _ := g.(interface{ QuotesOnly() bool })
			if plain != c.plain || structured != c.structured || (q != nil && q.QuotesOnly()) != c.quot {
				t.Fatalf("Completer %v, JSONCompleter %v, QuotesOnly %v; want %v %v %v", plain, structured, q != nil && q.QuotesOnly(), c.plain, c.structured, c.quot)
			}
			if plain {
				if out, err := cp.Complete(t.Context(), "s", "u"); out != "c" || err != nil {
					t.Fatalf("Complete = %q, %v", out, err)
				}
			}
			if structured {
				if out, err := jc.CompleteJSON(t.Context(), "s", "u", rag.JSONSchema{}); string(out) != "{}" || err != nil {
					t.Fatalf("CompleteJSON = %q, %v", out, err)
				}
			}
			if gen, err := g.Generate(t.Context(), rag.GenerateRequest{}, nil); err != nil || gen.Text != "a" || g.Name() != "fake/model" {
				t.Fatalf("Generate = %+v, %v; Name %q", gen, err, g.Name())
			}
		})
	}
}
