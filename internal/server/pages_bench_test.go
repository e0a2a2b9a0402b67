package server

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// BenchmarkPageImage is GET /api/documents/{id}/pages/1.png over HTTP on every shared PDF fixture, each
// request timed: "warm" asks for pages already rendered (the page cache answers), "render" asks for a new
// width each time (the page is rendered: blob read, PDFium, PNG), "boxes" finds 600 characters of the
// first chunk on page 1 (GET …/pages/1/boxes, never cached). Reported: p50 and p95 per request.
//
//	go test ./internal/server -run '^$' -bench PageImage -benchtime 200x
func BenchmarkPageImage(b *testing.B) {
	bn := setup(b, nil)
	pdfs, err := filepath.Glob(filepath.Join(fixture(b, "pdf"), "*.pdf"))
	if err != nil || len(pdfs) == 0 {
		b.Fatalf("no shared PDFs: %v", err)
	}
	var ids []string
	for _, p := range pdfs {
		ids = append(ids, bn.ingestFile(b, filepath.Join("pdf", filepath.Base(p)), nil).ID)
	}
	get := func(path string) time.Duration {
		start := time.Now()
		resp, body := bn.do(b, request{method: "GET", path: path})
		d := time.Since(start)
		if resp.StatusCode != 200 {
			b.Fatalf("GET %s: %d %s", path, resp.StatusCode, trim(body))
		}
		return d
	}
	report := func(b *testing.B, times []time.Duration) {
		slices.Sort(times)
		at := func(p float64) float64 {
			return float64(times[min(len(times)-1, int(p*float64(len(times))))].Microseconds()) / 1000
		}
		b.ReportMetric(at(0.50), "p50-ms")
		b.ReportMetric(at(0.95), "p95-ms")
	}

	b.Run("warm", func(b *testing.B) {
		for _, id := range ids {
			get("/api/documents/" + id + "/pages/1.png")
		}
		var times []time.Duration
		i := 0
		for b.Loop() {
			times = append(times, get("/api/documents/"+ids[i%len(ids)]+"/pages/1.png"))
			i++
		}
		report(b, times)
	})
	b.Run("boxes", func(b *testing.B) {
		// The text of each document's first chunk on page 1, as the chat asks for a cited passage.
		var paths []string
		for _, id := range ids {
			chunks, err := bn.store.ListChunks(b.Context(), rag.LocalPrincipal, id)
			if err != nil || len(chunks) == 0 {
				b.Fatalf("chunks of %s: %v", id, err)
			}
			text := []rune(chunks[0].Text)
			paths = append(paths, "/api/documents/"+id+"/pages/1/boxes?"+url.Values{"text": {string(text[:min(len(text), 600)])}}.Encode())
		}
		var times []time.Duration
		i := 0
		for b.Loop() {
			times = append(times, get(paths[i%len(paths)]))
			i++
		}
		report(b, times)
	})
	b.Run("render", func(b *testing.B) {
		var times []time.Duration
		i := 0
		for b.Loop() {
			// A width not asked for before: 1001, 1002, … so every request renders.
			times = append(times, get(fmt.Sprintf("/api/documents/%s/pages/1.png?w=%d", ids[i%len(ids)], DefaultPageWidth+1+i%(MaxPageWidth-DefaultPageWidth))))
			i++
		}
		report(b, times)
	})
}
