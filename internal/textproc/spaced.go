package textproc

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// spacedMin is the fewest syllables a letter-spaced word has: two-syllable runs (`할 때`, `그 해`, `이 중`)
// are as often prose as labels (`일 시`, `부 칙`), three-syllable ones at a line's edges are labels
// (`문 의 처`, `발 의 자 :`, `| 개 정 안 |`).
const spacedMin = 3

// SpacedWords returns the words that letter-spaced Korean in text spells, joined (`문 의 처 02)6788-5533` →
// `문의처`, `제 안 이 유` → `제안이유`), as forms, reports and title pages set their labels and headings. One
// reader serves the keyword index (IndexTerms) and the offline answerer.
//
// A run is spacedMin or more words of one Hangul syllable each, one after the other on a line. Korean prose
// has such runs too (`그 중 몇 개의`, `단 한 번 뿐인`, `총 두 번 들어오는`), but between Korean words; a
// label stands apart from them. So a run counts only when it ends its line or is followed by a word that
// does not begin with Hangul (the label's value, a colon, a table's `|`), and when it starts its line or
// follows a word that does not end in Hangul. A PDF's text layer may glue a heading's first letter to the
// word before it (`일부개정법률안검 토 보 고` → `검토보고`): with glued, after a word that ends in Hangul, a
// run that ends its line gives the word with that syllable and without it (`토보고`, a term no question
// asks for), as a label after a word (`담당 문 의 처`) is not glued; a run that does not end its line there
// is prose (`…일 때 두 칸 전진`, `…안 된 채 1986년`). Without glued such a run gives nothing: the reading is a
// guess that an index can hold as an extra term, while the offline answerer, which weighs each word a
// sentence holds, would take a report's title line for any question naming the report (docs/retrieval.md).
//
// A colon, bracket or bullet around a run belongs to its edges: `(문 의 처)` and `□ 문 의 처:` are runs, as
// `문 의 처` is; a comma, full stop or quotation mark is prose's (`몇 년 뒤, 핀은`, `‘한 달 내 20만 명`).
func SpacedWords(text string, glued bool) []string {
	if !hasSpacedRun(text) {
		return nil
	}
	text = Normalize(text)
	var out []string
	for _, line := range strings.Split(text, "\n") {
		ws := strings.Fields(line)
		for i := 0; i < len(ws); {
			lead, syl, trail, ok := spacedSyllable(ws[i])
			if !ok {
				i++
				continue
			}
			run := []rune{syl}
			j := i + 1
			for end := trail; !end && j < len(ws); j++ {
				l, s, t, ok := spacedSyllable(ws[j])
				if !ok || l {
					break
				}
				run = append(run, s)
				end = t
			}
			// ws[i:j] is the run; it ends at the line's end, its own punctuation or a word without Hangul.
			after := j == len(ws) || lastTrails(ws[i:j]) || !startsHangul(ws[j])
			switch {
			case len(run) < spacedMin || !after:
			case lead || i == 0 || !endsHangul(ws[i-1]):
				out = append(out, string(run))
			case glued && j == len(ws):
				// glued, or a label after a word (`연락처 문 의 처`): both readings
				r, _ := utf8.DecodeLastRuneInString(ws[i-1])
				out = append(out, string(r)+string(run), string(run))
			}
			i = j
		}
	}
	return out
}

// hasSpacedRun reports whether text may hold a run: spacedMin words in a row on a line whose only letter or
// digit is one Hangul syllable. It reads text once without allocating, so that the analyzer of every passage
// and sentence pays for SpacedWords' work only where a run may be.
func hasSpacedRun(text string) bool {
	run, letters, syllable := 0, 0, false
	for _, r := range text {
		switch {
		case unicode.IsSpace(r):
			if letters == 1 && syllable {
				if run++; run >= spacedMin {
					return true
				}
			} else if letters > 0 {
				run = 0
			}
			if r == '\n' {
				run = 0
			}
			letters, syllable = 0, false
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			letters++
			syllable = isSyllable(r)
		}
	}
	return letters == 1 && syllable && run+1 >= spacedMin
}

// spacedSyllable reports whether w is one Hangul syllable, with any punctuation before it (lead) or after it
// (trail).
func spacedSyllable(w string) (lead bool, syl rune, trail bool, ok bool) {
	core := strings.TrimLeftFunc(w, isEdgePunct)
	lead = len(core) < len(w)
	n := len(core)
	core = strings.TrimRightFunc(core, isEdgePunct)
	trail = len(core) < n
	r, size := utf8.DecodeRuneInString(core)
	if size == 0 || size != len(core) || !isSyllable(r) {
		return false, 0, false, false
	}
	return lead, r, trail, true
}

func lastTrails(ws []string) bool {
	_, _, t, _ := spacedSyllable(ws[len(ws)-1])
	return t
}

// isEdgePunct reports whether r may stand at a run's edge: a colon, bracket, bullet or table rule, not the
// marks of a sentence (`몇 년 뒤, 핀은`) or a quotation (`‘한 달 내 20만 명`).
func isEdgePunct(r rune) bool {
	return (unicode.IsPunct(r) || unicode.IsSymbol(r)) && !unicode.Is(unicode.Quotation_Mark, r) &&
		!strings.ContainsRune(",.!?;…", r)
}

// isSyllable reports whether r is a precomposed Hangul syllable (가–힣), not a lone jamo.
func isSyllable(r rune) bool { return r >= 0xAC00 && r <= 0xD7A3 }

func startsHangul(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return isHangul(r)
}

func endsHangul(w string) bool {
	r, _ := utf8.DecodeLastRuneInString(w)
	return isHangul(r)
}
