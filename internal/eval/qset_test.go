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
// pages), and in a set that says "cover", every indexed file has at least one question. An item marked "extraction": "mirrored" must
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
					pages[f][bl.Page] += bl.TextOn(bl.Page) + "\n"
					for _, turn := range bl.PageTurns {
						pages[f][turn.Page] += bl.TextOn(turn.Page) + "\n"
					}
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
				if qs.Cover && !cited[f] {
					t.Errorf("%s: no question is answered by %s", qs.Name, f)
				}
			}
		})
	}
}

func spanIn(span, text string) bool {
	return strings.Contains(normalizeSpan(text), normalizeSpan(span))
}

func compact(s string) string {
	return strings.Join(strings.Fields(norm.NFKC.String(s)), "")
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

func TestLoadQuestionSet(t *testing.T) {
	ds, err := Load(filepath.Join(setsDir, "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	var unanswerable, paged int
	for _, q := range ds.Queries {
		if q.Unanswerable {
			unanswerable++
			if len(q.Relevant) != 0 || len(q.Answers) != 0 {
				t.Errorf("%s: unanswerable with judgments %v %v", q.ID, q.Relevant, q.Answers)
			}
		}
		if len(q.RelevantPages) > 0 {
			paged++
		}
	}
	if len(ds.Docs) != 14 || unanswerable != 15 || paged == 0 {
		t.Errorf("fixtures: %d documents, %d unanswerable, %d with pages", len(ds.Docs), unanswerable, paged)
	}
	for _, d := range ds.Docs {
		if _, err := os.Stat(d.Path); err != nil {
			t.Errorf("document %s: %v", d.ID, err)
		}
	}
}

func TestLoadKorQuADParaphrase(t *testing.T) {
	ds, err := Load(filepath.Join(setsDir, "korquad-paraphrase"))
	if err != nil {
		t.Fatal(err)
	}
	orig, err := Load("../../../shared/eval/korquad/KorQuAD_v1.0_dev.json")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	for _, q := range orig.Queries {
		byID[q.Text] = q.ID
	}
	if len(ds.Docs) != len(orig.Docs) || len(ds.Queries) < 200 {
		t.Fatalf("%d paragraphs, %d questions", len(ds.Docs), len(ds.Queries))
	}
	articles := map[string]bool{}
	for _, q := range ds.Queries {
		if len(q.Relevant) != 1 || len(q.Answers) == 0 {
			t.Errorf("%s: judgments %v answers %v", q.ID, q.Relevant, q.Answers)
		}
		if _, same := byID[q.Text]; same {
			t.Errorf("%s: %q is the original question, not a rewording", q.ID, q.Text)
		}
		for id := range q.Relevant {
			articles[strings.SplitN(id, "-", 2)[0]] = true
		}
	}
	if len(articles) < 50 {
		t.Errorf("questions from %d articles; want them spread over many", len(articles))
	}
}

// TestLoadQuestionSetErrors: a malformed set is refused with a message naming the file, line and fault.
// TestAvoid: an item exported from feedback with only passages to avoid loads, and its query avoids them
// by page or, without pages, by file; hitsAny finds them among hits.
func TestAvoid(t *testing.T) {
	docs := t.TempDir()
	for _, f := range []string{"a.md", "b.pdf"} {
		if err := os.WriteFile(filepath.Join(docs, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "set.json"), []byte(`{"kind": "documents", "docs": "`+docs+`", "include": ["*"]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte(`{"id": "fb-1", "question": "q", "avoid": [{"file": "a.md"}, {"file": "b.pdf", "pages": [2, 3]}], "comment": "wrong"}`), 0o644)
	ds, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	q := ds.Queries[0]
	if len(q.Relevant) != 0 || len(q.Answers) != 0 || !q.Avoid["a.md"] || !q.Avoid["b.pdf#2"] || !q.Avoid["b.pdf#3"] || len(q.Avoid) != 3 {
		t.Fatalf("query %+v", q)
	}
	for _, c := range []struct {
		hits []hitRef
		want bool
	}{
		{[]hitRef{{"a.md", 0, 0}}, true},
		{[]hitRef{{"b.pdf", 1, 1}}, false},
		{[]hitRef{{"b.pdf", 1, 2}}, true},
		{[]hitRef{{"c.md", 0, 0}, {"b.pdf", 4, 4}}, false},
	} {
		if got := hitsAny(c.hits, q.Avoid); got != c.want {
			t.Errorf("hitsAny(%v) = %v, want %v", c.hits, got, c.want)
		}
	}
}

func TestLoadQuestionSetErrors(t *testing.T) {
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "a.md"), []byte("# A\n\ntext"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := `{"kind": "documents", "docs": "` + docs + `", "include": ["*.md"]}`
	tests := []struct {
		name, set, questions, want string
	}{
		{"NotJSON", set, `{"id": "a", "question": `, "questions.jsonl line 1"},
		{"UnknownField", set, `{"id": "a", "question": "q", "file": "a.md", "answer": "text", "page": 3}`, `unknown field "page"`},
		{"NoAnswer", set, `{"id": "a", "question": "q", "file": "a.md"}`, "needs file and answer"},
		{"UnanswerableWithFile", set, `{"id": "a", "question": "q", "file": "a.md", "unanswerable": true}`, "has no file or answer"},
		{"RepeatedID", set, "{\"id\": \"a\", \"question\": \"q\", \"unanswerable\": true}\n{\"id\": \"a\", \"question\": \"r\", \"unanswerable\": true}", `line 2: id "a" repeated`},
		{"PageZero", set, `{"id": "a", "question": "q", "file": "a.md", "answer": "text", "pages": [0]}`, "pages are 1-based"},
		{"Empty", set, "\n", "no questions"},
		{"BadKind", `{"kind": "beir"}`, `{"id": "a", "question": "q"}`, `kind "beir"`},
		{"NoInclude", `{"kind": "documents", "docs": "x"}`, `{"id": "a", "question": "q"}`, `"include"`},
		{"KorQuADWithoutID", `{"kind": "korquad", "source": "x.json"}`, `{"id": "a", "question": "q"}`, "needs korquad_id"},
		{"AvoidWithoutFile", set, `{"id": "a", "question": "q", "avoid": [{"pages": [1]}]}`, "a passage to avoid needs its file"},
		{"AvoidPageZero", set, `{"id": "a", "question": "q", "avoid": [{"file": "a.md", "pages": [0]}]}`, "pages are 1-based"},
		{"AvoidUnindexedFile", set, `{"id": "a", "question": "q", "avoid": [{"file": "b.md"}]}`, `avoids "b.md"`},
		{"AvoidAndFileWithoutAnswer", set, `{"id": "a", "question": "q", "file": "a.md", "avoid": [{"file": "a.md"}]}`, "needs file and answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "set.json"), []byte(tt.set), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte(tt.questions), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	t.Run("CitesUnindexedFile", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "set.json"), []byte(set), 0o644)
		os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte(`{"id": "a", "question": "q", "file": "b.md", "answer": "x"}`), 0o644)
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `cites "b.md"`) {
			t.Errorf("Load = %v, want an error naming b.md", err)
		}
	})
	t.Run("UnknownKorQuADID", func(t *testing.T) {
		dir := t.TempDir()
		src, _ := filepath.Abs("../../../shared/eval/korquad/KorQuAD_v1.0_dev.json")
		os.WriteFile(filepath.Join(dir, "set.json"), []byte(`{"kind": "korquad", "source": "`+src+`"}`), 0o644)
		os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte(`{"id": "a", "question": "q", "korquad_id": "nope"}`), 0o644)
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `no question "nope"`) {
			t.Errorf("Load = %v, want an error naming the id", err)
		}
	})
}
