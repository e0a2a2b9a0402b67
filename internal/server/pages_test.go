package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// countingRenderer is the real renderer, counting the pages it is asked for (to see the cache work).
type countingRenderer struct {
	PDFPages
	calls atomic.Int64
}

func (c *countingRenderer) RenderPage(ctx context.Context, pdf []byte, page, width int) (*extract.RenderedPage, error) {
	c.calls.Add(1)
	return c.PDFPages.RenderPage(ctx, pdf, page, width)
}

// asPrincipal serves the store to every request as one principal: until API keys carry non-admin
// principals, it is how a test asks as someone who may not see a document. The store applies its own
// visibility predicate.
type asPrincipal struct {
	Documents
	p rag.Principal
}

func (a asPrincipal) GetDocument(ctx context.Context, _ rag.Principal, id string) (*rag.Document, error) {
	return a.Documents.GetDocument(ctx, a.p, id)
}

func (a asPrincipal) ListVersions(ctx context.Context, _ rag.Principal, id string) ([]*rag.DocumentVersion, error) {
	return a.Documents.ListVersions(ctx, a.p, id)
}

const koreanName = "탄소중립 법안 (원문).pdf"

func TestDocumentFile(t *testing.T) {
	b := setup(t, nil)
	pdf := readFixture(t, "pdf/bill_2125318_original.pdf")
	doc := b.ingest(t, ingest.Request{Name: koreanName, Data: pdf})
	md := b.ingest(t, ingest.Request{Name: "휴가 규정", Title: "휴가 규정", Data: []byte("# 휴가 규정\n\n연차 휴가는 매년 15일입니다.\n"),
		Source: "휴가 규정"})
	base := "/api/documents/" + doc.ID + "/file"

	b.run(t, []scenario{
		{name: "OK", method: "GET", path: base, status: 200,
			wantHeaders: map[string]string{"Content-Type": "application/pdf", "ETag": `"` + doc.ContentHash + `"`,
				"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "default-src 'none'; sandbox"},
			check: func(t *testing.T, resp *http.Response, body []byte) {
				if !bytes.Equal(body, pdf) {
					t.Errorf("body is %d bytes, not the %d bytes uploaded", len(body), len(pdf))
				}
				cd := resp.Header.Get("Content-Disposition")
				want := `attachment; filename="____ __ (__).pdf"; filename*=UTF-8''%ED%83%84%EC%86%8C%EC%A4%91%EB%A6%BD%20%EB%B2%95%EC%95%88%20%28%EC%9B%90%EB%AC%B8%29.pdf`
				if cd != want {
					t.Errorf("Content-Disposition\n %s\nwant\n %s", cd, want)
				}
				disp, params, err := mime.ParseMediaType(cd)
				if err != nil || disp != "attachment" || params["filename"] != koreanName {
					t.Errorf("Content-Disposition reads as %q %q (%v), want attachment %q", disp, params, err, koreanName)
				}
			}},
		{name: "Range", method: "GET", path: base, headers: map[string]string{"Range": "bytes=0-7"}, status: 206,
			contains: []string{"%PDF-"}},
		{name: "NotModified", method: "GET", path: base, headers: map[string]string{"If-None-Match": `"` + doc.ContentHash + `"`}, status: 304},
		{name: "Version1", method: "GET", path: base + "?version=1", status: 200,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				if !bytes.Equal(body, pdf) {
					t.Error("version 1 is not the uploaded file")
				}
			}},
		{name: "NoSuchVersion", method: "GET", path: base + "?version=2", status: 404, code: rag.CodeNotFound},
		{name: "BadVersion", method: "GET", path: base + "?version=x", status: 400, code: rag.CodeInvalid},
		{name: "ZeroVersion", method: "GET", path: base + "?version=0", status: 400, code: rag.CodeInvalid},
		{name: "UnknownDocument", method: "GET", path: "/api/documents/nope/file", status: 404, code: rag.CodeNotFound},
		// A document whose name has no extension gets its type's; the bytes keep their own encoding, so no
		// charset is claimed.
		{name: "NoExtension", method: "GET", path: "/api/documents/" + md.ID + "/file", status: 200,
			wantHeaders: map[string]string{"Content-Type": "text/plain"},
			contains:    []string{"연차 휴가는 매년 15일입니다."},
			check: func(t *testing.T, resp *http.Response, _ []byte) {
				_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
				if err != nil || params["filename"] != "휴가 규정.txt" {
					t.Errorf("Content-Disposition %q: filename %q (%v), want 휴가 규정.txt", resp.Header.Get("Content-Disposition"), params["filename"], err)
				}
			}},
	})

	t.Run("InvisibleIsNotFound", func(t *testing.T) {
		b.deps.Documents = asPrincipal{Documents: b.store, p: rag.Principal{ID: "someone-else"}}
		b.serve(t)
		for _, p := range []string{base, base + "?version=1", "/api/documents/" + doc.ID + "/pages/1.png", "/api/documents/" + doc.ID + "/pages/1/boxes?text=x"} {
			resp, body := b.do(t, request{method: "GET", path: p})
			if resp.StatusCode != 404 || !strings.Contains(string(body), `"not_found"`) || bytes.Contains(body, []byte("%PDF")) {
				t.Errorf("GET %s as another principal: %d %s, want 404 not_found", p, resp.StatusCode, trim(body))
			}
		}
	})
}

