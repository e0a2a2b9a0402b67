package extractive

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Korean verbs change their stem's last syllable with the ending: "풀어요" and "푸는" are both of 풀다 (the
// ㄹ drops before ㄴ), "떴다" is 뜨다 with 었 fused into it, "어려워요" is 어렵다, "몰라요" 모르다. The analyzer
// keeps such words whole or as syllable pairs, which differ between the forms; verbStems reads the stems a
// form may have, so that a question's predicate meets the document's other form of the same verb.

// verbPrefix marks a verb stem among a sentence's terms, apart from the analyzer's terms.
const verbPrefix = "v:"

// verbEndings are endings that follow a verb stem as syllables of their own ("풀|고", "푸|는데", "먹|습니다"),
// longest first within a shared start so that the longest reading is tried first.
var syllableEndings = []string{"습니다", "습니까", "는다면", "는데요", "는데", "는지", "는다", "는", "으면서", "으면", "면서", "면",
	"으니까", "니까", "으려면", "려면", "으려고", "려고", "으세요", "세요", "으니", "니다", "나요", "네요", "고요", "고", "지만",
	"지요", "지", "죠", "게", "기", "다고", "다", "던", "도록", "은", "을까요", "을", "잖아요"}

// vowelTails follow the vowel 어/아 that joins a stem ("풀어|요", "떠|서", "봐|도", "했|다").
var vowelTails = []string{"", "요", "서", "서요", "도", "야", "야지", "라", "다", "다고", "어요", "고", "는데", "지만", "어",
	"던", "을", "는지", "나요", "습니다", "죠", "네요"}

// lightStems are verbs too common to tell sentences apart (하다, 되다, 있다 …).
var lightStems = []string{"하", "되", "있", "없", "이", "아니", "않", "같", "주", "보", "말", "오", "가", "지"}

// Hangul syllable arithmetic: syllable = 0xAC00 + (initial·21 + vowel)·28 + final.
const (
	hangulBase = 0xAC00
	hangulLast = 0xD7A3
	// finals
	finNone = 0
	finN    = 4  // ㄴ
	finL    = 8  // ㄹ
	finB    = 17 // ㅂ
	finSS   = 20 // ㅆ
	finD    = 7  // ㄷ
	// vowels
	vA, vAE, vYEO, vEO, vO, vWA, vWAE, vOE, vU, vWEO, vEU, vI = 0, 1, 6, 4, 8, 9, 10, 11, 13, 14, 18, 20
	initNone                                                  = 11 // ㅇ
	initR                                                     = 5  // ㄹ
)

func syllable(r rune) (initial, vowel, final int, ok bool) {
	if r < hangulBase || r > hangulLast {
		return 0, 0, 0, false
	}
	n := int(r - hangulBase)
	return n / (21 * 28), n / 28 % 21, n % 28, true
}

func compose3(initial, vowel, final int) rune {
	return rune(hangulBase + (initial*21+vowel)*28 + final)
}

