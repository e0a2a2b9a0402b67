package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/textproc"
	"github.com/ragd/ragd/internal/vindex"
)

// The restart of `ragd bench search` runs in a process of its own (`ragd bench search-restart`, which the
// command starts with its own executable): its resident memory is then that of a process holding the
// store, not the benchmark's corpus and peers, and its first answer includes everything a restarted
// server does before it (the process, opening the store, reading the index and vector files back).

// memStats is a process's resident memory from /proc/self/status: now (VmRSS) and at its peak (VmHWM).
type memStats struct {
	RSS int64 `json:"vm_rss_bytes"`
	HWM int64 `json:"vm_hwm_bytes"`
}

// readMemStats reads the process's VmRSS and VmHWM (zero where /proc is not there).
func readMemStats() memStats {
	var m memStats
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			m.RSS = kb << 10
		case "VmHWM:":
			m.HWM = kb << 10
		}
	}
	return m
}

// restartQueries is what the restarted process is given: the queries' texts and vectors.
type restartQueries struct {
	Texts   []string    `json:"texts"`
	Vectors [][]float32 `json:"vectors"`
}

// restartResult is what the restarted process reports: per kind, each query's chunk IDs and time, and its
// memory after the vector queries (vectors and index loaded) and after the keyword and hybrid ones (the
// keyword index loaded too).
type restartResult struct {
	Kinds       map[string]restartKind `json:"kinds"`
	AfterVector memStats               `json:"after_vector"`
	AfterAll    memStats               `json:"after_all"`
	Indexed     int                    `json:"indexed_rows"`
	FromFiles   bool                   `json:"from_files"`
}

type restartKind struct {
	IDs    [][]int64 `json:"ids"`
	TimesS []float64 `json:"times_s"`
	CPUs   float64   `json:"cpu_s"` // the process's CPU time over the queries
}

// runBenchRestart is `ragd bench search-restart --dir DIR --queries FILE`: it opens the store in DIR,
// answers the first vector query and prints "first" on a line of its own, then times every query of FILE
// (vector, keyword and hybrid, top 10) and prints a restartResult as one JSON line.
func runBenchRestart(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("bench search-restart")
	dir := fs.String("dir", "", "data directory of the store")
	qfile := fs.String("queries", "", "queries file (JSON)")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if err := noArgs("bench search-restart", pos); err != nil {
		return err
	}
	if *dir == "" || *qfile == "" {
		return usageErr("--dir and --queries are required")
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	st, err := sqlite.Open(ctx, *dir, benchStoreOptions(cfg))
	if err != nil {
		return err
	}
	defer st.Close()
	b, err := os.ReadFile(*qfile)
	if err != nil {
		return err
	}
	var qs restartQueries
	if err := json.Unmarshal(b, &qs); err != nil || len(qs.Vectors) == 0 || len(qs.Texts) != len(qs.Vectors) {
		return fmt.Errorf("queries file %s: not a benchmark's queries (%v)", *qfile, err)
	}
	vq := func(i int) rag.VectorQuery {
		return rag.VectorQuery{Space: benchSpace, Vector: qs.Vectors[i], K: 10}
	}
	if _, err := st.VectorCandidates(ctx, rag.LocalPrincipal, vq(0)); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "first")
	res := restartResult{Kinds: map[string]restartKind{}, FromFiles: st.VectorFilesRestored() > 0}
	run := func(kind string, f func(i int) ([]int64, error)) error {
		var k restartKind
		cpu := processCPU()
		for i := range qs.Texts {
			t := time.Now()
			ids, err := f(i)
			if err != nil {
				return fmt.Errorf("%s query %d: %w", kind, i, err)
			}
			k.TimesS = append(k.TimesS, time.Since(t).Seconds())
			k.IDs = append(k.IDs, ids)
		}
		k.CPUs = (processCPU() - cpu).Seconds()
		res.Kinds[kind] = k
		return nil
	}
	idsOf := func(cs []rag.Candidate, err error) ([]int64, error) {
		ids := make([]int64, len(cs))
		for j, c := range cs {
			ids[j] = c.ChunkID
		}
		return ids, err
	}
	if err := run("vector", func(i int) ([]int64, error) { return idsOf(st.VectorCandidates(ctx, rag.LocalPrincipal, vq(i))) }); err != nil {
		return err
	}
	res.AfterVector = readMemStats()
	if res.Indexed, _, err = st.WaitVectorIndex(ctx, benchSpace); err != nil {
		return err
	}
	if _, _, err := st.WaitKeywordIndex(ctx); err != nil {
		return err
	}
	if err := run("keyword", func(i int) ([]int64, error) {
		return idsOf(st.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms(qs.Texts[i]), K: 10}))
	}); err != nil {
		return err
	}
	hybrid, err := benchHybrid(st, qs.Texts, func(i int) []float32 { return qs.Vectors[i] })
	if err != nil {
		return err
	}
	if err := run("hybrid", func(i int) ([]int64, error) { return hybrid(ctx, i) }); err != nil {
		return err
	}
	res.AfterAll = readMemStats()
	return json.NewEncoder(env.Stdout).Encode(res)
}

