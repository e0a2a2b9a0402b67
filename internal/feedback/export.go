package feedback

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/ragd/ragd/internal/qset"
	"github.com/ragd/ragd/internal/rag"
)

// SetMeta is the set.json of an exported question set (the format testdata/eval/README.md describes).
type SetMeta struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Docs    string   `json:"docs"`
	Include []string `json:"include"`
}

// Skipped is a question whose ratings made no eval item, and why.
type Skipped struct {
	Question string `json:"question"`
	Reason   string `json:"reason"`
}

// Exported is feedback turned into a question set: Set is its set.json, Items its questions.jsonl.
type Exported struct {
	Set     SetMeta     `json:"set"`
	Items   []qset.Item `json:"items"`
	Skipped []Skipped   `json:"skipped"`
	// Ratings is how many ratings were read.
	Ratings int `json:"ratings"`
}

// MaxAnswerSpan is the longest expected answer span Export takes from a passage (characters); without a
// sentence of the answer in the passage, it takes the passage's first line of at least MinLineSpan
// characters (a heading is shorter), else its first line.
const (
	MaxAnswerSpan = 200
	MinLineSpan   = 20
)

// Export turns every principal's feedback (at most rag.MaxFeedbackList ratings, newest first) into eval
// items, one per question (and collection); docs is the folder the rated files are read from by `ragd eval`
// ("" for the common folder of their paths). Admins only (CodeForbidden).
func (s *Service) Export(ctx context.Context, p rag.Principal, name, docs string) (*Exported, error) {
	if !p.Admin {
		return nil, rag.Errorf(rag.CodeForbidden, "only an administrator exports feedback")
	}
	list, err := s.store.ListFeedback(ctx, rag.FeedbackQuery{Limit: rag.MaxFeedbackList})
	if err != nil {
		return nil, err
	}
	return Items(list, name, docs), nil
}

// Items turns ratings into eval items, one per question and collection, oldest question first:
//   - a source rated up (or, when no source is, an answer rated up that cites passages not rated down)
//     makes the item answerable: file and pages of the first such passage, and as answer span the longest
//     sentence of the rated answer found verbatim in it, else the passage's first line (up to
//     MaxAnswerSpan characters);
//   - sources rated down become the item's avoid list (a regression question: none of them may come back in
//     the top 5); an answer rated down adds the passages it cited, unless its sources were rated one by one;
//   - an answer rated up that was the not-covered reply, with no source rated up, makes the item
//     unanswerable;
//   - what is left (an answer rated down that cited nothing: a refusal the user disagrees with, but no
//     passage says where the answer is) is skipped with the reason.
//
// Comments are kept in the item's comment. Files are made relative to docs.
func Items(list []*rag.Feedback, name, docs string) *Exported {
	type group struct {
		question, collection string
		ratings              []*rag.Feedback
	}
	var groups []*group
	byKey := map[[2]string]*group{}
	for i := len(list) - 1; i >= 0; i-- { // oldest first
		f := list[i]
		k := [2]string{f.Collection, f.Question}
		g := byKey[k]
		if g == nil {
			g = &group{question: f.Question, collection: f.Collection}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.ratings = append(g.ratings, f)
	}
	if docs == "" {
		docs = commonDir(list)
	}
	out := &Exported{Set: SetMeta{Name: name, Kind: qset.KindDocuments, Docs: docs}, Items: []qset.Item{},
		Skipped: []Skipped{}, Ratings: len(list)}
	ids := map[string]bool{}
	for _, g := range groups {
		it, reason := item(g.ratings, docs)
		if reason != "" {
			out.Skipped = append(out.Skipped, Skipped{Question: g.question, Reason: reason})
			continue
		}
		it.ID = itemID(g.collection, g.question, ids)
		it.Question = g.question
		out.Items = append(out.Items, it)
		for _, f := range append([]string{it.File}, avoidFiles(it.Avoid)...) {
			if f != "" && !slices.Contains(out.Set.Include, f) {
				out.Set.Include = append(out.Set.Include, f)
			}
		}
	}
	slices.Sort(out.Set.Include)
	if out.Set.Include == nil {
		out.Set.Include = []string{}
	}
	return out
}

func avoidFiles(refs []qset.Ref) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.File)
	}
	return out
}

