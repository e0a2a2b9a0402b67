// Package eval measures retrieval and answer quality on public datasets — BEIR folders (corpus.jsonl,
// queries.jsonl, qrels/test.tsv) and SQuAD-v1 JSON files — and on the project's own question sets
// (testdata/eval: files with file+page judgments, answer spans, unanswerable and follow-up questions). It indexes the corpus through the same ingestion
// pipeline as real documents and runs every query through the same retrieval and answer pipeline as the server.
package eval

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Doc is one corpus entry; ID becomes the document's external id. A Doc with a Path is that file, ingested
// as it is (its extension selects the extractor); otherwise Text is ingested as a text document.
type Doc struct {
	ID    string
	Title string
	Text  string
	Path  string
}

// Query is one evaluation question with its graded relevant documents (grade > 0 is relevant) and, for
// SQuAD data, the gold answer spans.
type Query struct {
	ID       string
	Text     string
	Relevant map[string]int
	Answers  []string
	// RelevantPages judges pages (PageID(file, page)) when the set gives them.
	RelevantPages map[string]int
	// Unanswerable marks a question no document answers: it counts only in the refusal figures.
	Unanswerable bool
	// History holds the conversation's earlier questions, oldest first.
	History []string
	// Avoid holds the passages users rated down for the question: pages (PageID) and, for formats without
	// pages, files. avoided@5 counts the questions none of whose top 5 hits is one of them.
	Avoid map[string]bool
}

// Dataset is a corpus with queries.
type Dataset struct {
	Name    string
	Docs    []Doc
	Queries []Query
}

// Load reads a project question set (a folder with set.json), a BEIR folder or a SQuAD-v1 JSON file.
func Load(path string) (*Dataset, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	if st.IsDir() && IsQuestionSet(path) {
		qs, err := LoadQuestionSet(path)
		if err != nil {
			return nil, err
		}
		return qs.Dataset()
	}
	if st.IsDir() {
		return loadBEIR(path)
	}
	return loadSQuAD(path)
}

func loadBEIR(dir string) (*Dataset, error) {
	ds := &Dataset{Name: filepath.Base(dir)}
	err := readJSONL(filepath.Join(dir, "corpus.jsonl"), func(line []byte) error {
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			return err
		}
		ds.Docs = append(ds.Docs, Doc{ID: d.ID, Title: d.Title, Text: d.Text})
		return nil
	})
	if err != nil {
		return nil, err
	}
	qrels, err := readQrels(filepath.Join(dir, "qrels", "test.tsv"))
	if err != nil {
		return nil, err
	}
	err = readJSONL(filepath.Join(dir, "queries.jsonl"), func(line []byte) error {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(line, &q); err != nil {
			return err
		}
		if rel := qrels[q.ID]; len(rel) > 0 {
			ds.Queries = append(ds.Queries, Query{ID: q.ID, Text: q.Text, Relevant: rel})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(ds.Docs) == 0 || len(ds.Queries) == 0 {
		return nil, fmt.Errorf("dataset %s: no documents or no judged queries", dir)
	}
	return ds, nil
}

func readJSONL(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("dataset %s line %d: %w", path, n, err)
		}
	}
	return sc.Err()
}

func readQrels(path string) (map[string]map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = '\t'
	r.FieldsPerRecord = -1
	out := map[string]map[string]int{}
	for first := true; ; first = false {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("dataset %s: %w", path, err)
		}
		if len(rec) < 3 {
			continue
		}
		score, err := strconv.Atoi(strings.TrimSpace(rec[2]))
		if err != nil {
			if first {
				continue // header
			}
			return nil, fmt.Errorf("dataset %s: bad score %q", path, rec[2])
		}
		if out[rec[0]] == nil {
			out[rec[0]] = map[string]int{}
		}
		out[rec[0]][rec[1]] = score
	}
	return out, nil
}

// loadSQuAD reads SQuAD v1 JSON: a paragraph's id is "<articleIndex>-<paragraphIndex>" (0-based, file order)
// and each question's relevant paragraph is its own.
func loadSQuAD(path string) (*Dataset, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	var f struct {
		Data []struct {
			Title      string `json:"title"`
			Paragraphs []struct {
				Context string `json:"context"`
				QAs     []struct {
					ID       string `json:"id"`
					Question string `json:"question"`
					Answers  []struct {
						Text string `json:"text"`
					} `json:"answers"`
				} `json:"qas"`
			} `json:"paragraphs"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	ds := &Dataset{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))}
	for ai, a := range f.Data {
		for pi, p := range a.Paragraphs {
			id := fmt.Sprintf("%d-%d", ai, pi)
			ds.Docs = append(ds.Docs, Doc{ID: id, Title: strings.ReplaceAll(a.Title, "_", " "), Text: p.Context})
			for _, qa := range p.QAs {
				q := Query{ID: qa.ID, Text: qa.Question, Relevant: map[string]int{id: 1}}
				for _, an := range qa.Answers {
					q.Answers = append(q.Answers, an.Text)
				}
				ds.Queries = append(ds.Queries, q)
			}
		}
	}
	if len(ds.Docs) == 0 || len(ds.Queries) == 0 {
		return nil, fmt.Errorf("dataset %s: no paragraphs or questions", path)
	}
	return ds, nil
}

// Every returns every nth query of qs (the 1st, the n+1th, …): a fixed sample spread over the whole set,
// where the first queries of a SQuAD file are those of a few articles. n ≤ 1 returns qs.
func Every(qs []Query, n int) []Query {
	if n <= 1 {
		return qs
	}
	out := make([]Query, 0, (len(qs)+n-1)/n)
	for i := 0; i < len(qs); i += n {
		out = append(out, qs[i])
	}
	return out
}