// benchRestart runs the restart in a process of its own over the store in dir (closed), with the store
// settings of cfg, and returns the restarted store's rows (named system, memory: the process's VmRSS
// when each kind was timed), the time from starting the process to its first answer, and what it
// reported.
func (c *benchCorpus) benchRestart(ctx context.Context, dir string, cfg config.Config, rowOf map[int64]int32, system string) ([]searchRow, float64, *restartResult, error) {
	qs := restartQueries{Texts: c.qtexts}
	for i := range c.qtexts {
		qs.Vectors = append(qs.Vectors, c.query(i))
	}
	b, err := json.Marshal(qs)
	if err != nil {
		return nil, 0, nil, err
	}
	qfile := filepath.Join(dir, "queries.json")
	if err := os.WriteFile(qfile, b, 0o600); err != nil {
		return nil, 0, nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, 0, nil, err
	}
	cmd := exec.CommandContext(ctx, exe, "bench", "search-restart", "--dir", dir, "--queries", qfile)
	cmd.Env = append(os.Environ(), benchChildEnv+"=1",
		"RAGD_VECTOR_INDEX_MIN="+strconv.Itoa(cfg.VectorIndexMin),
		"RAGD_VECTOR_MEMORY="+strconv.FormatInt(cfg.VectorMemory, 10),
		"RAGD_VECTOR_HEAP="+strconv.FormatInt(cfg.VectorHeap, 10),
		"RAGD_KEYWORD_INDEX_MIN="+strconv.Itoa(cfg.KeywordIndexMin))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, nil, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var first float64
	var res restartResult
	for sc.Scan() {
		line := sc.Bytes()
		if string(line) == "first" {
			first = time.Since(start).Seconds()
			continue
		}
		if err := json.Unmarshal(line, &res); err != nil {
			cmd.Wait()
			return nil, 0, nil, fmt.Errorf("restarted process: %w: %.200s", err, line)
		}
	}
	if err := cmd.Wait(); err != nil || first == 0 || res.Kinds == nil {
		return nil, 0, nil, fmt.Errorf("restarted process: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	want := map[string][][]vindex.Hit{"vector": c.exactVec, "keyword": c.exactKw, "hybrid": c.exactHybrid}
	var rows []searchRow
	for _, kind := range []string{"vector", "keyword", "hybrid"} {
		k := res.Kinds[kind]
		got := make([][]vindex.Hit, len(k.IDs))
		times := make([]time.Duration, len(k.TimesS))
		for i, ids := range k.IDs {
			for _, id := range ids {
				got[i] = append(got[i], vindex.Hit{Row: rowOf[id]})
			}
			times[i] = time.Duration(k.TimesS[i] * float64(time.Second))
		}
		mem := res.AfterAll.RSS
		if kind == "vector" {
			mem = res.AfterVector.RSS
		}
		rows = append(rows, timed(system, kind, times, time.Duration(k.CPUs*float64(time.Second)), recall(got, want[kind]), mem, 0))
	}
	return rows, first, &res, nil
}

// benchChildEnv, set to 1, makes a test binary of this package run the command of its arguments instead of
// its tests (TestMain), so that `ragd bench search` can start its restarted process from a test.
const benchChildEnv = "RAGD_BENCH_CHILD"
