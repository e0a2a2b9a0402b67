package generate

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// MinSupport is the share of a cited sentence's terms that must occur in the passages it cites; below it
// the sentence is weakly supported. Paraphrases keep most content words (and, in Korean, syllable
// bigrams); a sentence that shares less than a third with its source says something the source does not.
const MinSupport = 0.34

// minJudgedTerms is the fewest terms a sentence needs to be judged ("Yes [1]." is not).
const minJudgedTerms = 2

// maxRange bounds a citation range such as [2-5].
const maxRange = 20

// Span is a sentence of a checked answer, by byte offsets into CitationReport.Text.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
	// Citations are the passage numbers the sentence cites.
	Citations []int `json:"citations"`
	// Support is the share of the sentence's terms found in the cited passages (0–1).
	Support float64 `json:"support"`
}

// CitationReport is the result of VerifyCitations.
type CitationReport struct {
	// Text is the answer with every citation written [n] and the numbers that were not given removed.
	Text  string
	Check rag.CitationCheck
	// Weak are the cited sentences whose words their passages barely share, for the UI to mark.
	Weak []Span
	// Cited are the distinct valid passage numbers, in order of first citation.
	Cited []int
}

var (
	// markerRE matches [1], [1, 2], [1-3], [CITE:1], [CITE: 1, 2] and the like.
	markerRE = regexp.MustCompile(`(?i)\[\s*((?:cite\s*:\s*)?\d{1,4}(?:\s*[,;\-–]\s*(?:cite\s*:\s*)?\d{1,4})*)\s*\]`)
	// codeRE matches fenced code blocks and inline code, where brackets are code, not citations.
	codeRE   = regexp.MustCompile("(?s)```.*?(?:```|$)|`[^`\n]*`")
	simpleRE = regexp.MustCompile(`\[(\d+)\]`)
)

// CheckCitations normalises the citations of a generated answer and counts how they held up; see
// VerifyCitations.
func CheckCitations(text string, passages []rag.Passage) (string, rag.CitationCheck) {
	r := VerifyCitations(text, passages)
	return r.Text, r.Check
}

// VerifyCitations parses the citations of text — [n], [n, m], [n-m] and [CITE:n] — and writes each as
// [n]. A number that is not one of the passages' N is removed and counted in Removed; the others are
// counted in Valid. Each sentence that cites passages is then checked against them by term overlap
// (textproc): one whose Support is below MinSupport is reported in Weak and counted in WeaklySupported.
// Brackets inside code and markdown links ([1](url)) are left alone.
func VerifyCitations(text string, passages []rag.Passage) CitationReport {
	given := make(map[int]rag.Passage, len(passages))
	for _, p := range passages {
		given[p.N] = p
	}
	code := codeRE.FindAllStringIndex(text, -1)
	inCode := func(i int) bool {
		for _, c := range code {
			if i >= c[0] && i < c[1] {
				return true
			}
		}
		return false
	}
	var rep CitationReport
	seen := map[int]bool{}
	var b strings.Builder
	last := 0
	for _, m := range markerRE.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[0], m[1]
		if inCode(start) || strings.HasPrefix(text[end:], "(") {
			continue
		}
		b.WriteString(text[last:start])
		last = end
		var kept []int
		inMarker := map[int]bool{}
		for _, n := range markerNumbers(text[m[2]:m[3]]) {
			if inMarker[n] {
				continue
			}
			inMarker[n] = true
			if _, ok := given[n]; !ok {
				rep.Check.Removed++
				continue
			}
			rep.Check.Valid++
			kept = append(kept, n)
			if !seen[n] {
				seen[n] = true
				rep.Cited = append(rep.Cited, n)
			}
		}
		if len(kept) == 0 {
			// "claim [9]." → "claim.": drop the space left before punctuation or the end.
			next, _ := utf8.DecodeRuneInString(text[end:])
			if end == len(text) || unicode.IsPunct(next) || unicode.IsSpace(next) {
				trimmed := strings.TrimRight(b.String(), " \t")
				b.Reset()
				b.WriteString(trimmed)
			}
			continue
		}
		for _, n := range kept {
			b.WriteString("[" + strconv.Itoa(n) + "]")
		}
	}
	b.WriteString(text[last:])
	rep.Text = b.String()

	terms := map[int]map[string]bool{}
	for _, s := range sentences(rep.Text) {
		sentence := rep.Text[s[0]:s[1]]
		var cites []int
		for _, m := range simpleRE.FindAllStringSubmatch(sentence, -1) {
			n, _ := strconv.Atoi(m[1])
			if _, ok := given[n]; ok && !contains(cites, n) {
				cites = append(cites, n)
			}
		}
		if len(cites) == 0 {
			continue
		}
		words := textproc.QueryTerms(simpleRE.ReplaceAllString(sentence, " "))
		if len(words) < minJudgedTerms {
			continue
		}
		hit := 0
		for _, w := range words {
			for _, n := range cites {
				if terms[n] == nil {
					terms[n] = termSet(given[n])
				}
				if terms[n][w] {
					hit++
					break
				}
			}
		}
		support := float64(hit) / float64(len(words))
		if support < MinSupport {
			sort.Ints(cites)
			rep.Weak = append(rep.Weak, Span{Start: s[0], End: s[1], Citations: cites, Support: support})
		}
	}
	rep.Check.WeaklySupported = len(rep.Weak)
	return rep
}

