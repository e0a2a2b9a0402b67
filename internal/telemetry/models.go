package telemetry

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragd/ragd/internal/rag"
)

// modelCall starts the span of a model call ("<operation> <provider>") and returns its end, which counts
// the call (and its error) and observes its duration.
func modelCall(ctx context.Context, provider, model, op string) (context.Context, func(err error) trace.Span) {
	start := time.Now()
	ctx, span := tracer().Start(ctx, op+" "+provider, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.system", provider), attribute.String("gen_ai.request.model", model),
			attribute.String("gen_ai.operation.name", op)))
	return ctx, func(err error) trace.Span {
		modelCalls.WithLabelValues(provider, op).Inc()
		if err != nil {
			modelErrors.WithLabelValues(provider, op).Inc()
		}
		modelDuration.WithLabelValues(provider, op).Observe(time.Since(start).Seconds())
		return span
	}
}

// Embedder returns inner with each call counted, timed and traced under inner's provider. It keeps inner's
// batching (embed.Batcher) visible to a cache that wraps it.
func Embedder(inner rag.Embedder) rag.Embedder { return &embedder{inner: inner} }

type embedder struct{ inner rag.Embedder }

func (e *embedder) Space() rag.Space { return e.inner.Space() }

func (e *embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	sp := e.inner.Space()
	ctx, done := modelCall(ctx, sp.Provider, sp.Model, "embed_documents")
	vecs, err := e.inner.EmbedDocuments(ctx, texts)
	span := done(err)
	modelTokens.WithLabelValues(sp.Provider, "texts").Add(float64(len(texts)))
	span.SetAttributes(attribute.Int("ragd.texts", len(texts)))
	End(span, err)
	return vecs, err
}

func (e *embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	sp := e.inner.Space()
	ctx, done := modelCall(ctx, sp.Provider, sp.Model, "embed_query")
	vec, err := e.inner.EmbedQuery(ctx, text)
	modelTokens.WithLabelValues(sp.Provider, "texts").Inc()
	End(done(err), err)
	return vec, err
}

// Batching reports inner's request size and parallelism (0, 0 when it does not say).
func (e *embedder) Batching() (size, parallel int) {
	if b, ok := e.inner.(interface{ Batching() (int, int) }); ok {
		return b.Batching()
	}
	return 0, 0
}

// Generator returns inner with each call counted, timed and traced, and the tokens it reports added up,
// under the provider of its name ("<provider>/<model>"). What inner does besides generating stays visible
// to type assertions: a rag.Completer or rag.JSONCompleter stays one, and a generator that only quotes
// (answer.QuoteOnly) still says so.
func Generator(inner rag.Generator) rag.Generator {
	provider, model, _ := strings.Cut(inner.Name(), "/")
	g := &generator{inner: inner, provider: provider, model: model}
	c, plain := inner.(rag.Completer)
	j, structured := inner.(rag.JSONCompleter)
	switch {
	case plain && structured:
		return &fullCompleter{completer: &completer{generator: g, c: c}, j: j}
	case plain:
		return &completer{generator: g, c: c}
	case structured:
		return &jsonCompleter{generator: g, j: j}
	}
	return g
}

type generator struct {
	inner           rag.Generator
	provider, model string
}

func (g *generator) Name() string { return g.inner.Name() }

// QuotesOnly passes on whether inner only quotes the passages (answer.QuoteOnly; false when it does not say).
func (g *generator) QuotesOnly() bool {
	q, ok := g.inner.(interface{ QuotesOnly() bool })
	return ok && q.QuotesOnly()
}

func (g *generator) Generate(ctx context.Context, req rag.GenerateRequest, onDelta func(string) error) (*rag.Generation, error) {
	ctx, done := modelCall(ctx, g.provider, g.model, "generate")
	gen, err := g.inner.Generate(ctx, req, onDelta)
	span := done(err)
	if gen != nil {
		if gen.InputTokens > 0 {
			modelTokens.WithLabelValues(g.provider, "input").Add(float64(gen.InputTokens))
		}
		if gen.OutputTokens > 0 {
			modelTokens.WithLabelValues(g.provider, "output").Add(float64(gen.OutputTokens))
		}
		span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", gen.InputTokens),
			attribute.Int("gen_ai.usage.output_tokens", gen.OutputTokens), attribute.Int("ragd.passages", len(req.Passages)))
	}
	End(span, err)
	return gen, err
}

// completer is a generator whose inner one also completes plain prompts (query rewriting and expansion).
type completer struct {
	*generator
	c rag.Completer
}

func (c *completer) Complete(ctx context.Context, system, user string) (string, error) {
	ctx, done := modelCall(ctx, c.provider, c.model, "complete")
	out, err := c.c.Complete(ctx, system, user)
	End(done(err), err)
	return out, err
}

// completeJSON is a traced, counted rag.JSONCompleter call of j.
func (g *generator) completeJSON(ctx context.Context, j rag.JSONCompleter, system, user string, schema rag.JSONSchema) ([]byte, error) {
	ctx, done := modelCall(ctx, g.provider, g.model, "complete_json")
	out, err := j.CompleteJSON(ctx, system, user, schema)
	End(done(err), err)
	return out, err
}

// jsonCompleter is a generator whose inner one also answers with JSON that follows a schema.
type jsonCompleter struct {
	*generator
	j rag.JSONCompleter
}

func (c *jsonCompleter) CompleteJSON(ctx context.Context, system, user string, schema rag.JSONSchema) ([]byte, error) {
	return c.completeJSON(ctx, c.j, system, user, schema)
}

// fullCompleter is a generator whose inner one completes both plain and structured prompts.
type fullCompleter struct {
	*completer
	j rag.JSONCompleter
}

func (c *fullCompleter) CompleteJSON(ctx context.Context, system, user string, schema rag.JSONSchema) ([]byte, error) {
	return c.completeJSON(ctx, c.j, system, user, schema)
}