func TestAttachmentHeader(t *testing.T) {
	for _, name := range []string{"report.pdf", "보고서.pdf", `a"b\c%d.txt`, "line\r\nbreak.md", "naïve résumé.docx", "semi;colon,comma.pdf"} {
		cd := attachment(name)
		if strings.ContainsAny(cd, "\r\n") {
			t.Errorf("%q: header %q has a line break", name, cd)
			continue
		}
		_, params, err := mime.ParseMediaType(cd)
		if err != nil {
			t.Errorf("%q: %q does not parse: %v", name, cd, err)
			continue
		}
		want := strings.NewReplacer("\r", "_", "\n", "_").Replace(name)
		if params["filename"] != want {
			t.Errorf("%q: header %q reads back as %q", name, cd, params["filename"])
		}
	}
}

func TestPageImage(t *testing.T) {
	b := setup(t, nil)
	renders := &countingRenderer{PDFPages: b.deps.Pages}
	b.deps.Pages = renders
	b.serve(t)
	doc := b.ingestFile(t, "pdf/bill_2125318_original.pdf", nil)
	md := b.ingest(t, ingest.Request{Name: "notes.md", Data: []byte("# notes\n\nsome text\n")})
	base := "/api/documents/" + doc.ID + "/pages/"
	width := func(want int) func(*testing.T, *http.Response, []byte) {
		return func(t *testing.T, resp *http.Response, body []byte) {
			img, err := png.Decode(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			if img.Bounds().Dx() != want {
				t.Errorf("image is %d px wide, want %d", img.Bounds().Dx(), want)
			}
		}
	}
	b.run(t, []scenario{
		{name: "Default", method: "GET", path: base + "1.png", status: 200, check: width(DefaultPageWidth),
			wantHeaders: map[string]string{"Content-Type": "image/png", "X-Page-Count": "10", "Cache-Control": "private, no-cache",
				"ETag": fmt.Sprintf(`"%s-1-%d"`, doc.ContentHash, DefaultPageWidth)}},
		{name: "MinWidth", method: "GET", path: base + "10.png?w=100", status: 200, check: width(MinPageWidth)},
		{name: "MaxWidth", method: "GET", path: base + "2.png?w=2000", status: 200, check: width(MaxPageWidth)},
		{name: "BelowMinWidth", method: "GET", path: base + "1.png?w=99", status: 400, code: rag.CodeInvalid},
		{name: "AboveMaxWidth", method: "GET", path: base + "1.png?w=2001", status: 400, code: rag.CodeInvalid},
		{name: "WidthNotANumber", method: "GET", path: base + "1.png?w=wide", status: 400, code: rag.CodeInvalid},
		{name: "PageZero", method: "GET", path: base + "0.png", status: 400, code: rag.CodeInvalid},
		{name: "PageNotANumber", method: "GET", path: base + "first.png", status: 400, code: rag.CodeInvalid},
		{name: "PastTheLastPage", method: "GET", path: base + "11.png", status: 404, code: rag.CodeNotFound, contains: []string{"10 page"}},
		{name: "NotPNG", method: "GET", path: base + "1", status: 404, code: rag.CodeNotFound},
		{name: "NotAPDF", method: "GET", path: "/api/documents/" + md.ID + "/pages/1.png", status: 415, code: rag.CodeUnsupportedMediaType},
		{name: "UnknownDocument", method: "GET", path: "/api/documents/nope/pages/1.png", status: 404, code: rag.CodeNotFound},
		{name: "NotModified", method: "GET", path: base + "1.png",
			headers: map[string]string{"If-None-Match": fmt.Sprintf(`"%s-1-%d"`, doc.ContentHash, DefaultPageWidth)}, status: 304},
	})

	t.Run("RenderedOnce", func(t *testing.T) {
		before := renders.calls.Load()
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				resp, body := b.do(t, request{method: "GET", path: base + "3.png?w=640"})
				if resp.StatusCode != 200 {
					t.Errorf("status %d: %s", resp.StatusCode, trim(body))
				}
			})
		}
		wg.Wait()
		resp, _ := b.do(t, request{method: "GET", path: base + "3.png?w=640"})
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if n := renders.calls.Load() - before; n != 1 {
			t.Errorf("7 requests for one page rendered it %d times, want 1", n)
		}
		// A failure is not kept: asking again renders again (and fails again).
		before = renders.calls.Load()
		for range 2 {
			b.do(t, request{method: "GET", path: base + "11.png"})
		}
		if n := renders.calls.Load() - before; n != 2 {
			t.Errorf("2 requests past the last page rendered %d times, want 2", n)
		}
	})
}

