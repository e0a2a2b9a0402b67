package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/ragd/ragd/internal/testkit"
)

var (
	shared   = testkit.Shared()
	fixtures = testkit.Shared("fixtures")
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveBinary()
	os.Exit(code)
}

// result is one run of the binary.
type result struct {
	code           int
	stdout, stderr string
}

// ragd runs the binary with args and env (on top of a clean environment: no RAGD_* from the caller).
func ragd(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(testkit.Binary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir()}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ragd %s: %v", strings.Join(args, " "), err)
	}
	return r
}

func mustJSON(t *testing.T, r result, v any) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
}

type hit struct {
	DocumentID  string  `json:"document_id"`
	ExternalID  string  `json:"external_id"`
	Title       string  `json:"title"`
	Source      string  `json:"source"`
	PageStart   int     `json:"page_start"`
	PageEnd     int     `json:"page_end"`
	Section     string  `json:"section"`
	Text        string  `json:"text"`
	OCR         bool    `json:"ocr"`
	OCRConf     float64 `json:"ocr_confidence"`
	Score       float64 `json:"score"`
	VectorScore float64 `json:"vector_score"`
	VectorRank  int     `json:"vector_rank"`
	KeywordRank int     `json:"keyword_rank"`
}

type answer struct {
	Answer   string         `json:"answer"`
	NotFound bool           `json:"not_found"`
	Language string         `json:"language"`
	Sources  []answerSource `json:"sources"`
}

// answerSource is a cited source of an answer.
type answerSource struct {
	N         int    `json:"n"`
	Source    string `json:"source"`
	PageStart int    `json:"page_start"`
	PageEnd   int    `json:"page_end"`
}

