package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCollectionsApply: a profile file creates the collection, a second apply updates it, a bad file
// changes nothing, and the offline answers over the collection use its fixed not-covered reply.
func TestCollectionsApply(t *testing.T) {
	data, dir := t.TempDir(), t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := write("collection.yaml", "name: laws\ndescription: 법령\nreplies:\n  not_covered: 법령집에 없는 내용입니다.\ngeneration:\n  passages: 3\n")
	code, out, errOut := run(t, "collections", "apply", "--data-dir", data, file)
	if code != 0 || out != "collection laws created from "+file+"\n" {
		t.Fatalf("apply: exit %d %q %s", code, out, errOut)
	}
	if code, out, errOut = run(t, "collections", "apply", "--data-dir", data, file); code != 0 || !strings.Contains(out, "collection laws updated") {
		t.Fatalf("second apply: exit %d %q %s", code, out, errOut)
	}
	bad := write("bad.yaml", "name: laws\ndescription: 바뀜\ncontext:\n  table_rows: -3\n")
	if code, _, errOut = run(t, "collections", "apply", "--data-dir", data, bad); code != 1 ||
		!strings.Contains(errOut, bad+": context.table_rows: -3 is negative") {
		t.Fatalf("bad file: exit %d %s", code, errOut)
	}
	if code, _, errOut = run(t, "collections", "apply", "--data-dir", data, write("noname.yaml", "description: x\n")); code != 1 ||
		!strings.Contains(errOut, "name: required") {
		t.Fatalf("file without a name: exit %d %s", code, errOut)
	}
	code, out, _ = run(t, "collections", "show", "--data-dir", data, "laws")
	if code != 0 || !strings.Contains(out, "description: 법령\n") || !strings.Contains(out, "not_covered: 법령집에 없는 내용입니다.") ||
		!strings.Contains(out, "passages: 3") {
		t.Fatalf("show after a bad apply: exit %d\n%s", code, out)
	}

	doc := write("law.md", "# 시행일\n\n이 법은 공포 후 6개월이 경과한 날부터 시행한다.\n")
	if code, out, errOut = run(t, "ingest", "--data-dir", data, "--collection", "laws", doc); code != 0 {
		t.Fatalf("ingest: exit %d %s %s", code, out, errOut)
	}
	if code, out, _ = run(t, "ask", "--data-dir", data, "--collection", "laws", "이 법은 언제부터 시행되나요?"); code != 0 || !strings.Contains(out, "6개월") {
		t.Errorf("covered question: exit %d %s", code, out)
	}
	if code, out, _ = run(t, "ask", "--data-dir", data, "--collection", "laws", "김치찌개 레시피 알려줘"); code != 0 || !strings.Contains(out, "법령집에 없는 내용입니다.") {
		t.Errorf("not covered: exit %d %s", code, out)
	}
	if code, _, errOut = run(t, "collections", "aply"); code != 2 || !strings.Contains(errOut, "did you mean apply?") {
		t.Errorf("unknown subcommand: exit %d %s", code, errOut)
	}
}