func contains(s []int, n int) bool {
	for _, x := range s {
		if x == n {
			return true
		}
	}
	return false
}

func termSet(p rag.Passage) map[string]bool {
	set := map[string]bool{}
	for _, t := range textproc.IndexTerms(p.Title + "\n" + p.Section + "\n" + p.Text) {
		set[t] = true
	}
	return set
}

// markerNumbers reads the numbers of a marker's inside: "1, 2", "CITE: 3", "2-4".
func markerNumbers(inside string) []int {
	var out []int
	for _, item := range strings.FieldsFunc(inside, func(r rune) bool { return r == ',' || r == ';' }) {
		item = strings.TrimSpace(item)
		lo, hi, isRange := strings.Cut(strings.ReplaceAll(item, "–", "-"), "-")
		a, errA := strconv.Atoi(strings.TrimSpace(stripCite(lo)))
		if errA != nil {
			continue
		}
		if !isRange {
			out = append(out, a)
			continue
		}
		z, errZ := strconv.Atoi(strings.TrimSpace(stripCite(hi)))
		if errZ != nil || z < a || z-a >= maxRange {
			out = append(out, a)
			if errZ == nil {
				out = append(out, z)
			}
			continue
		}
		for n := a; n <= z; n++ {
			out = append(out, n)
		}
	}
	return out
}

func stripCite(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 4 && strings.EqualFold(s[:4], "cite") {
		s = strings.TrimSpace(s[4:])
		s = strings.TrimPrefix(s, ":")
	}
	return s
}

// sentences returns the byte ranges of the sentences of text, trimmed. A sentence ends at a line break or
// at . ! ? (and their full-width forms) followed by a space or the end; citation markers right after the
// punctuation belong to the sentence they follow ("… long. [1] Next").
func sentences(text string) [][2]int {
	var out [][2]int
	emit := func(a, b int) {
		for a < b && isSpaceByte(text[a]) {
			a++
		}
		for b > a && isSpaceByte(text[b-1]) {
			b--
		}
		if a < b {
			out = append(out, [2]int{a, b})
		}
	}
	start := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\n':
			emit(start, i)
			start = i + 1
			i++
			continue
		case strings.ContainsRune(".!?。！？", r):
			j := i + size
			for j < len(text) && strings.ContainsRune(`"')”’`, rune(text[j])) {
				j++
			}
			absorbed := false
			for {
				k := j
				for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
					k++
				}
				if loc := simpleRE.FindStringIndex(text[k:]); loc != nil && loc[0] == 0 {
					j = k + loc[1]
					absorbed = true
					continue
				}
				break
			}
			next, _ := utf8.DecodeRuneInString(text[min(j, len(text)):])
			if j >= len(text) || absorbed || unicode.IsSpace(next) || r >= utf8.RuneSelf {
				emit(start, j)
				start = j
				i = j
				continue
			}
		}
		i += size
	}
	emit(start, len(text))
	return out
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
