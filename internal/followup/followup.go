// Package followup makes a follow-up question standalone offline: the word that refers back to the previous
// question (그건, 그 법안은, 거기서, it, he, its…) replaced by what that question was about.
package followup

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// Resolve returns the follow-up q made standalone offline: a word that refers back to the previous
// question prev — Korean 그건, 그것은, 거기서, 그때, 그 법안은, 이 제도는…, English it, he, she, they, its, his,
// their — replaced by what prev is about (Topic): "CPM이 뭔가요?" then "그건 어떻게 계산해요?" is
// "CPM은 어떻게 계산해요?", "Who is Brendan Eich?" then "When did he step down?" is "When did Brendan Eich
// step down?". A determiner's noun that names a word of prev ("그 법" after "… 기본법 일부개정법률안의
// 제안이유는?") refers to that word's phrase. topic is the phrase put in. When q refers to nothing (a
// follow-up naming its own topic, or leaving it out: "월 임대료는 얼마예요?") or prev's topic is not found,
// Resolve returns q and "".
func Resolve(q, prev string) (standalone, topic string) {
	q, prev = strings.TrimSpace(q), strings.TrimSpace(prev)
	if q == "" || prev == "" {
		return q, ""
	}
	if hangulText(q) {
		return standaloneKorean(q, prev)
	}
	return standaloneEnglish(q, prev)
}

// hangulText reports whether s has more Hangul letters than Latin ones.
func hangulText(s string) bool {
	h, l := 0, 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Hangul, r):
			h++
		case r < unicode.MaxASCII && unicode.IsLetter(r):
			l++
		}
	}
	return h > 0 && h >= l
}

// koreanPronouns are the words that stand for a thing named before, each with the particle it is written
// with ("그건" is "그것" + "은"); the particle is put back after the topic. 그때 and 그중 keep the part that
// is not the pronoun ("때", "중") after it.
var koreanPronouns = map[string][2]string{
	"그건": {"", "은"}, "그게": {"", "이"}, "그걸": {"", "을"}, "이건": {"", "은"}, "이게": {"", "이"}, "이걸": {"", "을"},
	"저건": {"", "은"}, "저게": {"", "이"},
	"그때": {" 때", ""}, "그중": {" 중", ""}, "이중": {" 중", ""}, "그중에서": {" 중", "에서"},
}

// koreanPronounStems are pronouns written with any particle ("그것은", "거기서", "그곳에").
var koreanPronounStems = []string{"그것", "이것", "저것", "그거", "이거", "저거", "거기", "여기", "그곳", "이곳", "그분", "그녀"}

// determiners point back at a noun named before: "그 법안은", "이 제도는", "해당 단지의".
var determiners = map[string]bool{"그": true, "이": true, "저": true, "해당": true, "위": true}

// particles are the Korean particles a noun phrase may end with, longest first.
var particles = []string{"에서는", "으로는", "에게는", "이라는", "에서", "에게", "으로", "이란", "라는", "에는", "과는", "와는",
	"은", "는", "이", "가", "을", "를", "의", "에", "로", "와", "과", "도", "만", "란"}

// caseParticles mark the noun phrase a question is about: its topic or subject (은, 는, 이, 가) or object
// (을, 를).
var caseParticles = []string{"은", "는", "이", "가", "을", "를"}

// questionStems are the question words a Korean question may mark with a particle ("누가", "무엇이"): never
// its topic.
var questionStems = []string{"누구", "누가", "무엇", "뭐", "뭔", "무슨", "어디", "언제", "어느", "어떤", "어떻", "몇", "얼마", "왜"}

// splitParticle returns w without its trailing particle (one of particles) and the particle, or w and "".
// The noun left must be a word: two letters at least, one before 은/는/을/를 ("법은"), any Latin letters or
// digits before any particle ("CPM이").
func splitParticle(w string) (string, string) {
	for _, p := range particles {
		stem, ok := strings.CutSuffix(w, p)
		if !ok || stem == "" {
			continue
		}
		last, _ := utf8.DecodeLastRuneInString(stem)
		n := utf8.RuneCountInString(stem)
		switch {
		case !unicode.Is(unicode.Hangul, last):
			if unicode.IsLetter(last) || unicode.IsDigit(last) {
				return stem, p
			}
		case n >= 2 || slices.Contains([]string{"은", "는", "을", "를"}, p):
			return stem, p
		}
	}
	return w, ""
}

