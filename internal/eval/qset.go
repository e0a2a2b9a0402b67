package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ragd/ragd/internal/qset"
)

// Item is one question of a project question set (package qset: the format of testdata/eval, which
// ragd feedback export also writes).
type Item = qset.Item

// Ref is a passage of an item's avoid list.
type Ref = qset.Ref

// QuestionSet is a project question set: set.json plus questions.jsonl in one folder.
type QuestionSet struct {
	Name string
	// Kind is "documents" (Docs is a folder of files the items cite) or "korquad" (Source is the KorQuAD
	// v1 dev file whose questions the items reword).
	Kind string
	Docs string
	// Include are the glob patterns, relative to Docs, of the files indexed for the set (the answering
	// files and the others among which they must be found).
	Include []string
	// Cover says every included file is the answering file of at least one item (checked by the tests).
	Cover  bool
	Source string
	Items  []Item
}

// Set kinds.
const (
	KindDocuments = qset.KindDocuments
	KindKorQuAD   = qset.KindKorQuAD
)

// IsQuestionSet reports whether dir holds a project question set (a set.json).
func IsQuestionSet(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "set.json"))
	return err == nil
}

// LoadQuestionSet reads dir/set.json and dir/questions.jsonl and checks every item: ids unique, a question,
// and either an answering file with an answer span (pages positive) or the unanswerable mark, or for korquad
// sets a KorQuAD id. Paths in set.json are relative to dir (or absolute).
func LoadQuestionSet(dir string) (*QuestionSet, error) {
	b, err := os.ReadFile(filepath.Join(dir, "set.json"))
	if err != nil {
		return nil, fmt.Errorf("question set: %w", err)
	}
	var meta struct {
		Name    string   `json:"name"`
		Kind    string   `json:"kind"`
		Docs    string   `json:"docs"`
		Include []string `json:"include"`
		Cover   bool     `json:"cover"`
		Source  string   `json:"source"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&meta); err != nil {
		return nil, fmt.Errorf("question set %s: %w", filepath.Join(dir, "set.json"), err)
	}
	qs := &QuestionSet{Name: meta.Name, Kind: meta.Kind, Cover: meta.Cover}
	if qs.Name == "" {
		qs.Name = filepath.Base(dir)
	}
	switch meta.Kind {
	case KindDocuments:
		if meta.Docs == "" {
			return nil, fmt.Errorf("question set %s: set.json: a documents set needs \"docs\"", dir)
		}
		if len(meta.Include) == 0 {
			return nil, fmt.Errorf("question set %s: set.json: a documents set needs \"include\" patterns", dir)
		}
		qs.Docs, qs.Include = inDir(dir, meta.Docs), meta.Include
	case KindKorQuAD:
		if meta.Source == "" {
			return nil, fmt.Errorf("question set %s: set.json: a korquad set needs \"source\"", dir)
		}
		qs.Source = inDir(dir, meta.Source)
	default:
		return nil, fmt.Errorf("question set %s: set.json: kind %q is not %q or %q", dir, meta.Kind, KindDocuments, KindKorQuAD)
	}
	seen := map[string]bool{}
	path := filepath.Join(dir, "questions.jsonl")
	err = readJSONL(path, func(line []byte) error {
		var it Item
		d := json.NewDecoder(strings.NewReader(string(line)))
		d.DisallowUnknownFields()
		if err := d.Decode(&it); err != nil {
			return err
		}
		if err := qs.check(it); err != nil {
			return err
		}
		if seen[it.ID] {
			return fmt.Errorf("id %q repeated", it.ID)
		}
		seen[it.ID] = true
		qs.Items = append(qs.Items, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(qs.Items) == 0 {
		return nil, fmt.Errorf("question set %s: no questions", path)
	}
	return qs, nil
}

// inDir resolves a path of set.json: relative to the set's folder unless absolute.
func inDir(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

func (qs *QuestionSet) check(it Item) error { return qset.Check(it, qs.Kind) }

// Files returns the files the set indexes (matches of Include under Docs, relative to Docs, sorted), and an
// error when a pattern matches nothing or an item cites a file that is not among them.
func (qs *QuestionSet) Files() ([]string, error) {
	var out []string
	for _, pat := range qs.Include {
		m, err := filepath.Glob(filepath.Join(qs.Docs, pat))
		if err != nil {
			return nil, fmt.Errorf("question set %s: include %q: %w", qs.Name, pat, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("question set %s: include %q matches no file under %s", qs.Name, pat, qs.Docs)
		}
		for _, f := range m {
			rel, err := filepath.Rel(qs.Docs, f)
			if err != nil {
				return nil, err
			}
			if rel = filepath.ToSlash(rel); !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
	}
	slices.Sort(out)
	for _, it := range qs.Items {
		if it.File != "" && !slices.Contains(out, it.File) {
			return nil, fmt.Errorf("question set %s: %s cites %q, which include does not match", qs.Name, it.ID, it.File)
		}
		for _, a := range it.Avoid {
			if !slices.Contains(out, a.File) {
				return nil, fmt.Errorf("question set %s: %s avoids %q, which include does not match", qs.Name, it.ID, a.File)
			}
		}
	}
	return out, nil
}

// PageID is the judgment id of a page of a file.
func PageID(file string, page int) string { return file + "#" + strconv.Itoa(page) }

// Dataset turns the set into a Dataset: for a documents set, every file Include matches (ID the path
// relative to Docs) and a query per item judged by file, and by page when the item gives pages; for a korquad
// set, the KorQuAD paragraphs with each item's reworded question in place of the original (its judgment and
// gold answers are the original's).
func (qs *QuestionSet) Dataset() (*Dataset, error) {
	if qs.Kind == KindKorQuAD {
		ds, err := loadSQuAD(qs.Source)
		if err != nil {
			return nil, err
		}
		byID := make(map[string]Query, len(ds.Queries))
		for _, q := range ds.Queries {
			byID[q.ID] = q
		}
		ds.Name, ds.Queries = qs.Name, nil
		for _, it := range qs.Items {
			q, ok := byID[it.KorQuADID]
			if !ok {
				return nil, fmt.Errorf("question set %s: %s: no question %q in %s", qs.Name, it.ID, it.KorQuADID, qs.Source)
			}
			q.ID, q.Text, q.History = it.ID, it.Question, it.History
			ds.Queries = append(ds.Queries, q)
		}
		return ds, nil
	}
	files, err := qs.Files()
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Name: qs.Name}
	for _, f := range files {
		ds.Docs = append(ds.Docs, Doc{ID: f, Path: filepath.Join(qs.Docs, filepath.FromSlash(f))})
	}
	for _, it := range qs.Items {
		q := Query{ID: it.ID, Text: it.Question, History: it.History, Unanswerable: it.Unanswerable}
		for _, a := range it.Avoid {
			if q.Avoid == nil {
				q.Avoid = map[string]bool{}
			}
			if len(a.Pages) == 0 {
				q.Avoid[a.File] = true
			}
			for _, p := range a.Pages {
				q.Avoid[PageID(a.File, p)] = true
			}
		}
		if !it.Unanswerable && it.File != "" {
			q.Relevant = map[string]int{it.File: 1}
			q.Answers = []string{it.Answer}
			if len(it.Pages) > 0 {
				q.RelevantPages = map[string]int{}
				for _, p := range it.Pages {
					q.RelevantPages[PageID(it.File, p)] = 1
				}
			}
		}
		ds.Queries = append(ds.Queries, q)
	}
	return ds, nil
}
