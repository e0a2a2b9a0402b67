package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetaCSVAndQuestions: ingest with a metadata table (files without a row and rows without a file are
// reported), then the board commands on the same data directory.
func TestMetaCSVAndQuestions(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	for name, text := range map[string]string{
		"6-2.md":   "# 학습 단계\n\n광고 세트가 7일 안에 최적화 이벤트를 약 50회 얻으면 학습 단계를 벗어나요.\n",
		"extra.md": "# 부록\n\n강의 일정 안내입니다.\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	table := filepath.Join(t.TempDir(), "index.csv")
	if err := os.WriteFile(table, []byte("file,lecture_name,week\n6-2.md,\"학습 단계, 최적화\",6주차\n9-9.md,없는 강의,9주차\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "ingest", "--data-dir", data, "--collection", "course", "--meta-csv", table, dir)
	if code != 0 || !strings.Contains(out, "ingested 2") {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "no metadata row for "+filepath.Join(dir, "extra.md")) || !strings.Contains(errOut, "line 3: 9-9.md matches no ingested file") {
		t.Errorf("reports: %s", errOut)
	}
	code, out, _ = run(t, "ask", "--data-dir", data, "학습 단계는 언제 끝나요?")
	if code != 0 || !strings.Contains(out, "chunk 0 (lecture_name=학습 단계, 최적화, week=6주차)") {
		t.Errorf("ask sources: exit %d\n%s", code, out)
	}
	if code, _, errOut = run(t, "ingest", "--data-dir", data, "--meta-csv", filepath.Join(dir, "missing.csv"), dir); code != 1 || !strings.Contains(errOut, "missing.csv") {
		t.Errorf("missing table: exit %d %s", code, errOut)
	}

	if code, out, _ = run(t, "questions", "list", "--data-dir", data); code != 0 || !strings.Contains(out, "0 question(s)") {
		t.Errorf("list: exit %d %s", code, out)
	}
	if code, out, _ = run(t, "questions", "answer-now", "--data-dir", data); code != 0 || !strings.Contains(out, "answered 0, failed 0, skipped 0") {
		t.Errorf("answer-now: exit %d %s", code, out)
	}
	if code, _, errOut = run(t, "questions", "show", "--data-dir", data, "nope"); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("show unknown: exit %d %s", code, errOut)
	}
	if code, _, errOut = run(t, "questions", "lst"); code != 2 || !strings.Contains(errOut, "did you mean list?") {
		t.Errorf("unknown subcommand: exit %d %s", code, errOut)
	}
	if code, _, _ = run(t, "questions", "show", "--data-dir", data); code != 2 {
		t.Errorf("show without ID: exit %d", code)
	}
}