// koreanWords splits a question into words, without its closing punctuation.
func koreanWords(s string) []string {
	var out []string
	for _, w := range strings.Fields(s) {
		if w = strings.TrimRight(w, "?.!,;:…~"); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// Topic returns the phrase a question is about, for a follow-up to refer to: the last noun phrase before its
// predicate that a topic, subject or object particle marks, with the words before it ("양경규 위원이
// 제안설명한 근로기준법 개정안은 어떤 내용인가요?" → "양경규 위원이 제안설명한 근로기준법 개정안"), or the
// one "에 대해" is about ("상계 푸른언덕 단지에 대해 알려 주세요" → "상계 푸른언덕 단지"); in English the
// noun phrase after "who/what is", "what happened to", "tell me about", or the subject after an auxiliary
// ("What does the FAA propose …" → "the FAA"). "" when there is none.
func Topic(q string) string {
	if !hangulText(q) {
		return englishTopic(q)
	}
	words, _ := koreanTopic(q)
	return strings.Join(words, " ")
}

// koreanTopic returns the words of q's topic phrase, its last word without its particle, and that
// particle; nil when q has none.
func koreanTopic(q string) ([]string, string) {
	words := koreanWords(q)
	head := -1
	for i, w := range words {
		if i > 0 && (w == "대해" || w == "대한" || w == "관해" || w == "관한") && strings.HasSuffix(words[i-1], "에") {
			head = i - 1 // "X에 대해 알려 주세요"
			continue
		}
		stem, p := splitParticle(w)
		if !slices.Contains(caseParticles, p) || i == len(words)-1 || questionWord(stem) || determiners[stem] {
			continue
		}
		head = i
	}
	if head < 0 {
		return nil, ""
	}
	start := head
	for start > 0 && plainNoun(words[start-1]) {
		start--
	}
	out := slices.Clone(words[start : head+1])
	var p string
	out[head-start], p = splitParticle(out[head-start])
	// A topic that itself refers back ("이 법은 …?") is no topic to resolve against.
	if start > 0 && determiners[words[start-1]] || slices.ContainsFunc(out, func(w string) bool { return determiners[w] || isKoreanPronoun(w) }) {
		return nil, ""
	}
	return out, p
}

// adnominalEnds are the last syllables of a verb or adjective qualifying the noun after it ("명시하는",
// "제안설명한", "위한", "된", "할").
var adnominalEnds = []string{"는", "한", "된", "던", "할", "될"}

// plainNoun reports whether w may be part of the noun phrase before the next word ("환경노동위원회 제1차
// 회의록", "학습 단계", "탄소중립위원회의 위원 구성"): no particle but the genitive 의 (을 and 를 before a
// noun end a name, "햇살마을", not an object), no adnominal ending, no question word or pronoun.
func plainNoun(w string) bool {
	if _, p := splitParticle(w); p != "" && p != "의" && p != "을" && p != "를" || questionWord(w) || determiners[w] || isKoreanPronoun(w) {
		return false
	}
	return !slices.ContainsFunc(adnominalEnds, func(e string) bool { return strings.HasSuffix(w, e) })
}

func questionWord(stem string) bool {
	return slices.ContainsFunc(questionStems, func(p string) bool { return strings.HasPrefix(stem, p) })
}

func isKoreanPronoun(w string) bool {
	if _, ok := koreanPronouns[w]; ok {
		return true
	}
	return slices.ContainsFunc(koreanPronounStems, func(p string) bool { return strings.HasPrefix(w, p) })
}

// standaloneKorean is Standalone for a Korean follow-up.
func standaloneKorean(q, prev string) (string, string) {
	topic, written := koreanTopic(prev)
	if topic == nil {
		return q, ""
	}
	// attach writes a particle after the topic as its last word takes it; a Latin word's sound is read from
	// the particle prev wrote it with ("CPM이": it ends in a consonant).
	attach := func(w, p string) string { return attachParticle(w, p, written) }
	fields := strings.Fields(q)
	for i, f := range fields {
		w := strings.TrimRight(f, "?.!,;:…~")
		tail := f[len(w):]
		if p, ok := koreanPronouns[w]; ok {
			fields[i] = strings.Join(topic, " ") + p[0] + attach(lastOf(topic, p[0]), p[1]) + tail
			return strings.Join(fields, " "), strings.Join(topic, " ")
		}
		for _, stem := range koreanPronounStems {
			if rest, ok := strings.CutPrefix(w, stem); ok && (rest == "" || slices.Contains(particles, rest) || rest == "서") {
				if rest == "서" {
					rest = "에서" // 거기서
				}
				fields[i] = strings.Join(topic, " ") + attach(topic[len(topic)-1], rest) + tail
				return strings.Join(fields, " "), strings.Join(topic, " ")
			}
		}
		if determiners[w] && i+1 < len(fields) {
			next := strings.TrimRight(fields[i+1], "?.!,;:…~")
			noun, p := splitParticle(next)
			if questionWord(noun) || noun == "" {
				continue
			}
			phrase := nounPhrase(prev, topic, noun)
			if phrase == nil {
				return q, ""
			}
			rest := fields[i+1][len(next):]
			fields[i] = strings.Join(phrase, " ") + attach(phrase[len(phrase)-1], p) + rest
			fields = slices.Delete(fields, i+1, i+2)
			return strings.Join(fields, " "), strings.Join(phrase, " ")
		}
	}
	return q, ""
}

// nounPhrase returns what "그 noun" refers to in prev, whose topic phrase is topic: the topic when its last
// word holds that noun ("그 보고서" of "… 검토보고서", "그 회의" of "… 회의록"); else the noun phrase of prev
// ending with a word that ends with the noun ("그 법" of "… 탄소중립·녹색성장 기본법 일부개정법률안의
// 제안이유"); else nil: "그 법안" after "… 개정안이 있나요?" may well be that amendment, but a guess that put
// "개정안" in the question would make the answer about the amendment, not about what is asked of it.
func nounPhrase(prev string, topic []string, noun string) []string {
	last := topic[len(topic)-1]
	if strings.Contains(last, noun) {
		return topic // "그 보고서" of "검토보고서", "그 회의" of "회의록"
	}
	words := koreanWords(prev)
	for i := len(words) - 1; i >= 0; i-- {
		stem, _ := splitParticle(words[i])
		if strings.HasSuffix(stem, noun) && !determiners[stem] {
			start := i
			for start > 0 && plainNoun(words[start-1]) {
				start--
			}
			out := slices.Clone(words[start : i+1])
			out[i-start] = stem
			return out
		}
	}
	return nil
}

// lastOf returns the word a particle attaches to: the kept part of a pronoun ("때" of "그때") or the topic's
// last word.
func lastOf(topic []string, kept string) string {
	if kept != "" {
		return strings.TrimSpace(kept)
	}
	return topic[len(topic)-1]
}

// particlePairs are the particles written one way after a final consonant and another after a vowel.
var particlePairs = [][2]string{{"은", "는"}, {"이", "가"}, {"을", "를"}, {"과", "와"}, {"으로", "로"}, {"이라는", "라는"}, {"이란", "란"}}

// attachParticle writes particle p after word w in the form its last sound takes: 은/는, 이/가, 을/를, 과/와,
// 으로/로 by whether w ends with a final consonant. A word not ending in Hangul ("CPM", "API") sounds as the
// particle written after it elsewhere says (written, "" when none: read as a vowel).
func attachParticle(w, p, written string) string {
	if p == "" {
		return ""
	}
	batchim := false
	if r, _ := utf8.DecodeLastRuneInString(w); r >= 0xAC00 && r <= 0xD7A3 {
		batchim = (r-0xAC00)%28 != 0
	} else {
		batchim = slices.ContainsFunc(particlePairs, func(pr [2]string) bool { return written == pr[0] })
	}
	for _, pr := range particlePairs {
		if p == pr[0] || p == pr[1] {
			if batchim {
				return pr[0]
			}
			return pr[1]
		}
	}
	return p
}

var (
	// englishIs: "Who is X?", "What are X?", "Tell me about X", "What happened to X?", "Describe X".
	englishIs = regexp.MustCompile(`(?i)^(?:(?:who|what)\s+(?:is|are|was|were)|what\s+happened\s+to|tell\s+me\s+about|describe|explain|what\s+do\s+you\s+know\s+about)\s+(.+?)[?.!]*$`)
	// englishAux: "What does the FAA propose …", "When did Mozilla release …": the subject after the auxiliary.
	englishAux = regexp.MustCompile(`(?i)^(?:what|when|where|why|how|which|who)(?:\s+\w+)?\s+(?:does|did|do|is|was|are|were|can|could|will|would|has|have|had|should)\s+(.+?)[?.!]*$`)
	// englishWhich: "Which company filed this report?" is about the company.
	englishWhich = regexp.MustCompile(`(?i)^(?:which|what)\s+([a-z]+)\s+(?:[a-z]+ed|is|was|are|were|has|had|owns|makes|runs|publishes|issued)\b`)
	// englishPronoun: a pronoun standing for what was asked about before, or its possessive.
	englishPronoun = regexp.MustCompile(`(?i)\b(it|he|she|they|him|them|its|his|her|their)\b`)
)

// englishDeterminers open a noun phrase.
var englishDeterminers = map[string]bool{"the": true, "a": true, "an": true, "this": true, "that": true, "these": true, "those": true}

// englishTopic is Topic for an English question.
func englishTopic(q string) string {
	q = strings.TrimSpace(q)
	if m := englishIs.FindStringSubmatch(q); m != nil {
		return strings.TrimSpace(m[1])
	}
	if m := englishWhich.FindStringSubmatch(q); m != nil {
		return "the " + strings.ToLower(m[1])
	}
	if m := englishAux.FindStringSubmatch(q); m != nil {
		// The subject runs to the first lower-case word after its head: "the FAA propose" → "the FAA",
		// "the Boeing 737 MAX be" → "the Boeing 737 MAX".
		var np []string
		for i, w := range strings.Fields(m[1]) {
			lower := w == strings.ToLower(w) && !strings.ContainsFunc(w, unicode.IsDigit)
			if i == 0 && englishDeterminers[strings.ToLower(w)] {
				np = append(np, w)
				continue
			}
			if lower && len(np) > 0 && !(len(np) == 1 && englishDeterminers[strings.ToLower(np[0])]) {
				break
			}
			if lower && englishPronoun.MatchString(w) {
				return ""
			}
			np = append(np, w)
			if lower {
				break // "the engine": one common noun after the determiner
			}
		}
		if len(np) == 0 || len(np) == 1 && englishDeterminers[strings.ToLower(np[0])] {
			return ""
		}
		return strings.Join(np, " ")
	}
	return ""
}

// standaloneEnglish is Standalone for an English follow-up: its first pronoun replaced by prev's topic.
func standaloneEnglish(q, prev string) (string, string) {
	loc := englishPronoun.FindStringSubmatchIndex(q)
	if loc == nil {
		return q, ""
	}
	topic := englishTopic(prev)
	if topic == "" || englishPronoun.MatchString(topic) || names(q, topic) {
		return q, ""
	}
	pron := strings.ToLower(q[loc[2]:loc[3]])
	rep := topic
	switch pron {
	case "its", "his", "their":
		rep = possessive(topic)
	case "her":
		// "her" is possessive before a noun ("her role"), an object at the end or before a preposition.
		if rest := strings.Fields(q[loc[3]:]); len(rest) > 0 && !slices.Contains([]string{"to", "in", "at", "as", "for", "from", "with", "by", "on", "of"}, strings.ToLower(strings.Trim(rest[0], "?.!,"))) {
			rep = possessive(topic)
		}
	}
	if loc[2] == 0 {
		rep = strings.ToUpper(rep[:1]) + rep[1:]
	}
	return q[:loc[2]] + rep + q[loc[3]:], topic
}

// names reports whether q already names topic (its words but a determiner, in order): then a pronoun of q
// stands for something else ("By when must the FAA receive comments on it?" after "What does the FAA
// propose …?" asks of the proposal, not of the FAA).
func names(q, topic string) bool {
	var words []string
	for _, w := range strings.Fields(strings.ToLower(topic)) {
		if !englishDeterminers[w] {
			words = append(words, w)
		}
	}
	return len(words) > 0 && strings.Contains(strings.ToLower(q), strings.Join(words, " "))
}

// possessive returns the possessive of a noun phrase ("Mozilla's", "the trustees'").
func possessive(np string) string {
	if strings.HasSuffix(np, "s") && np != strings.ToUpper(np) {
		return np + "'"
	}
	return np + "'s"
}

// Previous returns the last question the user asked in history, made standalone against the ones before
// it (Resolve, in turn from the first: "그 보고서는 누가 작성했나요?" after "… 검토보고서가 있나요?" is about
// the review report), or "" when history holds none.
func Previous(history []rag.Turn) string {
	prev := ""
	for _, t := range history {
		if t.Role != rag.RoleUser {
			continue
		}
		c := strings.TrimSpace(textproc.Normalize(t.Content))
		if c == "" {
			continue
		}
		if prev != "" {
			c, _ = Resolve(c, prev)
		}
		prev = c
	}
	return prev
}
