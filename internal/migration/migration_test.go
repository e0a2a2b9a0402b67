package migration

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	ms, err := Load(fstest.MapFS{
		"0010_c.sql":  {Data: []byte("C")},
		"0002_b.sql":  {Data: []byte("B")},
		"0001_a.sql":  {Data: []byte("A")},
		"README.md":   {Data: []byte("not a migration")},
		"sub/9_x.sql": {Data: []byte("not at the root")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Name+"="+m.SQL)
	}
	if strings.Join(got, " ") != "0001_a=A 0002_b=B 0010_c=C" {
		t.Fatalf("loaded %v", got)
	}
	if Latest(ms) != 10 || Latest(nil) != 0 {
		t.Fatalf("Latest: %d, %d", Latest(ms), Latest(nil))
	}
	for name, files := range map[string]fstest.MapFS{
		"no number":      {"init.sql": {}},
		"zero":           {"0000_init.sql": {}},
		"no underscore":  {"0001.sql": {}},
		"shared version": {"0001_a.sql": {}, "01_b.sql": {}},
	} {
		if _, err := Load(files); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
