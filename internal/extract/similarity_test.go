package extract

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// layoutSimilarity compares our text of a page with poppler's `pdftotext -layout` text of it, character by
// character (NFKC, whitespace runs as one space, running headers and page numbers already left out of ref):
//
//   - found: the share of pdftotext's characters we have in the same order. pdftotext's layout puts columns
//     and table cells side by side on one line, so its lines are cut at wide gaps into pieces (a line of a
//     column, a cell); each piece is matched where it fits best in our text (the fewest edits, Sellers'
//     algorithm) and counts its length less the edits. A mirrored or scrambled line matches badly; pieces in
//     another order (columns read one after the other) do not cost anything.
//   - extra: the share of our characters (spaces aside) that pdftotext does not have on the page at all —
//     text read twice, or stray characters.
func layoutSimilarity(ours, ref string) (found, extra float64, refChars, ourChars int) {
	text := []rune(strings.Join(strings.Fields(normText(ours)), " "))
	var matched int
	for _, ln := range strings.Split(ref, "\n") {
		for _, piece := range wideGapRe.Split(strings.TrimSpace(ln), -1) {
			p := []rune(strings.Join(strings.Fields(normText(piece)), " "))
			if len(p) == 0 {
				continue
			}
			refChars += len(p)
			matched += max(0, len(p)-bestMatchEdits(p, text))
		}
	}
	count := map[rune]int{}
	for _, r := range normText(ref) {
		if r != ' ' && r != '\n' && r != '\t' {
			count[r]++
		}
	}
	var stray int
	for _, r := range text {
		if r == ' ' {
			continue
		}
		ourChars++
		if count[r] > 0 {
			count[r]--
		} else {
			stray++
		}
	}
	if refChars > 0 {
		found = float64(matched) / float64(refChars)
	}
	if ourChars > 0 {
		extra = float64(stray) / float64(ourChars)
	}
	return found, extra, refChars, ourChars
}

// orderSimilarity is 1 − the edit distance between our text and pdftotext's reading-order text (no
// -layout), over the longer one's length (NFKC, whitespace runs as one space): columns read in the wrong
// order, or table cells scrambled, cost here what they cost a reader.
func orderSimilarity(ours, ref string) float64 {
	a := []rune(strings.Join(strings.Fields(normText(ours)), " "))
	b := []rune(strings.Join(strings.Fields(normText(ref)), " "))
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	last := editRow(a, b, false)
	return 1 - float64(last[len(b)])/float64(max(len(a), len(b)))
}

// bestMatchEdits is the fewest edits (insertions, deletions, substitutions) that turn p into some substring
// of text (approximate substring matching: the top row of the edit table is all zeros).
func bestMatchEdits(p, text []rune) int {
	return slices.Min(editRow(p, text, true))
}

