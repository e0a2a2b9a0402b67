// Command gen writes the Korean word list that internal/lexicon embeds (run by `go generate
// ./internal/lexicon`): the Hangul words of two or more syllables in mecab-ko-dic (through kagome-dict-ko)
// whose first part-of-speech tag carries meaning, sorted and front-coded, gzip-compressed. It is not part of
// the ragd binary, which therefore links no dictionary.
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"log"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	ko "github.com/ikawaha/kagome-dict-ko"
	"github.com/ikawaha/kagome-dict/dict"
)

// contentTags are the part-of-speech tags (mecab-ko-dic, Sejong) of words that carry meaning: nouns,
// verbs, adjectives, adverbs, determiners and interjections. Particles and endings alone do not make a word.
var contentTags = []string{"NNG", "NNP", "NNB", "NR", "NP", "VV", "VA", "VX", "VCP", "VCN", "MM", "MAG", "MAJ", "IC", "XR"}

func main() {
	out := flag.String("o", "ko_words.gz", "output file")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("lexicon/gen: ")
	gz, err := encode(words(ko.Dict()))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, gz, 0o644); err != nil {
		log.Fatal(err)
	}
}

// words returns the dictionary's content words of two or more Hangul syllables, sorted and distinct. An
// entry's surface is its reading (feature 3: the POS tag, then the contents), which is the Hangul form
// also for words written in Hanja.
func words(d *dict.Dict) []string {
	reading := d.ContentsMeta[dict.ReadingIndex]
	set := map[string]struct{}{}
	for i, contents := range d.Contents {
		if len(d.POSTable.POSs[i]) == 0 {
			continue
		}
		pos := d.POSTable.NameList[d.POSTable.POSs[i][0]]
		first, _, _ := strings.Cut(pos, "+")
		features := append([]string{pos}, contents...)
		if !contentTag(first) || int(reading) >= len(features) {
			continue
		}
		if w := features[reading]; utf8.RuneCountInString(w) >= 2 && allHangul(w) {
			set[w] = struct{}{}
		}
	}
	list := make([]string, 0, len(set))
	for w := range set {
		list = append(list, w)
	}
	sort.Strings(list)
	return list
}

// encode front-codes the sorted words, one a line: the number of leading syllables shared with the word
// before, then the rest ("2정\n" after "가나다" is "가나정"); then gzip.
func encode(list []string) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	var prev []rune
	for _, w := range list {
		r := []rune(w)
		n := 0
		for n < len(r) && n < len(prev) && r[n] == prev[n] {
			n++
		}
		if _, err := zw.Write([]byte(strconv.Itoa(n) + string(r[n:]) + "\n")); err != nil {
			return nil, err
		}
		prev = r
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func contentTag(tag string) bool {
	for _, t := range contentTags {
		if t == tag {
			return true
		}
	}
	return false
}

func allHangul(s string) bool {
	for _, r := range s {
		if r < 0xAC00 || r > 0xD7A3 {
			return false
		}
	}
	return s != ""
}
