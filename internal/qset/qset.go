// Package qset is the item format of ragd's question sets (testdata/eval/NAME/questions.jsonl, documented in
// testdata/eval/README.md) and its checks: internal/eval reads the sets, and ragd feedback export
// (internal/feedback) writes them. It imports nothing of ours.
package qset

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Set kinds.
const (
	KindDocuments = "documents"
	KindKorQuAD   = "korquad"
)

// Item is one question of a project question set.
type Item struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	// History holds the earlier questions of a conversation, oldest first; Question is the follow-up.
	History []string `json:"history,omitempty"`
	// File is the answering document, relative to the set's docs folder; Pages are the 1-based pages of it
	// that answer (empty for formats without pages).
	File  string `json:"file,omitempty"`
	Pages []int  `json:"pages,omitempty"`
	// Answer is an expected answer span, verbatim in the answering page's text.
	Answer string `json:"answer,omitempty"`
	// Paraphrase marks a question worded differently from the text that answers it.
	Paraphrase bool `json:"paraphrase,omitempty"`
	// Unanswerable marks a plausible question that no document of the set answers.
	Unanswerable bool `json:"unanswerable,omitempty"`
	// Extraction names a known fault of ragd's extraction of the cited page ("mirrored": the page's text
	// comes out reversed), under which Answer is not found verbatim.
	Extraction string `json:"extraction,omitempty"`
	// KorQuADID is the id of the KorQuAD question this one rewords (korquad sets): its paragraph and gold
	// answers come from the KorQuAD file.
	KorQuADID string `json:"korquad_id,omitempty"`
	// Avoid are passages a user rated down for this question (sets exported from feedback, `ragd feedback
	// export`): none of them should be among the top 5 hits (avoided@5).
	Avoid []Ref `json:"avoid,omitempty"`
	// Comment is the user's comment on the rated answer or source (sets exported from feedback).
	Comment string `json:"comment,omitempty"`
}

// Ref is a passage by its file (relative to the docs folder) and pages (empty for formats without pages:
// then the whole file).
type Ref struct {
	File  string `json:"file"`
	Pages []int  `json:"pages,omitempty"`
}

// CheckItems checks items as LoadQuestionSet checks those of a documents set: ids unique and each item
// valid.
func CheckItems(items []Item) error {
	seen := map[string]bool{}
	for _, it := range items {
		if err := Check(it, KindDocuments); err != nil {
			return err
		}
		if seen[it.ID] {
			return fmt.Errorf("id %q repeated", it.ID)
		}
		seen[it.ID] = true
	}
	return nil
}

// Check checks one item of a set of kind (KindDocuments or KindKorQuAD): an id, a question, and either an
// answering file with an answer span (pages positive), the unanswerable mark, passages to avoid, or for
// korquad sets a KorQuAD id.
func Check(it Item, kind string) error {
	switch {
	case it.ID == "":
		return fmt.Errorf("an item needs an id")
	case strings.TrimSpace(it.Question) == "":
		return fmt.Errorf("%s: empty question", it.ID)
	case slices.ContainsFunc(it.History, func(h string) bool { return strings.TrimSpace(h) == "" }):
		return fmt.Errorf("%s: empty history question", it.ID)
	case slices.ContainsFunc(it.Pages, func(p int) bool { return p < 1 }):
		return fmt.Errorf("%s: pages are 1-based", it.ID)
	}
	if kind == KindKorQuAD {
		if it.KorQuADID == "" {
			return fmt.Errorf("%s: a korquad item needs korquad_id", it.ID)
		}
		return nil
	}
	for _, a := range it.Avoid {
		if err := checkFile(it.ID, a.File); err != nil {
			return err
		}
		if slices.ContainsFunc(a.Pages, func(p int) bool { return p < 1 }) {
			return fmt.Errorf("%s: pages are 1-based", it.ID)
		}
	}
	if it.Unanswerable {
		if it.File != "" || it.Answer != "" {
			return fmt.Errorf("%s: an unanswerable item has no file or answer", it.ID)
		}
		return nil
	}
	if len(it.Avoid) > 0 && it.File == "" && it.Answer == "" {
		return nil // a regression item: only the passages to avoid are known
	}
	if it.File == "" || strings.TrimSpace(it.Answer) == "" {
		return fmt.Errorf("%s: an answerable item needs file and answer (or \"unanswerable\": true)", it.ID)
	}
	return checkFile(it.ID, it.File)
}

func checkFile(id, file string) error {
	if file == "" {
		return fmt.Errorf("%s: a passage to avoid needs its file", id)
	}
	if filepath.IsAbs(file) || strings.HasPrefix(filepath.Clean(file), "..") {
		return fmt.Errorf("%s: file %q must be relative to the docs folder", id, file)
	}
	return nil
}
