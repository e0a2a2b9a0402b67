// Package lexicon tells text made of real words from text that is not language (keyboard noise, made-up
// words). Korean words are looked up in the mecab-ko-dic dictionary through kagome (github.com/ikawaha/kagome
// with kagome-dict-ko); English is recognised by its function words (textproc's stop list). The dictionary
// is large (about 26 MB in the binary, some 300 MB and several seconds when it loads), so it is loaded on
// first use, which only questions that nothing matched reach (see internal/graph Reply).
package lexicon

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	ko "github.com/ikawaha/kagome-dict-ko"
	"github.com/ikawaha/kagome/v2/tokenizer"

	"github.com/ragd/ragd/internal/textproc"
)

var (
	once sync.Once
	tok  *tokenizer.Tokenizer
	err  error
)

func korean() (*tokenizer.Tokenizer, error) {
	once.Do(func() { tok, err = tokenizer.New(ko.Dict(), tokenizer.OmitBosEos()) })
	return tok, err
}

// contentTags are the part-of-speech tags (mecab-ko-dic, Sejong) of words that carry meaning: nouns,
// verbs, adjectives, adverbs, determiners and interjections. Particles and endings alone do not make a word.
var contentTags = []string{"NNG", "NNP", "NNB", "NR", "NP", "VV", "VA", "VX", "VCP", "VCN", "MM", "MAG", "MAJ", "IC", "XR"}

// HasWords reports whether text contains a real word: a Korean dictionary word of two or more syllables
// whose part of speech carries meaning, or an English function word. Single syllables and jamo are not
// counted (the dictionary has many one-syllable entries that noise matches by chance).
func HasWords(text string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		if textproc.EnglishStopWord(w) {
			return true
		}
	}
	if !hasHangul(text) {
		return false
	}
	t, err := korean()
	if err != nil {
		return false
	}
	for _, token := range t.Tokenize(text) {
		if token.Class != tokenizer.KNOWN || utf8.RuneCountInString(token.Surface) < 2 || !hasHangul(token.Surface) {
			continue
		}
		pos := token.POS()
		if len(pos) == 0 {
			continue
		}
		first, _, _ := strings.Cut(pos[0], "+")
		for _, tag := range contentTags {
			if first == tag {
				return true
			}
		}
	}
	return false
}

func hasHangul(s string) bool {
	for _, r := range s {
		if r >= 0xAC00 && r <= 0xD7A3 {
			return true
		}
	}
	return false
}