func TestFixturesEndToEnd(t *testing.T) {
	data := t.TempDir()
	env := []string{"RAGD_DATA_DIR=" + data}

	// Every shared fixture ingests.
	r := ragd(t, env, "ingest", fixtures)
	if r.code != 0 {
		t.Fatalf("ingest fixtures: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	files := fixtureFiles(t)
	if got := strings.Count(r.stdout, "\nok ") + strings.Count("\n"+r.stdout, "\nok "); got < len(files) {
		t.Fatalf("ingest reported %d ok lines for %d fixtures:\n%s", got/2, len(files), r.stdout)
	}
	if !strings.Contains(r.stdout, fmt.Sprintf("ingested %d, unchanged 0, failed 0", len(files))) {
		t.Errorf("summary: %s", lastLine(r.stdout))
	}

	t.Run("ReingestIsNoop", func(t *testing.T) {
		r := ragd(t, env, "ingest", fixtures)
		if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("ingested 0, unchanged %d, failed 0", len(files))) {
			t.Errorf("second ingest: exit %d, %s", r.code, lastLine(r.stdout))
		}
	})

	t.Run("PagesOfKoreanPDFs", func(t *testing.T) {
		if _, err := exec.LookPath("pdftotext"); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("pdftotext is missing (scripts/test.sh installs poppler-utils)")
			}
			t.Skip("pdftotext is not installed")
		}
		for _, name := range []string{"bill_2125318_original.pdf", "bill_2125318_review_report.pdf", "assembly_minutes_21_414_1_env_labor.pdf"} {
			path := filepath.Join(fixtures, "pdf", name)
			pages := pdftotextPages(t, path)
			checked, found := 0, 0
			for p := 1; p <= len(pages) && checked < 6; p++ {
				line := distinctiveLine(pages, p)
				if line == "" {
					continue
				}
				checked++
				var res struct{ Hits []hit }
				mustJSON(t, ragd(t, env, "search", "--json", "--k", "5", line), &res)
				ok := false
				for _, h := range res.Hits {
					if filepath.Base(h.Source) == name && h.PageStart <= p && p <= h.PageEnd {
						ok = true
						break
					}
				}
				if ok {
					found++
				} else {
					t.Logf("%s p.%d: %q not found on its page; hits: %s", name, p, line, describeHits(res.Hits))
				}
			}
			if checked < 4 || found < checked-1 {
				t.Errorf("%s: %d of %d page phrases found on the right page", name, found, checked)
			}
		}
	})

	t.Run("SearchJSONShape", func(t *testing.T) {
		r := ragd(t, env, "search", "--json", "탄소중립기본계획", "--k", "3")
		var raw struct {
			Hits []map[string]any `json:"hits"`
		}
		mustJSON(t, r, &raw)
		if len(raw.Hits) == 0 {
			t.Fatal("no hits")
		}
		for _, key := range []string{"document_id", "external_id", "title", "source", "page_start", "page_end", "section",
			"text", "score", "vector_score", "vector_rank", "keyword_score", "keyword_rank"} {
			if _, ok := raw.Hits[0][key]; !ok {
				t.Errorf("hit has no %q: %v", key, raw.Hits[0])
			}
		}
		if len(raw.Hits) > 3 {
			t.Errorf("%d hits for --k 3", len(raw.Hits))
		}
	})

	t.Run("FilterByType", func(t *testing.T) {
		var res struct{ Hits []hit }
		mustJSON(t, ragd(t, env, "search", "--json", "Mozilla Firefox browser", "--filter", "type=text/html"), &res)
		if len(res.Hits) == 0 {
			t.Fatal("no hits")
		}
		for _, h := range res.Hits {
			if !strings.HasSuffix(h.Source, ".html") {
				t.Errorf("type=text/html returned %s", h.Source)
			}
		}
	})

	t.Run("AskKorean", func(t *testing.T) {
		var a answer
		mustJSON(t, ragd(t, env, "ask", "--json", "탄소중립위원회 위원 위촉 시 대표성이 반영되어야 하는 사회계층은?"), &a)
		if a.NotFound || len(a.Sources) == 0 || !strings.Contains(a.Answer, "[") {
			t.Fatalf("answer without citations: %+v", a)
		}
		if a.Language != "ko" || !strings.Contains(a.Answer, "청년") {
			t.Errorf("answer: %q", a.Answer)
		}
		for _, s := range a.Sources {
			if !strings.Contains(a.Answer, fmt.Sprintf("[%d]", s.N)) {
				t.Errorf("source %d is listed but not cited", s.N)
			}
		}
	})

	t.Run("AskEnglish", func(t *testing.T) {
		var a answer
		mustJSON(t, ragd(t, env, "ask", "--json", "What does the Chapter 13 trustee handbook say about the trustee's duties?"), &a)
		if a.NotFound || len(a.Sources) == 0 || a.Language != "en" {
			t.Fatalf("answer: %+v", a)
		}
	})

	t.Run("AskNotCovered", func(t *testing.T) {
		for q, want := range map[string]string{
			"맛있는 김치찌개 레시피 알려줘":                            "찾지 못했습니다",
			"What is the best recipe for chocolate cake?": "do not cover",
		} {
			var a answer
			mustJSON(t, ragd(t, env, "ask", "--json", q), &a)
			if !a.NotFound || len(a.Sources) != 0 || !strings.Contains(a.Answer, want) {
				t.Errorf("%q: not_found=%v sources=%d answer %q", q, a.NotFound, len(a.Sources), a.Answer)
			}
		}
	})

	t.Run("BadInputChangesNothing", func(t *testing.T) {
		before := ragd(t, env, "search", "--json", "탄소중립기본계획", "--k", "3").stdout
		dir := t.TempDir()
		big := bytes.Repeat([]byte("spacious text "), 100)
		write := func(name string, b []byte) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
		corrupt, _ := os.ReadFile(filepath.Join("..", "..", "internal", "extract", "testdata", "truncated.pdf"))
		encrypted, _ := os.ReadFile(filepath.Join("..", "..", "internal", "extract", "testdata", "encrypted.pdf"))
		scanned, _ := os.ReadFile(filepath.Join("..", "..", "internal", "extract", "testdata", "image-only.pdf"))
		latin1, _ := os.ReadFile(filepath.Join("..", "..", "internal", "extract", "testdata", "latin1.txt"))
		cases := []struct {
			name, file string
			want       []string
		}{
			{"Empty", write("empty.txt", nil), []string{"empty.txt", "empty", "invalid_request"}},
			{"Unsupported", write("photo.jpg", []byte{0xff, 0xd8, 0xff, 0xe0}), []string{"photo.jpg", "unsupported_media_type"}},
			{"CorruptPDF", write("broken.pdf", corrupt), []string{"broken.pdf", "corrupt", "invalid_request"}},
			{"EncryptedPDF", write("locked.pdf", encrypted), []string{"locked.pdf", "encrypted", "invalid_request"}},
			{"NoTextLayer", write("scan.pdf", scanned), []string{"scan.pdf", "OCR", "invalid_request"}},
			{"NotUTF8", write("latin1.txt", latin1), []string{"latin1.txt", "UTF-8", "invalid_request"}},
			{"TooLarge", write("big.txt", big), []string{"big.txt", "over the limit", "payload_too_large"}},
		}
		limited := append(env[:len(env):len(env)], fmt.Sprintf("RAGD_MAX_UPLOAD_BYTES=%d", len(big)-1))
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := ragd(t, limited, "ingest", c.file)
				if r.code == 0 {
					t.Fatalf("exit 0 for bad input\n%s", r.stdout)
				}
				for _, w := range c.want {
					if !strings.Contains(r.stdout+r.stderr, w) {
						t.Errorf("output lacks %q:\n%s%s", w, r.stdout, r.stderr)
					}
				}
			})
		}
		after := ragd(t, env, "search", "--json", "탄소중립기본계획", "--k", "3").stdout
		if before != after {
			t.Errorf("search results changed after bad input:\nbefore %s\nafter %s", before, after)
		}
		// Exactly at the limit is accepted.
		atLimit := append(env[:len(env):len(env)], fmt.Sprintf("RAGD_MAX_UPLOAD_BYTES=%d", len(big)))
		if r := ragd(t, atLimit, "ingest", filepath.Join(dir, "big.txt")); r.code != 0 {
			t.Errorf("a file of exactly the limit was refused: %s%s", r.stdout, r.stderr)
		}
	})
}

func fixtureFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(fixtures, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".pdf", ".docx", ".html", ".md":
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pdftotextPages returns poppler's text of each page, NFKC-normalised.
func pdftotextPages(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command("pdftotext", "-enc", "UTF-8", path, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	pages := strings.Split(norm.NFKC.String(string(out)), "\f")
	if len(pages) > 0 && strings.TrimSpace(pages[len(pages)-1]) == "" {
		pages = pages[:len(pages)-1]
	}
	return pages
}

// distinctiveLine returns the longest line of page p (1-based) with at least 12 characters and 5 Hangul
// syllables that occurs on no other page, or "".
func distinctiveLine(pages []string, p int) string {
	best := ""
	for _, line := range strings.Split(pages[p-1], "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if utf8.RuneCountInString(line) < 12 || hangul(line) < 5 || utf8.RuneCountInString(line) <= utf8.RuneCountInString(best) {
			continue
		}
		unique := true
		for i, other := range pages {
			if i != p-1 && strings.Contains(strings.Join(strings.Fields(other), " "), line) {
				unique = false
				break
			}
		}
		if unique {
			best = line
		}
	}
	return best
}

func hangul(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0xAC00 && r <= 0xD7A3 {
			n++
		}
	}
	return n
}

func describeHits(hs []hit) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "[%s p.%d-%d] ", filepath.Base(h.Source), h.PageStart, h.PageEnd)
	}
	return b.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
