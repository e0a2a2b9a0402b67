package hostile

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/hostile"
)

// TestBombs uploads the bombs together to a server that already holds a document, and checks each
// fails (or, for Markdown that used to be quadratic, is indexed) with a clear error, that the server's
// resident memory stays under 1 GiB throughout, that the other document is found by every search made
// meanwhile, and that after a restart none of the failed documents is tried again.
func TestBombs(t *testing.T) {
	data := t.TempDir()
	// PDFium gets 128 MiB instead of 512: a 160 MiB bomb proves the same limit as the 600 MB one at
	// a quarter of the time it takes to build and parse.
	env := []string{"RAGD_DATA_DIR=" + data, "RAGD_RATE_LIMIT_SEARCH=100000", fmt.Sprintf("RAGD_PDF_MEMORY_LIMIT=%d", 128<<20)}
	s := startServer(t, env...)
	good := s.uploadOK(t, "turbines.md", []byte("# Wind turbines\n\nThe gearbox of a wind turbine converts the slow rotor speed into generator speed.\n"))
	if d := s.settle(t, good.ID, 2*time.Minute); d.Status != "ready" {
		t.Fatalf("the ordinary document: %+v", d)
	}

	// Sample memory and search while the bombs are processed.
	var (
		mu        sync.Mutex
		latencies []time.Duration
		misses    []string
		maxRSS    int64
	)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			rss, _ := s.memory(t)
			start := time.Now()
			sources, err := s.search(t, "gearbox generator speed")
			d := time.Since(start)
			mu.Lock()
			maxRSS = max(maxRSS, rss)
			latencies = append(latencies, d)
			if err != nil || !slices.Contains(sources, "turbines.md") {
				misses = append(misses, fmt.Sprint(sources, err))
			}
			mu.Unlock()
		}
	}()

	start := time.Now()
	payloads := []struct {
		name    string
		data    []byte
		code    string // "" when the document must be indexed
		setting string
	}{
		// A tenth of the 1.1 GB: over the 64 MiB member budget all the same.
		{"bomb.docx", hostile.DOCX(110<<20, nil), "too_large", "RAGD_MAX_MEMBER_BYTES"},
		// The full 900 KB: it ran for more than 14 minutes; now it is indexed like any file.
		{"quadratic.md", hostile.QuadraticMarkdown(900_000), "", ""},
		// A stream that inflates to 160 MiB, over PDFium's 128 MiB.
		{"bomb.pdf", hostile.PDF(hostile.PDFText("cover page"), hostile.PDFBomb(160<<20)), "too_large", "RAGD_PDF_MEMORY_LIMIT"},
	}
	t.Logf("payloads built in %s", time.Since(start).Round(time.Millisecond))
	ids := make([]string, len(payloads))
	for i, p := range payloads {
		ids[i] = s.uploadOK(t, p.name, p.data).ID
	}
	failed := map[string]document{}
	for i, p := range payloads {
		d := s.settle(t, ids[i], 5*time.Minute)
		switch {
		case p.code == "" && d.Status != "ready":
			t.Errorf("%s: %s %s %s, want it indexed", p.name, d.Status, d.ErrorCode, d.Error)
		case p.code != "" && (d.Status != "failed" || d.ErrorCode != p.code || !strings.Contains(d.Error, p.setting)):
			t.Errorf("%s: %s %s %q, want failed with %s naming %s", p.name, d.Status, d.ErrorCode, d.Error, p.code, p.setting)
		case p.code != "":
			failed[d.ID] = d
			t.Logf("%s: %s: %s", p.name, d.ErrorCode, d.Error)
		}
	}
	t.Logf("all settled %s after upload", time.Since(start).Round(time.Millisecond))
	close(stop)
	<-sampled
	_, peak := s.memory(t)
	mu.Lock()
	t.Logf("server memory: highest VmRSS sampled %d MiB, VmHWM %d MiB", maxRSS>>20, peak>>20)
	if peak >= 1<<30 {
		t.Errorf("peak resident memory %d MiB, want under 1 GiB", peak>>20)
	}
	if len(misses) > 0 {
		t.Errorf("%d of %d searches during the bombs missed the ordinary document: %v", len(misses), len(latencies), misses[:min(3, len(misses))])
	}
	if len(latencies) == 0 {
		t.Fatal("no search ran while the bombs were processed")
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	t.Logf("search during the bombs: %d searches, p50 %s, p95 %s, max %s", len(latencies),
		latencies[len(latencies)/2], latencies[len(latencies)*95/100], latencies[len(latencies)-1])
	mu.Unlock()

	// After a restart nothing is tried again: the failed documents keep their state and the server never
	// mentions them (an attempt logs its document).
	s.stop(t)
	s2 := startServer(t, env...)
	time.Sleep(5 * time.Second) // start-up reconciliation and a few job polls
	for id, before := range failed {
		if d := s2.document(t, id); d.Status != "failed" || d.UpdatedAt != before.UpdatedAt || d.Pending {
			t.Errorf("%s after restart: %+v, was %+v", d.Source, d, before)
		}
		if strings.Contains(s2.output(), id) {
			t.Errorf("the restarted server worked on %s:\n%s", id, s2.output())
		}
	}
	if sources, err := s2.search(t, "gearbox generator speed"); err != nil || !slices.Contains(sources, "turbines.md") {
		t.Errorf("after restart: %v %v", sources, err)
	}
}