// verbStems returns the stems (without 다) the Korean word w may have when read as a verb form, the light
// verbs left out. A noun with a particle gives readings no verb form shares ("구매는" → "구매", "구맬"),
// which match nothing; the caller compares a question's predicate with the words of a sentence.
func verbStems(w string) []string {
	rs := []rune(w)
	if len(rs) < 2 || !isHangulWord(w) {
		return nil
	}
	var out []string
	add := func(stem []rune) {
		s := string(stem)
		if len(stem) > 0 && !slices.Contains(lightStems, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	// withL adds a stem and, when its last syllable has no final, the ㄹ stem that dropped it ("푸" → "풀").
	withL := func(stem []rune) {
		add(stem)
		add(refinal(stem, finNone, finL))
	}
	for k := 1; k < len(rs); k++ {
		stem, rest := rs[:k], string(rs[k:])
		if slices.Contains(syllableEndings, rest) {
			if strings.HasPrefix(rest, "는") || strings.HasPrefix(rest, "니") || strings.HasPrefix(rest, "세") ||
				strings.HasPrefix(rest, "습") {
				withL(stem)
			} else {
				add(stem)
			}
		}
	}
	// An ending fused into the stem's last syllable as its final: ㄴ ("푼다", "간다"), ㅂ ("풉니다").
	for k := 1; k <= len(rs); k++ {
		i, v, f, _ := syllable(rs[k-1])
		if rest := string(rs[k:]); f == finN && (rest == "다" || rest == "데" || rest == "지") ||
			f == finB && (rest == "니다" || rest == "니까") {
			withL(append(slices.Clone(rs[:k-1]), compose3(i, v, finNone)))
		}
	}
	for k := 1; k <= len(rs); k++ {
		if !slices.Contains(vowelTails, string(rs[k:])) {
			continue
		}
		x := rs[k-1]
		i, v, f, _ := syllable(x)
		if f != finNone && f != finSS {
			continue
		}
		head := rs[:k-1]
		if i == initNone && (v == vEO || v == vA || v == vYEO) && len(head) > 0 {
			// 어/아/여 as a syllable of its own: "풀어요", "먹었다"; "들어" may also be 듣다.
			add(head)
			add(refinal(head, finL, finD))
			continue
		}
		if i == initNone && (v == vWEO || v == vWA) && len(head) > 0 {
			// 워/와 after a stem that lost its ㅂ: "어려워요" → 어렵, "도와" → 돕.
			add(refinal(head, finNone, finB))
			continue
		}
		if i == initR && (v == vA || v == vEO) && len(head) > 0 {
			// 르 verbs: "몰라요" → 모르, "빨라" → 빠르.
			if pi, pv, pf, ok := syllable(head[len(head)-1]); ok && pf == finL {
				r := append(slices.Clone(head[:len(head)-1]), compose3(pi, pv, finNone), compose3(initR, vEU, finNone))
				add(r)
			}
		}
		// The stem's last vowel fused with 어/아: "떠"/"떴" ← 뜨, "써" ← 쓰, "봐" ← 보, "줘" ← 주, "켜" ← 키,
		// "돼" ← 되, "보내" ← 보내.
		var vowels []int
		switch v {
		case vEO:
			vowels = []int{vEU, vEO}
		case vA:
			vowels = []int{vEU, vA}
		case vYEO:
			vowels = []int{vI, vYEO}
		case vWA:
			vowels = []int{vO}
		case vWEO:
			vowels = []int{vU}
		case vAE:
			vowels = []int{vAE}
		case vWAE:
			vowels = []int{vOE}
		}
		for _, sv := range vowels {
			add(append(slices.Clone(head), compose3(i, sv, finNone)))
		}
	}
	// A stem ending in 애 is often the causative of the verb in 아 (아 + 이 fused: 나다 → 내다), whose
	// intransitive use takes 지다: "빼면" (빼다, take out) and "빠지면" (빠지다, be left out) say one thing from
	// either side. The 아 stem alone is left out: it is also a pronoun or a noun ("나는").
	for _, s := range slices.Clone(out) {
		rs := []rune(s)
		i, v, f, _ := syllable(rs[len(rs)-1])
		if v == vAE && f == finNone && !slices.Contains(lightStems, string(append(slices.Clone(rs[:len(rs)-1]), compose3(i, vA, finNone)))) {
			add(append(append(slices.Clone(rs[:len(rs)-1]), compose3(i, vA, finNone)), '지'))
		}
	}
	return out
}

// refinal returns stem with the final consonant of its last syllable changed from one to another ("푸" →
// "풀", "들" → "듣"), or nil when that syllable does not end in from.
func refinal(stem []rune, from, to int) []rune {
	i, v, f, ok := syllable(stem[len(stem)-1])
	if !ok || f != from {
		return nil
	}
	out := slices.Clone(stem)
	out[len(out)-1] = compose3(i, v, to)
	return out
}

// verbTerms adds the verb stems of text's Hangul words to terms, each marked with verbPrefix.
func verbTerms(text string, terms map[string]bool) {
	for _, w := range splitWords(text) {
		if utf8.RuneCountInString(w) < 2 {
			continue
		}
		for _, s := range verbStems(w) {
			terms[verbPrefix+s] = true
		}
	}
}
