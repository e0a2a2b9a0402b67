package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/rag"
)

// benchQueries are the default search queries of `ragd bench http`: Korean and English, short and long,
// some matching the shared fixtures and eval sets, some matching nothing.
var benchQueries = []string{
	"탄소중립위원회 위원 위촉",
	"이 법의 시행일은 언제인가요?",
	"다양한 사회계층의 대표성",
	"컴포넌트 렌더링이 일어나는 이유",
	"state 업데이트 큐",
	"모듈을 내보내고 가져오는 방법",
	"대한민국의 수도는 어디인가?",
	"조선 시대 왕의 업적",
	"세계 최초의 컴퓨터",
	"what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft",
	"boundary layer transition at supersonic speeds",
	"heat transfer in laminar flow",
	"chapter 13 trustee handbook operating reserves",
	"Mozilla Firefox release history",
	"annual report risk factors",
	"notice of proposed rulemaking comments",
	"WARN layoffs county",
	"quantum chromodynamics lattice gauge",
	"노동조합 산업별 연합단체",
	"jet engine noise reduction",
}

// benchResult is what one client measured.
type benchResult struct {
	latencies [2][]time.Duration // of successful requests: searches, chats
	errors    map[string]int     // by status code or error kind
}

// benchTarget is one kind of request of `ragd bench http`: its path and bodies.
type benchTarget struct {
	url    string
	bodies [][]byte
}

func runBench(ctx context.Context, env *Env, args []string) error {
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
		printHelp(env.Stdout, newFlagSet("bench"))
		return flag.ErrHelp
	case len(args) == 0:
		return usageErr("a subcommand is required: http or search")
	case args[0] == "search":
		return runBenchSearch(ctx, env, args[1:])
	case args[0] == "search-restart": // the restarted process of `bench search` (benchrestart.go)
		return runBenchRestart(ctx, env, args[1:])
	case args[0] != "http":
		return usageErr("unknown subcommand %q%s", args[0], didYouMean(args[0], []string{"http", "search"}, ""))
	}
	fs := newFlagSet("bench http")
	url := fs.String("url", "http://127.0.0.1:8080", "base `URL` of a running ragd serve")
	clients := fs.Int("clients", 50, "concurrent clients")
	duration := fs.Duration("duration", 60*time.Second, "how long to run")
	k := fs.Int("k", 5, fmt.Sprintf("hits per search, 1 to %d; 0 is the server's default", rag.MaxSearchK))
	queriesFile := fs.String("queries", "", "`FILE` with one query per line (default: a built-in Korean and English mix)")
	apiKey := fs.String("api-key", "", "API `KEY` (env RAGD_API_KEY)")
	timeout := fs.Duration("timeout", 30*time.Second, "timeout of one request")
	chatShare := fs.Float64("chat-share", 0, "share of the requests, 0 to 1, that are POST /api/chat with the query as the question (the rest search)")
	pos, err := parse(fs, args[1:], env.Stdout)
	if err != nil {
		return err
	}
	if err := noArgs("bench http", pos); err != nil {
		return err
	}
	if *clients < 1 || *duration <= 0 {
		return usageErr("--clients and --duration must be positive")
	}
	if *chatShare < 0 || *chatShare > 1 {
		return usageErr("--chat-share must be between 0 and 1 (got %g)", *chatShare)
	}
	if err := checkK(*k, rag.MaxSearchK); err != nil {
		return err
	}
	if *apiKey == "" {
		cfg, err := config.Load(env.Getenv)
		if err != nil {
			return fmt.Errorf("configuration: %w", err)
		}
		*apiKey = cfg.BenchAPIKey
	}
	queries := benchQueries
	if *queriesFile != "" {
		var err error
		if queries, err = readQueries(*queriesFile); err != nil {
			return err
		}
	}
	base := strings.TrimRight(*url, "/")
	if err := benchPing(ctx, base); err != nil {
		return err
	}

	client := &http.Client{
		Timeout:   *timeout,
		Transport: &http.Transport{MaxIdleConns: *clients, MaxIdleConnsPerHost: *clients, IdleConnTimeout: time.Minute},
	}
	defer client.CloseIdleConnections()
	share := int(math.Round(*chatShare * 100))
	fmt.Fprintf(env.Stdout, "ragd bench http: %d clients × %s → POST %s/api/search (k=%d, %d queries), %d%% of them POST /api/chat instead\n",
		*clients, *duration, base, *k, len(queries), share)

	targets := [2]benchTarget{{url: base + "/api/search"}, {url: base + "/api/chat"}}
	for _, q := range queries {
		b, _ := json.Marshal(map[string]any{"query": q, "k": *k})
		targets[0].bodies = append(targets[0].bodies, b)
		b, _ = json.Marshal(map[string]any{"question": q, "k": *k})
		targets[1].bodies = append(targets[1].bodies, b)
	}
	rctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	results := make([]benchResult, *clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[c] = benchClient(rctx, client, targets, share, *apiKey, c)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	var all []time.Duration
	var byKind [2][]time.Duration
	errs := map[string]int{}
	for _, r := range results {
		for i, l := range r.latencies {
			all = append(all, l...)
			byKind[i] = append(byKind[i], l...)
		}
		for k, n := range r.errors {
			errs[k] += n
		}
	}
	nerr := 0
	for _, n := range errs {
		nerr += n
	}
	printBench(env.Stdout, all, errs, nerr, elapsed)
	if share > 0 {
		for i, name := range []string{"search", "chat"} {
			fmt.Fprintf(env.Stdout, "%-9s %d ok, %s\n", name, len(byKind[i]), latencyLine(byKind[i]))
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if nerr > 0 {
		return fmt.Errorf("%d of %d requests failed", nerr, nerr+len(all))
	}
	return nil
}

// benchClient sends requests one after another until ctx ends: share of every 100 are chats, spread
// evenly among the searches. A request cut off by the end of the run is neither counted nor an error.
func benchClient(ctx context.Context, client *http.Client, targets [2]benchTarget, share int, key string, offset int) benchResult {
	res := benchResult{errors: map[string]int{}}
	for i := offset; ctx.Err() == nil; i++ {
		kind := 0
		if j := i - offset; (j+1)*share/100 > j*share/100 {
			kind = 1
		}
		t := targets[kind]
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(t.bodies[i%len(t.bodies)]))
		if err != nil {
			res.errors["request"]++
			return res
		}
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("X-RAG-API-Key", key)
		}
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return res
			}
			res.errors["transport"]++
			continue
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took := time.Since(t0)
		switch {
		case err != nil && ctx.Err() != nil:
			return res
		case err != nil:
			res.errors["read"]++
		case resp.StatusCode != http.StatusOK:
			res.errors[fmt.Sprintf("HTTP %d", resp.StatusCode)]++
		default:
			res.latencies[kind] = append(res.latencies[kind], took)
		}
	}
	return res
}

