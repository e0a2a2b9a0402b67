package textproc

// englishStop is the Snowball English stop-word list with a few frequent function words added (modal
// verbs, "also", "upon", …). Stop-words stay in the index; queries drop them.
var englishStop = setOf(
	"a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
	"be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
	"can", "could", "did", "do", "does", "doing", "don", "down", "during",
	"each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers",
	"herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself",
	"just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now",
	"of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
	"s", "same", "she", "should", "so", "some", "such", "t", "than", "that", "the", "their", "theirs",
	"them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
	"under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who",
	"whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves",
	// additions
	"also", "may", "might", "must", "shall", "upon", "via", "whether", "yet", "etc", "e.g", "i.e",
)

// koreanStop holds Korean question words and function words that stand alone or carry only a particle.
// A Hangul word is a stop-word when it, or its particle-stripped form, is in the list.
var koreanStop = setOf(
	// question words
	"무엇", "무엇인", "무슨", "누구", "누가", "언제", "어디", "어느", "어떤", "어떻게", "어떠한", "왜", "몇", "얼마",
	"얼마나", "무엇인가", "누구인가", "어디인가", "언제인가", "얼마인가",
	// function words, demonstratives, conjunctions
	"및", "등", "또는", "혹은", "그리고", "그러나", "하지만", "또한", "즉", "이", "그", "저", "이것", "그것", "저것",
	"것", "수", "때", "중", "위해", "위한", "대한", "대해", "통해", "통한", "의해", "따라", "관한", "관해",
	"있다", "있는", "있었다", "없다", "없는", "하다", "한다", "했다", "하는", "하여", "하고", "된다", "되는", "된",
	"이다", "있으며", "있고", "같은", "같이",
)

// koreanSuffixes are particles and endings stripped from the end of a Hangul word to give its stem as a
// second term; the longest match wins. The stem must keep at least two syllables, which guards most nouns
// that merely end in a particle-like syllable ("국가").
var koreanSuffixes = []string{
	// particles
	"이", "가", "은", "는", "을", "를", "의", "에", "도", "만", "와", "과", "로", "께",
	"에서", "에게", "한테", "께서", "으로", "까지", "부터", "보다", "처럼", "마다", "조차", "밖에", "이나", "이며",
	"이고", "에는", "에도", "에의", "로는", "로도", "로서", "로써", "로의", "와의", "과의", "와는", "과는", "이란",
	"라는", "라고", "이라", "에서는", "에서도", "에서의", "에게서", "에게는", "께서는", "으로는", "으로도", "으로서",
	"으로써", "으로의", "이라는", "이라고", "에서부터", "이었다", "였다", "이었던", "이었으며", "였으며", "이지만",
	"인가", "인지", "일까", "입니까",
	// polite question and statement endings ("언제인가요" → "언제", "무엇이에요" → "무엇")
	"인가요", "인지요", "일까요", "이에요", "예요", "이죠", "입니다", "이요",
	// endings of 하다/되다 verbs on a noun stem ("주도한" → "주도")
	"한", "할", "함", "해", "된", "될", "됨", "하는", "하고", "하여", "하며", "해서", "했다", "했고", "했던", "한다",
	"하기", "하지", "하던", "하였", "되어", "되는", "되고", "되며", "된다", "됐다", "되었", "시켜", "시킨",
	"하였다", "하였고", "하였던", "했으며", "되었다", "되었고", "되었던", "됐으며", "시켰다", "받았다", "받은",
	"하였으며", "되었으며", "하였는가", "되었는가", "했는가", "하는가", "되는가",
}

// suffixKeys holds koreanSuffixes packed by packRunes, and maxSuffix the longest suffix in syllables.
var suffixKeys, maxSuffix = packSuffixes(koreanSuffixes)

// shortParticles are the particles that a two-syllable word may shed to leave a one-syllable noun ("법의" →
// "법", "돈을" → "돈"). 이/가/와/과 are not among them: too many two-syllable nouns end in them (국가, 사과).
var shortParticles = setOf("은", "는", "을", "를", "의", "에", "도", "로")

// stripKorean returns the Hangul word r without its trailing particle or ending (and a plural "들"), or the
// word itself when nothing is stripped.
func stripKorean(r []rune) string {
	n := len(r)
	if n == 2 && shortParticles[string(r[1])] {
		return string(r[:1])
	}
	if n < 3 {
		return string(r)
	}
	for l := min(maxSuffix, n-2); l >= 1; l-- {
		if k, ok := packRunes(r[n-l:]); ok && suffixKeys[k] {
			r = r[:n-l]
			break
		}
	}
	if len(r) >= 3 && r[len(r)-1] == '들' {
		r = r[:len(r)-1]
	}
	return string(r)
}

// packRunes packs up to four runes of the Basic Multilingual Plane into one map key; runes are never zero,
// so keys of different lengths differ.
func packRunes(r []rune) (uint64, bool) {
	if len(r) > 4 {
		return 0, false
	}
	var k uint64
	for _, c := range r {
		if c <= 0 || c > 0xFFFF {
			return 0, false
		}
		k = k<<16 | uint64(c)
	}
	return k, true
}

func packSuffixes(words []string) (map[uint64]bool, int) {
	m := make(map[uint64]bool, len(words))
	longest := 0
	for _, w := range words {
		r := []rune(w)
		k, ok := packRunes(r)
		if !ok {
			panic("textproc: suffix too long: " + w)
		}
		m[k] = true
		longest = max(longest, len(r))
	}
	return m, longest
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// EnglishStopWord reports whether w (lower case) is an English function word of the stop list.
func EnglishStopWord(w string) bool { return englishStop[w] }
