package extractive

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/followup"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// standalone returns the follow-up question made standalone against the previous one (followup.Resolve:
// "그건 어떻게 계산해요?" after "CPM이 뭔가요?" is "CPM은 어떻게 계산해요?") and the phrase its reference stands
// for ("CPM"), "" when it refers to nothing. The answer is then scored by the standalone question: the
// topic is a focus word of its own, which the answer must be about, not an extra of the previous question
// at its lower weight.
func standalone(question, previous string) (string, string) {
	if previous == "" {
		return question, ""
	}
	return followup.Resolve(question, previous)
}

// markTopic marks the question words that come from topic, the phrase a follow-up's reference stands for.
func markTopic(qw []qword, topic string) {
	if topic == "" {
		return
	}
	var terms []string
	for _, w := range questionWords(topic, "") {
		terms = append(terms, w.terms[0])
		if w.stem != "" {
			terms = append(terms, w.stem)
		}
	}
	for i := range qw {
		w := &qw[i]
		if !w.history && (slices.Contains(terms, w.terms[0]) || w.stem != "" && slices.Contains(terms, w.stem)) {
			w.topic = true
		}
	}
}

// topicWords counts the focus words of qw that come from a follow-up's topic.
func topicWords(qw []qword) int {
	n := 0
	for _, w := range qw {
		if w.topic && w.focus {
			n++
		}
	}
	return n
}

// shareTopic gives the words of a follow-up's topic, together, the weight of the one word that referred to
// it: each its inverse frequency over their count, so that "Lion Air Flight 610" for "it" weighs as much
// as "CPM" for "그건", and the follow-up's own words ("fatalities") still decide which sentence answers.
// It returns the new total weight.
func shareTopic(qw []qword, total float64) float64 {
	n := topicWords(qw)
	if n < 2 {
		return total
	}
	for i := range qw {
		if qw[i].topic && qw[i].focus {
			total -= qw[i].idf
			qw[i].idf /= float64(n)
			total += qw[i].idf
		}
	}
	return total
}

// coverageWeight is how much question word w counts in the share of focus words an answer must hold: a
// word of a follow-up's topic, one of n, 1/n (the topic is one word of the question).
func coverageWeight(w qword, n int) float64 {
	if w.topic && w.focus && n > 1 {
		return 1 / float64(n)
	}
	return 1
}

// topicPassage is a passage as a follow-up's topic words are looked up in: its terms and its lower-cased
// text, title and section included.
type topicPassage struct {
	terms map[string]bool
	text  string
}

// topicTerms returns passage p as its topic words are looked up in, when the question has words of a
// follow-up's topic (nil otherwise): Korean sentences leave out the topic their passage has named, so a
// topic word the passage holds counts for each of its sentences as the title's words do.
func topicTerms(qw []qword, p rag.Passage) *topicPassage {
	if !slices.ContainsFunc(qw, func(w qword) bool { return w.topic }) {
		return nil
	}
	all := p.Title + "\n" + p.Section + "\n" + p.Text
	return &topicPassage{terms: termSet(all), text: strings.ToLower(textproc.Normalize(all))}
}

// topicDegree is how well the passage tp (topicTerms) holds w, a word of the topic: 1 when it holds the
// word's stem inside a compound ("회의록" in "환경노동위원회회의록"), else degree; 0 for another word.
func topicDegree(w qword, tp *topicPassage) float64 {
	if !w.topic || tp == nil {
		return 0
	}
	if w.stem != "" && utf8.RuneCountInString(w.stem) >= 2 && strings.Contains(tp.text, w.stem) {
		return 1
	}
	return degree(w, tp.terms)
}

// topicCache keeps each passage's topicTerms, by rank, for the checks that look a topic word up sentence by
// sentence.
type topicCache map[int]*topicPassage

// of returns topicTerms(qw, passages[rank]), computed once.
func (c topicCache) of(qw []qword, passages []rag.Passage, rank int) *topicPassage {
	if tp, ok := c[rank]; ok {
		return tp
	}
	c[rank] = topicTerms(qw, passages[rank])
	return c[rank]
}