func benchPing(ctx context.Context, base string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return usageErr("--url: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("server %s is not reachable: %w", base, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("server %s is not ready: /readyz answered %d", base, resp.StatusCode)
	}
	return nil
}

func readQueries(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("queries: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if q := strings.TrimSpace(sc.Text()); q != "" {
			out = append(out, q)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("queries %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, errors.New("queries: the file has no query")
	}
	return out, nil
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func printBench(w io.Writer, lat []time.Duration, errs map[string]int, nerr int, elapsed time.Duration) {
	total := len(lat) + nerr
	fmt.Fprintf(w, "requests  %d in %.1f s (%.1f requests/s)\n", total, elapsed.Seconds(), float64(total)/elapsed.Seconds())
	fmt.Fprintf(w, "errors    %d\n", nerr)
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "          %s: %d\n", k, errs[k])
	}
	fmt.Fprintf(w, "latency   %s (successful requests)\n", latencyLine(lat))
}

// latencyLine is the percentiles and mean of durations (sorted in place).
func latencyLine(lat []time.Duration) string {
	slices.Sort(lat)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	mean := time.Duration(0)
	if len(lat) > 0 {
		mean = sum / time.Duration(len(lat))
	}
	return fmt.Sprintf("p50 %s  p95 %s  p99 %s  max %s  mean %s",
		ms(percentile(lat, 50)), ms(percentile(lat, 95)), ms(percentile(lat, 99)), ms(percentile(lat, 100)), ms(mean))
}
