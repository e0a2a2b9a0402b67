package e2e

import (
	"os"
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
