package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/feedback"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
)

// TestFeedbackExport: ratings stored through the feedback service (as the API stores them) come out of
// `ragd feedback export --out` as a question set that `ragd eval` runs: the source rated up is the item's
// file, the one rated down its avoid list, and avoided@5 is measured.
func TestFeedbackExport(t *testing.T) {
	dir, data, out := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "set")
	for name, text := range map[string]string{
		"lease.md": "# Lease\n\nThe deposit is returned within 30 days of the end of the lease.\n",
		"rent.md":  "# Rent\n\nRent is due on the first day of every month. The deposit is not rent.\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errOut := run(t, "ingest", "--data-dir", data, dir); code != 0 {
		t.Fatalf("ingest: %s", errOut)
	}
	q := "when is the deposit returned?"
	code, stdout, _ := run(t, "search", "--data-dir", data, "--json", q)
	if code != 0 {
		t.Fatalf("search: exit %d", code)
	}
	var res struct {
		Hits []struct {
			ChunkID int64  `json:"chunk_id"`
			Source  string `json:"source"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, h := range res.Hits {
		ids[filepath.Base(h.Source)] = h.ChunkID
	}
	if ids["lease.md"] == 0 || ids["rent.md"] == 0 {
		t.Fatalf("hits %+v", res.Hits)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(data, "ragd.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := feedback.New(st, st)
	for _, r := range []feedback.Request{
		{Vote: rag.Vote{Target: rag.FeedbackSource, Rating: 1, Question: q}, ChunkID: ids["lease.md"]},
		{Vote: rag.Vote{Target: rag.FeedbackSource, Rating: -1, Question: q, Comment: "about rent"}, ChunkID: ids["rent.md"]},
		{Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: -1, Question: "when is rent due?"}}, // nothing cited: skipped
	} {
		if _, err := svc.Rate(context.Background(), rag.LocalPrincipal, r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	if code, out, _ := run(t, "feedback", "list", "--data-dir", data); code != 0 || !strings.Contains(out, "3 rating(s)") || !strings.Contains(out, "down  local") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	code, _, errOut := run(t, "feedback", "export", "--data-dir", data, "--docs", dir, "--out", out)
	if code != 0 || !strings.Contains(errOut, "3 rating(s) → 1 item(s), 1 question(s) skipped") || !strings.Contains(errOut, `skipped "when is rent due?"`) {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(out, "questions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"fb-`
	if !strings.HasPrefix(string(b), want) || !strings.Contains(string(b), `"file":"lease.md","answer":"The deposit is returned within 30 days of the end of the lease."`) ||
		!strings.Contains(string(b), `"avoid":[{"file":"rent.md"}],"comment":"about rent"`) {
		t.Errorf("questions.jsonl:\n%s", b)
	}
	code, stdout, errOut = run(t, "eval", "--baseline", "none", out)
	if code != 0 || !strings.Contains(stdout, "hit@5         1.0000") || !strings.Contains(stdout, "avoided@5") {
		t.Errorf("eval of the exported set: exit %d\n%s\n%s", code, stdout, errOut)
	}
	if code, _, errOut = run(t, "feedback", "export", "--data-dir", data, "--limit", "0"); code != 2 || !strings.Contains(errOut, "--limit") {
		t.Errorf("limit 0: exit %d %s", code, errOut)
	}
}
