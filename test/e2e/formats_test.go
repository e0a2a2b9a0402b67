package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/testkit"
)

// TestOfficeFormatsEndToEnd ingests the HWPX and HWP fixtures of ../shared/formats and an XLSX workbook and a
// PPTX deck made here with the real binary, then asks questions whose answers sit on a known page, sheet or
// slide: each is found in the top 5 at that location.
func TestOfficeFormatsEndToEnd(t *testing.T) {
	formats := testkit.Shared("formats")
	office := t.TempDir()
	xlsx := testkit.XLSX(
		testkit.Sheet{Name: "2024 예산", Rows: [][]string{
			{"항목", "금액(천원)", "담당"},
			{"행사 무대 설치", "45000", "문화관광체육과"},
			{"안전요원 인건비", "12000", "안전총괄과"},
		}},
		testkit.Sheet{Name: "On-call rota", Rows: [][]string{
			{"Service", "Engineer", "Phone"},
			{"billing gateway", "Park Jisoo", "010-5555-0192"},
			{"search cluster", "Lee Minho", "010-5555-0148"},
		}},
	)
	pptx := testkit.PPTX(
		testkit.Slide{Title: "Quarterly review", Body: []string{"Revenue grew in every region this quarter."}},
		testkit.Slide{Title: "Warehouse migration", Body: []string{"The Incheon warehouse moves to the new racking system in March.",
			"Forklift certification is required for all night-shift staff."}, Notes: "Mention the budget overrun on conveyor belts."},
		testkit.Slide{Title: "다음 단계", Body: []string{"협력업체 평가 기준을 6월까지 확정한다."}},
	)
	for name, data := range map[string][]byte{"rota.xlsx": xlsx, "review.pptx": pptx} {
		if err := os.WriteFile(filepath.Join(office, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"RAGD_DATA_DIR=" + t.TempDir()}
	r := ragd(t, env, "ingest", filepath.Join(formats, "hwpx"), filepath.Join(formats, "hwp"), office)
	if r.code != 0 || !strings.Contains(r.stdout, "ingested 7, unchanged 0, failed 0") {
		t.Fatalf("ingest: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	for _, c := range []struct {
		question, file string
		page           int    // the page the answer is on (0: the format has none)
		section        string // the section (sheet, slide title) the answer is in; "" to not check
		text           string // what the passage holds
	}{
		// HWPX: the budget of the festival, on page 4 of the request for proposals (its own page 2).
		{"가을밤의 음악축제 행사대행 용역의 소요예산은 얼마인가요?", "gangbuk-rfp-2023.hwpx", 4, "", "270,000,000원"},
		// HWPX: the contact table on the second page of the press release.
		{"진천선수촌 체육정책과 담당 사무관 연락처", "mcst-press-2024-01-02.hwpx", 2, "", "044-203-3129"},
		// HWPX: a table row with its header.
		{"개똥이 국어 영어 수학 점수", "table-grades.hwpx", 1, "", "| 개똥이 | 89 | 65 | 78 |"},
		// HWP 5.0: a table cell.
		{"LMN OPQ STR", "table.hwp", 1, "", "| LMN | OPQ | STR |"},
		{"글머리표 문단번호 양쪽 정렬", "paragraph-numbering.hwp", 1, "", "양쪽 정렬"},
		// XLSX: a row read with its header, in its sheet's section.
		{"Who is the on-call engineer for the billing gateway?", "rota.xlsx", 0, "On-call rota", "Engineer: Park Jisoo"},
		{"안전요원 인건비 예산은 얼마인가?", "rota.xlsx", 0, "2024 예산", "금액(천원): 12000"},
		// PPTX: slide 2's body and its speaker notes.
		{"When does the Incheon warehouse move to the new racking system?", "review.pptx", 2, "Warehouse migration", "Incheon warehouse"},
		// The notes are a small section of their own and merge with the slide's chunk.
		{"budget overrun on conveyor belts", "review.pptx", 2, "Warehouse migration", "conveyor belts"},
	} {
		var res struct{ Hits []hit }
		mustJSON(t, ragd(t, env, "search", "--json", "--k", "5", c.question), &res)
		found := false
		for _, h := range res.Hits {
			if filepath.Base(h.Source) != c.file || !strings.Contains(h.Text, c.text) {
				continue
			}
			if h.PageStart > c.page || h.PageEnd < c.page || (c.section != "" && h.Section != c.section) {
				t.Errorf("%q: %s found at pages %d–%d, section %q; want page %d, section %q", c.question, c.file,
					h.PageStart, h.PageEnd, h.Section, c.page, c.section)
			}
			found = true
			break
		}
		if !found {
			t.Errorf("%q: %s (%q) not in the top 5:\n%s", c.question, c.file, c.text, describeHits(res.Hits))
		}
	}
}

// TestScannedPDFsEndToEnd ingests the image-only PDFs of ../shared/formats/scanned (no text layer) with the
// real binary, which reads them by OCR (Tesseract, RAGD_OCR=auto): questions answered on a known page find
// that page in the top 5, marked as OCR with a confidence. With RAGD_OCR=off the same files fail as having
// no text layer.
func TestScannedPDFsEndToEnd(t *testing.T) {
	if out, err := exec.Command("tesseract", "--list-langs").CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "kor") || !strings.Contains(string(out), "eng") {
		t.Skip("Tesseract with kor and eng is not installed (scripts/test.sh installs it)")
	}
	scanned := filepath.Join(testkit.Shared("formats"), "scanned")
	env := []string{"RAGD_DATA_DIR=" + t.TempDir()}
	r := ragd(t, env, "ingest", scanned)
	if r.code != 0 || !strings.Contains(r.stdout, "ingested 2, unchanged 0, failed 0") {
		t.Fatalf("ingest: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct {
		question, file string
		page           int
		text           string // what the passage holds (whitespace ignored)
	}{
		{"검토보고서 일부개정법률안은 언제 우리 위원회에 회부되었나요?", "scanned-ko-review-report-p1-3.pdf", 3, "회부되었음"},
		{"환경노동위원회 수석전문위원", "scanned-ko-review-report-p1-3.pdf", 1, "수석전문위원"},
		{"By what date must the FAA receive comments on this proposed AD?", "scanned-en-federal-register-p1-2.pdf", 1, "September 21, 2020"},
		{"How many fatalities resulted from the Lion Air accident in Jakarta?", "scanned-en-federal-register-p1-2.pdf", 2, "189 fatalities"},
	} {
		var res struct{ Hits []hit }
		mustJSON(t, ragd(t, env, "search", "--json", "--k", "5", c.question), &res)
		found := false
		squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
		for _, h := range res.Hits {
			if filepath.Base(h.Source) != c.file || !strings.Contains(squash(h.Text), squash(c.text)) {
				continue
			}
			if h.PageStart > c.page || h.PageEnd < c.page {
				t.Errorf("%q: found at pages %d–%d, want page %d", c.question, h.PageStart, h.PageEnd, c.page)
			}
			if !h.OCR || h.OCRConf <= 0 || h.OCRConf > 1 {
				t.Errorf("%q: hit not marked as OCR with a confidence: ocr %v, confidence %v", c.question, h.OCR, h.OCRConf)
			}
			found = true
			break
		}
		if !found {
			t.Errorf("%q: %s (%q) not in the top 5:\n%s", c.question, c.file, c.text, describeHits(res.Hits))
		}
	}

	off := append(env[:len(env):len(env)], "RAGD_DATA_DIR="+t.TempDir(), "RAGD_OCR=off")
	r = ragd(t, off, "ingest", filepath.Join(scanned, "scanned-en-federal-register-p1-2.pdf"))
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "no text layer") || !strings.Contains(r.stdout+r.stderr, "RAGD_OCR=off") {
		t.Errorf("RAGD_OCR=off: exit %d, want a failure naming the missing text layer and the setting\n%s%s", r.code, r.stdout, r.stderr)
	}
}
