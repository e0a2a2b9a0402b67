// Package lexicon tells text made of real words from text that is not language (keyboard noise, made-up
// words). Korean words are looked up in a list of mecab-ko-dic's content words (nouns, verbs, adjectives,
// adverbs, determiners, interjections of two or more syllables, 660k of them) that `go generate` writes from
// kagome-dict-ko (internal/gen); the list is embedded front-coded and gzip-compressed (1.8 MB) and unpacked
// on first use, which only questions that nothing matched reach (see internal/graph Reply). English is
// recognised by its function words (textproc's stop list).
package lexicon

//go:generate go run ./internal/gen -o ko_words.gz

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/textproc"
)

// koWords is the sorted Korean word list, one word a line, front-coded: the number of leading syllables
// shared with the word before, then the rest of the word. Derived from mecab-ko-dic (Apache License 2.0;
// see ko_words.NOTICE).
//
//go:embed ko_words.gz
var koWords []byte

// list is the unpacked word list: the words concatenated in order, word i being text[end[i-1]:end[i]].
type list struct {
	text string
	end  []uint32
}

var (
	once  sync.Once
	words list
	err   error
)

func korean() (list, error) {
	once.Do(func() { words, err = decode(koWords) })
	return words, err
}

// decode unpacks the front-coded, gzip-compressed word list.
func decode(gz []byte) (list, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return list{}, fmt.Errorf("lexicon: %w", err)
	}
	var text strings.Builder
	text.Grow(8 << 20)
	end := make([]uint32, 0, 700_000)
	var prev []byte
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		line := sc.Bytes()
		i := bytes.IndexFunc(line, func(r rune) bool { return r < '0' || r > '9' })
		n, err := strconv.Atoi(string(line[:max(i, 0)]))
		if i <= 0 || err != nil || n > utf8.RuneCount(prev) {
			return list{}, fmt.Errorf("lexicon: bad word list line %d", len(end)+1)
		}
		shared := 0
		for ; n > 0; n-- {
			_, size := utf8.DecodeRune(prev[shared:])
			shared += size
		}
		prev = append(prev[:shared], line[i:]...)
		text.Write(prev)
		end = append(end, uint32(text.Len()))
	}
	if err := sc.Err(); err != nil {
		return list{}, fmt.Errorf("lexicon: %w", err)
	}
	return list{text: text.String(), end: end}, nil
}

func (l list) word(i int) string {
	start := uint32(0)
	if i > 0 {
		start = l.end[i-1]
	}
	return l.text[start:l.end[i]]
}

// has reports whether w is in the list.
func (l list) has(w string) bool {
	i := sort.Search(len(l.end), func(i int) bool { return l.word(i) >= w })
	return i < len(l.end) && l.word(i) == w
}

// HasWords reports whether text contains a real word: an English function word, or a run of Hangul
// syllables (an eojeol) that begins with a Korean content word of two or more syllables — particles and
// endings follow the stem in Korean (날씨 + 는, 알려 + 줘), and the list holds the inflected stems the
// dictionary has (만드 of 만들다, 알려 of 알리다). Single syllables and jamo are not counted: one-syllable
// entries are matched by noise by chance.
func HasWords(text string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		if textproc.EnglishStopWord(w) {
			return true
		}
	}
	runs := strings.FieldsFunc(text, func(r rune) bool { return !syllable(r) })
	if len(runs) == 0 {
		return false
	}
	l, err := korean()
	if err != nil {
		return false
	}
	for _, run := range runs {
		// The prefixes of two or more syllables, longest first.
		for end := len(run); utf8.RuneCountInString(run[:end]) >= 2; {
			if l.has(run[:end]) {
				return true
			}
			_, size := utf8.DecodeLastRuneInString(run[:end])
			end -= size
		}
	}
	return false
}

func syllable(r rune) bool { return r >= 0xAC00 && r <= 0xD7A3 }
