package cli

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/mcpserver"
	"github.com/ragd/ragd/internal/rag"
)

// runMCP serves the MCP server (internal/mcpserver) over stdio — JSON-RPC on standard input and output, logs
// on standard error — as the local principal, like every other command. ingest_text indexes its text
// before it answers (the `ragd ingest` path), so no job runner is needed. Every tool call and resource read
// is recorded in the audit log as the local operator (principal local, client StdioClient), through the
// buffered writer that serve uses, flushed when the client closes the stream.
func runMCP(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("mcp")
	c := common{quiet: true}
	c.register(fs, env)
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if err := noArgs("mcp", pos); err != nil {
		return err
	}
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	d := mcpserver.Deps{Search: a.Spaces, Answers: a.Answers, Collections: a.Store, Documents: a.Store,
		Ingest: cliIngester{a.Ingest}, Principal: &rag.LocalPrincipal,
		MaxTextBytes: min(a.Config.MaxUploadBytes, mcpserver.MaxTextBytes)}
	if log := a.OpenAudit(); log != nil {
		d.Audit = func(_ context.Context, c mcpserver.Call) { log.Record(c.Event(StdioClient)) }
	}
	srv := mcpserver.New(d)
	t := &mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}}
	if err := srv.Run(ctx, t); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// StdioClient is the client address of the audit events of `ragd mcp`: the calls come from the process
// that started it, on this machine.
const StdioClient = "stdio"

// cliIngester indexes a text synchronously.
type cliIngester struct{ pipe *ingest.Pipeline }

func (i cliIngester) IngestText(ctx context.Context, p rag.Principal, req ingest.Request) (mcpserver.Ingested, error) {
	doc, outcome, err := i.pipe.Ingest(ctx, p, req)
	if err != nil {
		return mcpserver.Ingested{}, err
	}
	return mcpserver.Ingested{ID: doc.ID, Status: doc.Status, Chunks: doc.ChunkCount, Outcome: outcome}, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