// editRow returns the last row of the edit table of p against text: entry j is the fewest edits turning p
// into text[:j] — or, when anywhere, into a substring of text ending at j (the table's top row all zeros).
func editRow(p, text []rune, anywhere bool) []int {
	prev := make([]int, len(text)+1)
	cur := make([]int, len(text)+1)
	if !anywhere {
		for j := range prev {
			prev[j] = j
		}
	}
	for i := 1; i <= len(p); i++ {
		cur[0] = i
		for j := 1; j <= len(text); j++ {
			d := prev[j-1]
			if p[i-1] != text[j-1] {
				d++
			}
			cur[j] = min(d, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev
}

func TestLayoutSimilarity(t *testing.T) {
	ref := "The quick brown fox        jumps over\nthe lazy dog.               the fence."
	for _, tc := range []struct {
		name, ours string
		lo, hi     float64
	}{
		{"Same", "The quick brown fox the lazy dog. jumps over the fence.", 1, 1},
		{"ColumnsSideBySide", "The quick brown fox jumps over the lazy dog. the fence.", 1, 1},
		{"Mirrored", ".god yzal eht xof nworb kciuq ehT .ecnef eht revo spmuj", 0, 0.5},
		{"Half", "The quick brown fox the lazy dog.", 0.7, 0.8}, // 33 of 44 characters
	} {
		found, _, _, _ := layoutSimilarity(tc.ours, ref)
		if found < tc.lo || found > tc.hi {
			t.Errorf("%s: found %.3f, want %.2f..%.2f", tc.name, found, tc.lo, tc.hi)
		}
	}
	if _, extra, _, _ := layoutSimilarity("The quick brown fox the lazy dog. jumps over the fence. ZZZZ", ref); extra < 0.05 || extra > 0.1 {
		t.Errorf("extra %.3f for 4 stray letters in 48", extra)
	}
}

// similarityFloor is the least share of pdftotext's characters each fixture must keep (measured figures
// are in docs/retrieval.md, "PDF text against pdftotext").
var similarityFloor = map[string]float64{
	"pdf/bill_2125318_original.pdf":                  0.95,
	"pdf/bill_2125318_review_report.pdf":             0.96,
	"pdf/assembly_minutes_21_414_1_env_labor.pdf":    0.96,
	"pdf/federal-register-2020-17221.pdf":            0.99,
	"pdf/WARN-Report-for-7-1-2015-to-03-25-2016.pdf": 0.99,
	"pdf/senate-expenditures.pdf":                    0.99,
}

// TestPDF_SimilarityToPdftotext measures every PDF fixture against pdftotext -layout page by page and
// logs the figures per fixture (go test -run SimilarityToPdftotext -v ./internal/extract).
func TestPDF_SimilarityToPdftotext(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext not installed (Debian poppler-utils); the test script installs it")
	}
	files, err := filepath.Glob(filepath.Join(fixtures, "pdf", "*.pdf"))
	if err != nil || len(files) < len(similarityFloor) {
		t.Fatalf("PDF fixtures: %v %v", files, err)
	}
	for _, f := range files {
		rel := "pdf/" + filepath.Base(f)
		t.Run(filepath.Base(f), func(t *testing.T) {
			x := extractFixture(t, rel)
			running := runningLines(t, rel, x.Pages)
			var refAll, ourAll int
			var foundAll, extraAll, orderAll float64
			worst, worstPage := 1.0, 0
			for p := 1; p <= x.Pages; p++ {
				out, err := exec.Command("pdftotext", "-layout", "-f", strconv.Itoa(p), "-l", strconv.Itoa(p), f, "-").Output()
				if err != nil {
					t.Fatalf("pdftotext: %v", err)
				}
				var ref []string
				for _, ln := range strings.Split(string(out), "\n") {
					if pageNumberRe.MatchString(ln) || running[digitsRe.ReplaceAllString(squash(ln), "#")] {
						continue
					}
					ref = append(ref, ln)
				}
				ours := plainPageText(x, p)
				found, extra, refChars, ourChars := layoutSimilarity(ours, strings.Join(ref, "\n"))
				if refChars < 20 {
					continue
				}
				raw, err := exec.Command("pdftotext", "-f", strconv.Itoa(p), "-l", strconv.Itoa(p), f, "-").Output()
				if err != nil {
					t.Fatalf("pdftotext: %v", err)
				}
				var reading []string
				for _, ln := range strings.Split(string(raw), "\n") {
					if !pageNumberRe.MatchString(ln) && !running[digitsRe.ReplaceAllString(squash(ln), "#")] {
						reading = append(reading, ln)
					}
				}
				orderAll += orderSimilarity(ours, strings.Join(reading, "\n")) * float64(refChars)
				refAll += refChars
				ourAll += ourChars
				foundAll += found * float64(refChars)
				extraAll += extra * float64(ourChars)
				if found < worst {
					worst, worstPage = found, p
				}
				if found < 0.9 {
					t.Logf("%s page %d: found %.3f of %d characters", rel, p, found, refChars)
				}
			}
			found, extra := foundAll/float64(max(refAll, 1)), extraAll/float64(max(ourAll, 1))
			order := orderAll / float64(max(refAll, 1))
			t.Logf("%s: found %.3f of pdftotext's %d characters, extra %.3f of our %d; worst page %d (%.3f); reading order %.3f", rel, found, refAll, extra, ourAll, worstPage, worst, order)
			if floor, ok := similarityFloor[rel]; !ok || found < floor {
				t.Errorf("found %.3f, want at least %.2f", found, floor)
			}
		})
	}
}

// plainPageText is a page's text with tables as their cells separated by spaces (no markdown).
func plainPageText(x *rag.Extracted, page int) string {
	var b strings.Builder
	for _, bl := range x.Blocks {
		text := bl.TextOn(page)
		if text == "" {
			continue
		}
		if bl.Kind == rag.BlockTable {
			for _, r := range bl.Rows {
				b.WriteString(strings.Join(r, " "))
				b.WriteString("\n")
			}
			continue
		}
		b.WriteString(text)
		b.WriteString("\n")
	}
	if utf8.RuneCountInString(b.String()) == 0 {
		return ""
	}
	return b.String()
}

func TestOrderSimilarity(t *testing.T) {
	if got := orderSimilarity("abc def", "abc  def"); got != 1 {
		t.Errorf("same text: %.3f", got)
	}
	if got := orderSimilarity("fed cba", "abc def"); got > 0.5 {
		t.Errorf("reversed text: %.3f", got)
	}
}
