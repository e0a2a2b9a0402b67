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
	// CPUms is the CPU time of the measuring process per query (user + system over the timed queries),
	// where the system runs in it: 1000/CPUms is its queries per second on one core, which the other work
	// on a shared machine changes less than the latencies. Absent for a server's rows.
	CPUms float64 `json:"cpu_ms,omitempty"`
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
	skip := fs.String("skip", "", "comma-separated peers not to measure: chromem-go, sqlite-vec (at 1,000,000 chunks sqlite-vec's load alone takes most of an hour)")
	peerQueries := fs.Int("peer-queries", 0, "queries to time for the in-process peers, which scan every vector (0: as many as --queries)")
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
	if *peerQueries < 0 || *peerQueries > *nq {
		return usageErr("--peer-queries must be between 0 and --queries (got %d)", *peerQueries)
	}
	skipped := map[string]bool{}
	for _, p := range strings.Split(*skip, ",") {
		switch p = strings.TrimSpace(p); p {
		case "":
		case "chromem-go", "sqlite-vec":
			skipped[p] = true
		default:
			return usageErr("--skip: unknown peer %q (chromem-go, sqlite-vec)", p)
		}
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	n, dim, k := *chunks, benchSpace.Dim, 10
	c := newBenchCorpus(n, *nq, dim)
	c.peerQueries = *peerQueries
	rows := []searchRow{c.exactVectorRow(), c.exactKeywordRow()}

	dir, err := os.MkdirTemp("", "ragd-bench-search-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opts := benchStoreOptions(cfg)
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
	loaded := time.Since(start).Seconds()
	_, vecHeap, err := st.WaitVectorIndex(ctx, benchSpace)
	if err != nil {
		return err
	}
	indexed := time.Since(start).Seconds()
	// The keyword index's segments are merged into one as the store does once writes pause; waiting for
	// it here keeps the merge (minutes of a core at 1,000,000 chunks) out of the timed searches.
	if err := st.MergeKeywordIndex(ctx); err != nil {
		return err
	}
	merged := time.Since(start).Seconds()
	_, kwBytes, err := st.WaitKeywordIndex(ctx)
	if err != nil {
		return err
	}
	build := time.Since(start).Seconds()
	ragdRows, err := c.measureRagd(ctx, st, "ragd embedded", rowOf, vecHeap, fileBytes(filepath.Join(dir, sqlite.FileName))+kwBytes, build)
	if err != nil {
		return err
	}
	rows = append(rows, ragdRows...)

	// Restart: close the store (which writes its index file) and time a process of its own from its start
	// to its first answer; it then answers every query again, which gives the restarted store's rows with
	// that process's resident memory. It runs before the peers, whose loads would push the store's files
	// out of the operating system's cache (a restarted server finds them there).
	if err := st.Close(); err != nil {
		return err
	}
	restartRows, restart, restarted, err := c.benchRestart(ctx, dir, cfg, rowOf, "ragd embedded (restarted process)")
	if err != nil {
		return err
	}
	rows = append(rows, restartRows...)
	peers, err := c.peerRows(ctx, dir, skipped)
	if err != nil {
		return err
	}
	rows = append(rows, peers...)
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

	self := readMemStats()
	if *asJSON {
		return json.NewEncoder(env.Stdout).Encode(map[string]any{"chunks": n, "rows": rows, "restart_s": restart,
			"load_s": loaded, "index_s": indexed - loaded, "merge_s": merged - indexed, "restarted": map[string]any{"after_vector": restarted.AfterVector,
				"after_all": restarted.AfterAll, "indexed_rows": restarted.Indexed, "from_files": restarted.FromFiles},
			"bench_process": self, "skipped": *skip, "peer_queries": c.peers()})
	}
	fmt.Fprintf(env.Stdout, "ragd bench search: %d chunks × %d dimensions, %d top-%d queries of each kind, one at a time\n", n, dim, *nq, k)
	fmt.Fprintf(env.Stdout, "%-34s %-7s %9s %9s %9s %9s %11s %8s %8s\n", "system", "kind", "p50 ms", "p95 ms", "qps", "recall@10",
		"memory MiB", "build s", "cpu ms")
	for _, r := range rows {
		fmt.Fprintf(env.Stdout, "%-34s %-7s %9.2f %9.2f %9.1f %9.4f %11.1f %8.1f %8.3f\n", r.System, r.Kind, r.P50ms, r.P95ms, r.QPS,
			r.RecallAt10, float64(r.MemoryBytes)/(1<<20), r.BuildS, r.CPUms)
	}
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	fmt.Fprintf(env.Stdout, "load through the store %.1f s, then the vector index %.1f s, the keyword index's merge %.1f s\n",
		loaded, indexed-loaded, merged-indexed)
	fmt.Fprintf(env.Stdout, "restart to first answer: %.2f s in a new process (open the store, read the vector and index files back: %v; the index has %d rows)\n",
		restart, restarted.FromFiles, restarted.Indexed)
	fmt.Fprintf(env.Stdout, "restarted process: VmRSS %.1f MiB after the vector queries (VmHWM %.1f MiB); %.1f MiB after the keyword and hybrid ones too (VmHWM %.1f MiB)\n",
		mib(restarted.AfterVector.RSS), mib(restarted.AfterVector.HWM), mib(restarted.AfterAll.RSS), mib(restarted.AfterAll.HWM))
	fmt.Fprintf(env.Stdout, "this process (corpus, references, peers): VmRSS %.1f MiB, VmHWM %.1f MiB\n", mib(self.RSS), mib(self.HWM))
	if *skip != "" || c.peers() < *nq {
		fmt.Fprintf(env.Stdout, "peers skipped: %q; the in-process peers timed %d queries\n", *skip, c.peers())
	}
	return nil
}

// loadBenchCorpus commits the corpus as documents of 10 chunks and returns each chunk's row. A store that
// commits several documents in one transaction (the embedded store's CommitVersions) gets them
// benchLoadBatch at a time; another (PostgreSQL) one by one.
func loadBenchCorpus(ctx context.Context, st benchStore, c *benchCorpus) (map[int64]int32, error) {
	coll, err := st.EnsureCollection(ctx, rag.DefaultCollection, "local")
	if err != nil {
		return nil, err
	}
	n, dim := len(c.texts), c.dim
	rowOf := make(map[int64]int32, n)
	batcher, batched := st.(interface {
		CommitVersions(ctx context.Context, cs []*rag.VersionCommit) ([]int, [][]int64, error)
	})
	var batch []*rag.VersionCommit
	var firsts []int
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, ids, err := batcher.CommitVersions(ctx, batch)
		if err != nil {
			return err
		}
		for k, chunkIDs := range ids {
			for i, id := range chunkIDs {
				rowOf[id] = int32(firsts[k] + i)
			}
		}
		batch, firsts = batch[:0], firsts[:0]
		return nil
	}
	for first := 0; first < n; first += 10 {
		doc := &rag.Document{CollectionID: coll.ID, Title: benchTitle(first), Owner: "local"}
		if err := st.CreateDocument(ctx, doc); err != nil {
			return nil, err
		}
		chunks := make([]rag.Chunk, 0, 10)
		for r := first; r < min(first+10, n); r++ {
			chunks = append(chunks, rag.Chunk{Index: r - first, Kind: rag.KindText, Text: c.texts[r], Vector: c.vecs[r*dim : (r+1)*dim]})
		}
		commit := &rag.VersionCommit{DocumentID: doc.ID, ContentHash: fmt.Sprintf("%064x", first),
			Title: doc.Title, MediaType: "text/plain", Space: benchSpace, Chunks: chunks}
		if batched {
			batch, firsts = append(batch, commit), append(firsts, first)
			if len(batch) == benchLoadBatch {
				if err := flush(); err != nil {
					return nil, err
				}
			}
			continue
		}
		if _, err := st.CommitVersion(ctx, commit); err != nil {
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
	if batched {
		if err := flush(); err != nil {
			return nil, err
		}
	}
	return rowOf, nil
}

// benchLoadBatch is how many documents (of 10 chunks) loadBenchCorpus commits in one transaction where
// the store can.
const benchLoadBatch = 100

// benchStoreOptions are the embedded store's settings of cfg that `ragd bench search` applies.
func benchStoreOptions(cfg config.Config) sqlite.Options {
	return sqlite.Options{VectorIndexMin: cfg.VectorIndexMin, VectorMemory: cfg.VectorMemory, VectorHeap: cfg.VectorHeap,
		KeywordIndexMin: cfg.KeywordIndexMin, HitCacheBytes: cfg.HitCache,
		VectorColumns: cfg.VectorColumns}
}

// benchStore is what loadBenchCorpus needs of a store (the embedded one or PostgreSQL).
type benchStore interface {
	EnsureCollection(ctx context.Context, name, owner string) (*rag.Collection, error)
	CreateDocument(ctx context.Context, d *rag.Document) error
	CommitVersion(ctx context.Context, c *rag.VersionCommit) (int, error)
	ListChunks(ctx context.Context, p rag.Principal, documentID string) ([]*rag.Chunk, error)
}

// timed makes a row from per-query times and the CPU time they took in all (0: not measured).
func timed(system, kind string, times []time.Duration, cpu time.Duration, recall float64, mem int64, build float64) searchRow {
	s := append([]time.Duration(nil), times...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	var total time.Duration
	for _, d := range s {
		total += d
	}
	msOf := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return searchRow{System: system, Kind: kind, P50ms: msOf(s[len(s)/2]), P95ms: msOf(s[min(len(s)-1, len(s)*95/100)]),
		QPS: float64(len(s)) / total.Seconds(), RecallAt10: recall, MemoryBytes: mem, BuildS: build,
		CPUms: float64(cpu.Microseconds()) / 1000 / float64(len(s))}
}
