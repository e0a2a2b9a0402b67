package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
)

// benchSpace is the embedding space of `ragd bench search`'s corpus.
var benchSpace = rag.Space{Provider: "bench", Model: "clustered", Dim: 768}

// searchRow is one line of `ragd bench search`'s table.
type searchRow struct {
	System      string  `json:"system"`
	Kind        string  `json:"kind"`
	P50ms       float64 `json:"p50_ms"`
	P95ms       float64 `json:"p95_ms"`
	QPS         float64 `json:"qps"`
	RecallAt10  float64 `json:"recall_at_10"`
	MemoryBytes int64   `json:"memory_bytes"`
	BuildS      float64 `json:"build_s"`
}

// runBenchSearch generates a reproducible clustered corpus (768-d, fixed seed), loads it into a fresh
// embedded store in a temporary directory through the store's write path, and measures top-10 vector
// searches of ragd's embedded store (with its index past RAGD_VECTOR_INDEX_MIN) beside an exact float32
// scan of the same vectors, one query at a time.
func runBenchSearch(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("bench search")
	chunks := fs.Int("chunks", 100_000, "corpus size in chunks (at least 1000)")
	nq := fs.Int("queries", 200, "queries to time (at least 10)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	dbURL := fs.String("database-url", "", "also measure ragd on this PostgreSQL + pgvector and pgvector's HNSW index directly")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if err := noArgs("bench search", pos); err != nil {
		return err
	}
	if *chunks < 1000 || *nq < 10 {
		return usageErr("--chunks must be at least 1000 and --queries at least 10 (got %d and %d)", *chunks, *nq)
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	n, dim, k := *chunks, benchSpace.Dim, 10
	c := newBenchCorpus(n, *nq, dim)
	rows := []searchRow{c.exactVectorRow(), c.exactKeywordRow()}

	dir, err := os.MkdirTemp("", "ragd-bench-search-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opts := sqlite.Options{VectorIndexMin: cfg.VectorIndexMin, VectorMemory: cfg.VectorMemory, KeywordIndexMin: cfg.KeywordIndexMin}
	st, err := sqlite.Open(ctx, dir, opts)
	if err != nil {
		return err
	}
	defer func() { st.Close() }()
	start := time.Now()
	rowOf, err := loadBenchCorpus(ctx, st, c)
	if err != nil {
		return err
	}
	_, indexBytes, err := st.WaitVectorIndex(ctx, benchSpace)
	if err != nil {
		return err
	}
	_, kwBytes, err := st.WaitKeywordIndex(ctx)
	if err != nil {
		return err
	}
	build := time.Since(start).Seconds()
	ragdRows, err := c.measureRagd(ctx, st, "ragd embedded", rowOf, int64(len(c.vecs))*4+indexBytes,
		fileBytes(filepath.Join(dir, sqlite.FileName))+kwBytes, build)
	if err != nil {
		return err
	}
	rows = append(rows, ragdRows...)
	peers, err := c.peerRows(ctx, dir)
	if err != nil {
		return err
	}
	rows = append(rows, peers...)

	// Restart: close the store (which writes its index file), open it again and time the first answer,
	// which loads the vectors and reads the index back.
	if err := st.Close(); err != nil {
		return err
	}
	start = time.Now()
	if st, err = sqlite.Open(ctx, dir, opts); err != nil {
		return err
	}
	if _, err := st.VectorCandidates(ctx, rag.LocalPrincipal, rag.VectorQuery{Space: benchSpace, Vector: c.query(0), K: k}); err != nil {
		return err
	}
	restart := time.Since(start).Seconds()
	restoredRows, _, err := st.WaitVectorIndex(ctx, benchSpace)
	if err != nil {
		return err
	}
	sort.SliceStable(rows, func(a, b int) bool {
		return strings.HasPrefix(rows[a].System, "ragd") && !strings.HasPrefix(rows[b].System, "ragd")
	})
	if *dbURL != "" {
		pgRows, err := benchPostgres(ctx, *dbURL, c, k)
		if err != nil {
			return err
		}
		rows = append(rows, pgRows...)
	}

	if *asJSON {
		return json.NewEncoder(env.Stdout).Encode(map[string]any{"chunks": n, "rows": rows, "restart_s": restart})
	}
	fmt.Fprintf(env.Stdout, "ragd bench search: %d chunks × %d dimensions, %d top-%d queries of each kind, one at a time\n", n, dim, *nq, k)
	fmt.Fprintf(env.Stdout, "%-30s %-7s %9s %9s %9s %9s %11s %8s\n", "system", "kind", "p50 ms", "p95 ms", "qps", "recall@10", "memory MiB", "build s")
	for _, r := range rows {
		fmt.Fprintf(env.Stdout, "%-30s %-7s %9.2f %9.2f %9.1f %9.4f %11.1f %8.1f\n", r.System, r.Kind, r.P50ms, r.P95ms, r.QPS,
			r.RecallAt10, float64(r.MemoryBytes)/(1<<20), r.BuildS)
	}
	fmt.Fprintf(env.Stdout, "restart to first answer: %.2f s (open the store, load the vectors and the index; the index now has %d rows)\n", restart, restoredRows)
	return nil
}

// loadBenchCorpus commits the corpus as documents of 10 chunks and returns each chunk's row.
func loadBenchCorpus(ctx context.Context, st benchStore, c *benchCorpus) (map[int64]int32, error) {
	coll, err := st.EnsureCollection(ctx, rag.DefaultCollection, "local")
	if err != nil {
		return nil, err
	}
	n, dim := len(c.texts), c.dim
	rowOf := make(map[int64]int32, n)
	for first := 0; first < n; first += 10 {
		doc := &rag.Document{CollectionID: coll.ID, Title: benchTitle(first), Owner: "local"}
		if err := st.CreateDocument(ctx, doc); err != nil {
			return nil, err
		}
		chunks := make([]rag.Chunk, 0, 10)
		for r := first; r < min(first+10, n); r++ {
			chunks = append(chunks, rag.Chunk{Index: r - first, Kind: rag.KindText, Text: c.texts[r], Vector: c.vecs[r*dim : (r+1)*dim]})
		}
		if _, err := st.CommitVersion(ctx, &rag.VersionCommit{DocumentID: doc.ID, ContentHash: fmt.Sprintf("%064x", first),
			Title: doc.Title, MediaType: "text/plain", Space: benchSpace, Chunks: chunks}); err != nil {
			return nil, err
		}
		stored, err := st.ListChunks(ctx, rag.LocalPrincipal, doc.ID)
		if err != nil {
			return nil, err
		}
		for _, c := range stored {
			rowOf[c.ID] = int32(first + c.Index)
		}
	}
	return rowOf, nil
}

// benchStore is what loadBenchCorpus needs of a store (the embedded one or PostgreSQL).
type benchStore interface {
	EnsureCollection(ctx context.Context, name, owner string) (*rag.Collection, error)
	CreateDocument(ctx context.Context, d *rag.Document) error
	CommitVersion(ctx context.Context, c *rag.VersionCommit) (int, error)
	ListChunks(ctx context.Context, p rag.Principal, documentID string) ([]*rag.Chunk, error)
}

// timed makes a row from per-query times.
func timed(system, kind string, times []time.Duration, recall float64, mem int64, build float64) searchRow {
	s := append([]time.Duration(nil), times...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	var total time.Duration
	for _, d := range s {
		total += d
	}
	msOf := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return searchRow{System: system, Kind: kind, P50ms: msOf(s[len(s)/2]), P95ms: msOf(s[min(len(s)-1, len(s)*95/100)]),
		QPS: float64(len(s)) / total.Seconds(), RecallAt10: recall, MemoryBytes: mem, BuildS: build}
}
