package web

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// MaxGzipped is the most the UI may weigh, every file gzipped (issue 14: "the UI under 500 KB gzipped").
const MaxGzipped = 500 * 1024

// TestBundle: the UI stays one small static bundle — under MaxGzipped with every file gzipped, no inline
// script or event-handler attribute (the CSP allows neither), and no Korean outside the string table
// web/i18n.js but in comments (every string the UI shows is in that table).
func TestBundle(t *testing.T) {
	total := 0
	err := fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(FS, path)
		if err != nil {
			return err
		}
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		if _, err := w.Write(b); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		total += z.Len()
		if strings.HasSuffix(path, ".html") {
			for _, m := range regexp.MustCompile(`(?is)<script\b[^>]*>`).FindAllString(string(b), -1) {
				if !strings.Contains(m, "src=") {
					t.Errorf("%s: inline script %s", path, m)
				}
			}
			if m := regexp.MustCompile(`(?i)\son[a-z]+\s*=`).FindString(string(b)); m != "" {
				t.Errorf("%s: event-handler attribute %q", path, m)
			}
		}
		if (strings.HasSuffix(path, ".html") || strings.HasSuffix(path, ".js")) && !strings.HasPrefix(path, "vendor/") && path != "i18n.js" {
			for i, line := range strings.Split(string(b), "\n") {
				code := strings.TrimSpace(line)
				if strings.HasPrefix(code, "//") || strings.HasPrefix(code, "*") || strings.HasPrefix(code, "/*") {
					continue
				}
				if regexp.MustCompile(`[\x{AC00}-\x{D7A3}]`).MatchString(code) {
					t.Errorf("%s:%d: Korean outside i18n.js: %s", path, i+1, code)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the UI: %d bytes gzipped (limit %d)", total, MaxGzipped)
	if total > MaxGzipped {
		t.Errorf("the UI is %d bytes gzipped, over %d", total, MaxGzipped)
	}
}
