package eval

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/ragd/ragd/internal/extract"
)

const setsDir = "../../testdata/eval"

// TestQuestionSets checks every item of every documents set against ragd's own extraction of the file it
// cites: the expected span occurs in the text of one of the cited pages (of the whole file when it has no
// pages), and every indexed file has at least one question. An item marked "extraction": "mirrored" must
// instead be found reversed — and must not be found as written, so that once extraction is fixed the mark
// has to be removed.
func TestQuestionSets(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(setsDir, "*", "set.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no question sets under %s (%v)", setsDir, err)
	}
	x, err := extract.New(extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, sj := range dirs {
		qs, err := LoadQuestionSet(filepath.Dir(sj))
		if err != nil {
			t.Fatal(err)
		}
		if qs.Kind != KindDocuments {
			continue
		}
		t.Run(qs.Name, func(t *testing.T) {
			files, err := qs.Files()
			if err != nil {
				t.Fatal(err)
			}
			pages := map[string]map[int]string{}
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(qs.Docs, f))
				if err != nil {
					t.Fatal(err)
				}
				ex, err := x.Extract(context.Background(), f, b)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				pages[f] = map[int]string{}
				for _, bl := range ex.Blocks {
					pages[f][bl.Page] += bl.Text + "\n"
				}
			}
			cited := map[string]bool{}
			for _, it := range qs.Items {
				if it.Unanswerable {
					continue
				}
				cited[it.File] = true
				var text string
				if len(it.Pages) == 0 {
					for _, p := range pages[it.File] {
						text += p
					}
				} else {
					for _, p := range it.Pages {
						text += pages[it.File][p]
					}
				}
				found := spanIn(it.Answer, text)
				switch it.Extraction {
				case "":
					if !found {
						t.Errorf("%s: %q not in %s pages %v", it.ID, it.Answer, it.File, it.Pages)
					}
				case "mirrored":
					if found {
						t.Errorf("%s: %q is now extracted as written; remove its \"extraction\" mark", it.ID, it.Answer)
					} else if !strings.Contains(compact(text), reverse(compact(it.Answer))) {
						t.Errorf("%s: %q not in %s pages %v, even reversed", it.ID, it.Answer, it.File, it.Pages)
					}
				default:
					t.Errorf("%s: unknown extraction mark %q", it.ID, it.Extraction)
				}
			}
			for _, f := range files {
				if !cited[f] {
					t.Errorf("%s: no question is answered by %s", qs.Name, f)
				}
			}
		})
	}
}

func spanIn(span, text string) bool {
	return strings.Contains(squash(norm.NFKC.String(text)), squash(norm.NFKC.String(span)))
}

func compact(s string) string {
	return strings.Join(strings.Fields(norm.NFKC.String(s)), "")
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}