// item makes one question's item from its ratings, or says why it cannot.
func item(ratings []*rag.Feedback, docs string) (qset.Item, string) {
	var it qset.Item
	var comments []string
	var up []rag.FeedbackPassage
	var down []rag.FeedbackPassage
	var answerUp, answerDown []*rag.Feedback
	sourcesRated := false
	for _, f := range ratings {
		if f.Comment != "" && !slices.Contains(comments, f.Comment) {
			comments = append(comments, f.Comment)
		}
		switch {
		case f.Target == rag.FeedbackSource && f.Rating > 0:
			up, sourcesRated = append(up, f.Passages...), true
		case f.Target == rag.FeedbackSource:
			down, sourcesRated = append(down, f.Passages...), true
		case f.Rating > 0:
			answerUp = append(answerUp, f)
		default:
			answerDown = append(answerDown, f)
		}
	}
	it.Comment = strings.Join(comments, " / ")
	if !sourcesRated {
		for _, f := range answerDown {
			down = append(down, f.Passages...)
		}
	}
	upAnswer := ""
	if len(up) == 0 {
		// An answer rated up vouches for the passages it cited, but not for one rated down by itself.
		for _, f := range answerUp {
			for _, p := range f.Passages {
				if !containsHash(down, p.Hash) {
					up = append(up, p)
				}
			}
			if len(up) > 0 {
				upAnswer = f.Answer
				break
			}
		}
	}
	if upAnswer == "" {
		for _, f := range ratings {
			if f.Target == rag.FeedbackAnswer && f.Answer != "" && !f.NotFound {
				upAnswer = f.Answer
			}
		}
	}
	for _, p := range down {
		if containsHash(up, p.Hash) {
			continue // rated both ways: the rating up wins
		}
		file, ok := relative(p.File, docs)
		if !ok {
			return it, fmt.Sprintf("file %q is not under the docs folder %q", p.File, docs)
		}
		ref := qset.Ref{File: file, Pages: pages(p)}
		if !slices.ContainsFunc(it.Avoid, func(r qset.Ref) bool { return r.File == ref.File && slices.Equal(r.Pages, ref.Pages) }) {
			it.Avoid = append(it.Avoid, ref)
		}
	}
	if len(up) > 0 {
		p := up[0]
		file, ok := relative(p.File, docs)
		if !ok {
			return it, fmt.Sprintf("file %q is not under the docs folder %q", p.File, docs)
		}
		it.File, it.Pages, it.Answer = file, pages(p), span(upAnswer, p.Text)
		if it.Answer == "" {
			return it, "the passage rated up has no text"
		}
		return it, ""
	}
	if len(it.Avoid) > 0 {
		return it, ""
	}
	for _, f := range answerUp {
		if f.NotFound {
			it.Unanswerable = true
			return it, ""
		}
	}
	return it, "no passage was rated or cited: rate the source that answers it up, or the not-covered reply up"
}

func containsHash(ps []rag.FeedbackPassage, hash string) bool {
	return slices.ContainsFunc(ps, func(p rag.FeedbackPassage) bool { return p.Hash == hash })
}

func pages(p rag.FeedbackPassage) []int {
	if p.PageStart <= 0 {
		return nil
	}
	var out []int
	for n := p.PageStart; n <= max(p.PageEnd, p.PageStart); n++ {
		out = append(out, n)
	}
	return out
}

var citation = regexp.MustCompile(`\s?\[\d+\]`)

// span is the expected answer span of a passage: the longest sentence (or line) of answer found verbatim in
// passage (NFKC, whitespace collapsed, at most MaxAnswerSpan characters), else the passage's first line of
// MinLineSpan characters or more, else its first line.
func span(answer, passage string) string {
	text := squash(norm.NFKC.String(passage))
	best := ""
	for _, s := range sentences(citation.ReplaceAllString(answer, "")) {
		s = squash(norm.NFKC.String(s))
		if utf8.RuneCountInString(s) > utf8.RuneCountInString(best) && utf8.RuneCountInString(s) <= MaxAnswerSpan &&
			utf8.RuneCountInString(s) >= 4 && strings.Contains(text, s) {
			best = s
		}
	}
	if best != "" {
		return best
	}
	first := ""
	for _, line := range strings.Split(norm.NFKC.String(passage), "\n") {
		switch line = squash(line); {
		case utf8.RuneCountInString(line) >= MinLineSpan:
			return cut(line, MaxAnswerSpan)
		case first == "":
			first = line
		}
	}
	return first
}

// sentences splits text after sentence ends (. ? ! and the Korean 다.) and at line breaks.
func sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		start := 0
		for i, r := range line {
			if (r == '.' || r == '?' || r == '!') && (i+1 == len(line) || line[i+1] == ' ') {
				out = append(out, line[start:i+1])
				start = i + 1
			}
		}
		out = append(out, line[start:])
	}
	return out
}

// cut shortens s to at most n characters at a word boundary.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	if i := strings.LastIndexByte(string(r), ' '); i > 0 {
		return string(r)[:i]
	}
	return string(r)
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// relative returns file relative to docs (forward slashes); a relative file is taken as already relative.
func relative(file, docs string) (string, bool) {
	if !filepath.IsAbs(file) {
		return filepath.ToSlash(file), !strings.HasPrefix(filepath.Clean(file), "..")
	}
	if !filepath.IsAbs(docs) {
		return "", false
	}
	rel, err := filepath.Rel(docs, file)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// commonDir is the deepest folder holding every absolute file the ratings name ("." when none is absolute).
func commonDir(list []*rag.Feedback) string {
	dir := ""
	for _, f := range list {
		for _, p := range f.Passages {
			if !filepath.IsAbs(p.File) {
				continue
			}
			d := filepath.Dir(p.File)
			if dir == "" {
				dir = d
			}
			for dir != "/" && dir != "." && !strings.HasPrefix(d+string(filepath.Separator), dir+string(filepath.Separator)) {
				dir = filepath.Dir(dir)
			}
		}
	}
	if dir == "" {
		return "."
	}
	return dir
}

// itemID is "fb-" and 10 hex digits of the collection and question's hash, unique among ids.
func itemID(collection, question string, ids map[string]bool) string {
	h := sha256.Sum256([]byte(collection + "\x00" + question))
	id := "fb-" + hex.EncodeToString(h[:5])
	for n := 2; ids[id]; n++ {
		id = fmt.Sprintf("fb-%s-%d", hex.EncodeToString(h[:5]), n)
	}
	ids[id] = true
	return id
}
