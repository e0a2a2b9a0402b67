package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/testkit"
)

// TestEncryptionAtRest ingests a fixture with RAGD_ENCRYPTION_KEY set and greps the whole data directory
// for its sentences: none is there in the clear. ragd refuses to start without the key (or with another),
// `ragd keys rotate-data` re-seals everything under a new key, after which the old key alone is refused and
// the new one alone reads.
func TestEncryptionAtRest(t *testing.T) {
	data := t.TempDir()
	k1, k2 := strings.Repeat("1f", 32), strings.Repeat("2e", 32)
	with := func(env ...string) []string { return append([]string{"RAGD_DATA_DIR=" + data}, env...) }
	fixture := filepath.Join(fixtures, "md", "ko_react_render-and-commit.md")
	if r := ragd(t, with("RAGD_ENCRYPTION_KEY="+k1), "ingest", fixture); r.code != 0 {
		t.Fatalf("ingest: exit %d\n%s", r.code, r.stderr)
	}
	// Every line of running text of the fixture (headings are titles, which stay readable).
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var sentences []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if len(line) >= 40 && !strings.HasPrefix(line, "#") && !strings.ContainsAny(line, "<>`[]*|") {
			sentences = append(sentences, line)
		}
	}
	if len(sentences) < 5 {
		t.Fatalf("only %d sentences to look for", len(sentences))
	}
	noPlaintext := func(when string) {
		t.Helper()
		if found := testkit.FilesHolding(t, data, nil, sentences...); len(found) > 0 {
			t.Errorf("%s: plaintext in the data directory: %v", when, found[:min(3, len(found))])
		}
	}
	noPlaintext("sealed with key 1")
	search := func(env ...string) result {
		return ragd(t, with(env...), "search", "--json", "렌더링 커밋 단계")
	}
	if r := search("RAGD_ENCRYPTION_KEY=" + k1); r.code != 0 || !strings.Contains(r.stdout, "render-and-commit") {
		t.Fatalf("search with the key: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for name, env := range map[string][]string{"NoKey": nil, "OtherKey": {"RAGD_ENCRYPTION_KEY=" + k2}} {
		if r := search(env...); r.code != 1 || !strings.Contains(r.stderr, "encrypted with key") {
			t.Errorf("%s: exit %d, want a refusal naming the key\n%s", name, r.code, r.stderr)
		}
	}

	r := ragd(t, with("RAGD_ENCRYPTION_KEY="+k2, "RAGD_ENCRYPTION_OLD_KEYS="+k1), "keys", "rotate-data")
	if r.code != 0 || !strings.Contains(r.stdout, "rows re-sealed") {
		t.Fatalf("rotate-data: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The rotation is in the audit log with the new key's ID (never the key).
	if r := ragd(t, with("RAGD_ENCRYPTION_KEY="+k2), "audit", "--action", "key.rotated", "--json"); r.code != 0 ||
		!strings.Contains(r.stdout, `"detail": "ragd keys rotate-data"`) || strings.Contains(r.stdout, k2) {
		t.Errorf("ragd audit --action key.rotated: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := search("RAGD_ENCRYPTION_KEY=" + k1); r.code != 1 {
		t.Errorf("the old key alone after the rotation: exit %d, want a refusal\n%s", r.code, r.stderr)
	}
	if r := search("RAGD_ENCRYPTION_KEY=" + k2); r.code != 0 || !strings.Contains(r.stdout, "render-and-commit") {
		t.Fatalf("search with the new key alone: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	noPlaintext("after the rotation")
}