func TestPageCacheEvicts(t *testing.T) {
	c := newPageCache(100)
	page := func(n int) func() (*extract.RenderedPage, error) {
		return func() (*extract.RenderedPage, error) { return &extract.RenderedPage{PNG: make([]byte, n)}, nil }
	}
	renders := 0
	get := func(key string, n int) {
		if _, err := c.get(key, func() (*extract.RenderedPage, error) { renders++; return page(n)() }); err != nil {
			t.Fatal(err)
		}
	}
	get("a", 40)
	get("b", 40)
	get("a", 40) // a is now the most recently used
	get("c", 40) // over 100 bytes: b goes
	if c.size != 80 || len(c.entries) != 2 || c.entries["b"] != nil {
		t.Fatalf("size %d, %d entries (b kept: %v); want a and c, 80 bytes", c.size, len(c.entries), c.entries["b"] != nil)
	}
	get("big", 101) // larger than the whole budget: served, not kept
	if c.entries["big"] != nil || c.size != 80 {
		t.Fatalf("a page over the budget was kept (size %d)", c.size)
	}
	get("exact", 100) // exactly the budget: kept, alone
	if c.entries["exact"] == nil || c.size != 100 || len(c.entries) != 1 {
		t.Fatalf("a page of exactly the budget: size %d, %d entries", c.size, len(c.entries))
	}
	if renders != 5 {
		t.Fatalf("%d renders, want 5 (the repeated a was cached)", renders)
	}

	// A render that panics fails whoever waits for it, and the next request renders again.
	started, release := make(chan struct{}), make(chan struct{})
	waited := make(chan error)
	go func() {
		defer func() { _ = recover() }()
		_, _ = c.get("boom", func() (*extract.RenderedPage, error) {
			close(started)
			<-release
			panic("render failed")
		})
	}()
	<-started
	go func() {
		_, err := c.get("boom", page(1))
		waited <- err
	}()
	for {
		// The second caller waits for the first one's render.
		c.mu.Lock()
		n := c.inflight["boom"].waiters
		c.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-waited; err == nil {
		t.Fatal("the caller waiting for a render that panicked got no error")
	}
	if p, err := c.get("boom", page(7)); err != nil || len(p.PNG) != 7 {
		t.Fatalf("after the panic: %v, %v", p, err)
	}
}

// TestChunksCountTokens: every chunk listed carries its size in tokens, counted as prompt budgets count.
func TestChunksCountTokens(t *testing.T) {
	b := setup(t, nil)
	doc := b.ingestFile(t, "pdf/bill_2125318_original.pdf", nil)
	resp, body := b.do(t, request{method: "GET", path: "/api/documents/" + doc.ID + "/chunks"})
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, trim(body))
	}
	var res struct {
		Chunks []struct {
			Text      string `json:"text"`
			Tokens    int    `json:"tokens"`
			PageStart int    `json:"page_start"`
		} `json:"chunks"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Chunks) != doc.ChunkCount || len(res.Chunks) == 0 {
		t.Fatalf("%d chunks listed, the document has %d", len(res.Chunks), doc.ChunkCount)
	}
	for i, c := range res.Chunks {
		if c.Tokens != generate.CountTokens(c.Text) || c.Tokens == 0 || c.PageStart == 0 {
			t.Errorf("chunk %d: %d tokens (want %d), page %d", i, c.Tokens, generate.CountTokens(c.Text), c.PageStart)
		}
	}
}

func TestPageBoxes(t *testing.T) {
	b := setup(t, nil)
	doc := b.ingestFile(t, "pdf/bill_2125318_original.pdf", nil)
	md := b.ingest(t, ingest.Request{Name: "notes.md", Data: []byte("# notes\n\nsome text\n")})
	base := "/api/documents/" + doc.ID + "/pages/"
	q := func(texts ...string) string {
		v := url.Values{"text": texts}
		return "?" + v.Encode()
	}
	sentence := "제1조(시행일) 이 법은 공포 후 6개월이 경과한 날부터 시행한다."
	b.run(t, []scenario{
		{name: "OK", method: "GET", path: base + "5/boxes" + q(sentence, "없는 문장 qqqq zzzz"), status: 200,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				var res struct {
					Page  int           `json:"page"`
					Boxes []extract.Box `json:"boxes"`
					Share []float64     `json:"share"`
				}
				if err := json.Unmarshal(body, &res); err != nil {
					t.Fatal(err)
				}
				if res.Page != 5 || len(res.Share) != 2 || res.Share[0] < 0.95 || res.Share[1] >= extract.MinFoundShare || len(res.Boxes) == 0 {
					t.Fatalf("%s", body)
				}
				for _, bx := range res.Boxes {
					if bx.Text != 0 || bx.W <= 0 || bx.H <= 0 || bx.X+bx.W > 1 || bx.Y+bx.H > 1 {
						t.Errorf("box %+v", bx)
					}
				}
			}},
		{name: "MostChars", method: "GET", path: base + "5/boxes" + q(strings.Repeat("가", MaxFindChars)), status: 200},
		{name: "TooManyChars", method: "GET", path: base + "5/boxes" + q(strings.Repeat("가", MaxFindChars-1), "나다"), status: 400, code: rag.CodeInvalid},
		{name: "MostTexts", method: "GET", path: base + "5/boxes" + q(make([]string, MaxFindTexts)...), status: 200},
		{name: "TooManyTexts", method: "GET", path: base + "5/boxes" + q(make([]string, MaxFindTexts+1)...), status: 400, code: rag.CodeInvalid},
		{name: "NoText", method: "GET", path: base + "5/boxes", status: 400, code: rag.CodeInvalid},
		{name: "PastTheLastPage", method: "GET", path: base + "11/boxes" + q("x"), status: 404, code: rag.CodeNotFound},
		{name: "PageNotANumber", method: "GET", path: base + "five/boxes" + q("x"), status: 400, code: rag.CodeInvalid},
		{name: "NotAPDF", method: "GET", path: "/api/documents/" + md.ID + "/pages/1/boxes" + q("x"), status: 415, code: rag.CodeUnsupportedMediaType},
	})
}
