package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSpacesSwitchAndDrop changes the embedder of a populated store through the binary: searches keep the
// old space until `ragd spaces reembed` fills the new one, the old space cannot be dropped while searched,
// and afterwards `ragd spaces drop` reclaims it.
func TestSpacesSwitchAndDrop(t *testing.T) {
	data := t.TempDir()
	old := []string{"RAGD_DATA_DIR=" + data}
	if r := ragd(t, old, "ingest", filepath.Join(fixtures, "md")); r.code != 0 {
		t.Fatalf("ingest: exit %d\n%s", r.code, r.stderr)
	}
	type space struct {
		ID         string `json:"id"`
		Chunks     int    `json:"chunks"`
		Configured bool   `json:"configured"`
		Search     bool   `json:"search"`
	}
	type status struct {
		Configured string  `json:"configured"`
		Search     string  `json:"search"`
		Mode       string  `json:"mode"`
		Chunks     int     `json:"chunks"`
		Spaces     []space `json:"spaces"`
		Reembed    struct {
			State string `json:"state"`
			Done  int    `json:"done"`
		} `json:"reembed"`
	}
	var st status
	mustJSON(t, ragd(t, old, "spaces", "--json"), &st)
	oldID := st.Configured
	if st.Search != oldID || st.Reembed.State != "complete" || len(st.Spaces) != 1 || st.Spaces[0].Chunks != st.Chunks || st.Chunks == 0 {
		t.Fatalf("status of a fresh store: %+v", st)
	}

	next := []string{"RAGD_DATA_DIR=" + data, "RAGD_EMBED_DIM=256"}
	mustJSON(t, ragd(t, next, "spaces", "--json"), &st)
	if st.Configured == oldID || st.Search != oldID || st.Reembed.State != "pending" || st.Reembed.Done != 0 {
		t.Fatalf("status after the switch: %+v", st)
	}
	if r := ragd(t, next, "spaces", "drop", oldID); r.code != 1 || !strings.Contains(r.stderr, "invalid_request") {
		t.Fatalf("dropping the searched space: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := ragd(t, next, "spaces", "drop", st.Configured); r.code != 1 || !strings.Contains(r.stderr, "configured") {
		t.Fatalf("dropping the configured space: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := ragd(t, next, "spaces", "drop"); r.code != 2 {
		t.Fatalf("drop without a space: exit %d, want 2 (usage)", r.code)
	}

	r := ragd(t, next, "spaces", "reembed")
	if r.code != 0 || !strings.Contains(r.stdout, "re-embed complete") {
		t.Fatalf("reembed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = ragd(t, next, "spaces", "drop", oldID)
	if r.code != 0 || !strings.Contains(r.stdout, "dropped ") {
		t.Fatalf("drop the old space: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	mustJSON(t, ragd(t, next, "spaces", "--json"), &st)
	if st.Search != st.Configured || st.Mode != "hybrid" || len(st.Spaces) != 1 || st.Spaces[0].Chunks != st.Chunks {
		t.Fatalf("status after the drop: %+v", st)
	}
	var res struct{ Hits []hit }
	mustJSON(t, ragd(t, next, "search", "--json", "컴포넌트 렌더링과 커밋"), &res)
	if len(res.Hits) == 0 || res.Hits[0].VectorRank == 0 {
		t.Fatalf("hybrid search in the new space: %+v", res.Hits)
	}
}
