package textproc

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestIndexTerms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"EnglishStemmed", "Experimental Wings", []string{"experiment", "wing"}},
		{"StopWordsKept", "the flow of air", []string{"the", "flow", "of", "air"}},
		{"Possessive", "the aircraft's wings don't", []string{"the", "aircraft", "wing", "dont"}},
		{"HangulBigramsAndWord", "인덱스", []string{"인덱스", "인덱", "덱스"}},
		{"HangulOneSyllable", "물", []string{"물"}},
		{"HangulTwoSyllables", "농민", []string{"농민", "농민"}},
		{"HangulParticleStripped", "임종석이", []string{"임종석이", "임종석", "임종", "종석"}},
		{"HangulStemKeepsTwoSyllables", "국가가 국가", []string{"국가가", "국가", "국가", "국가", "국가", "국가_국가"}},
		{"HangulEnding", "주도한", []string{"주도한", "주도", "주도"}},
		{"HangulPlural", "학생들이", []string{"학생들이", "학생", "학생"}},
		{"HangulNothingToStrip", "지명수배", []string{"지명수배", "지명", "명수", "수배"}},
		{"HangulPairs", "농민 폭력 시위를", []string{"농민", "농민", "폭력", "폭력", "농민_폭력", "시위를", "시위", "시위", "폭력_시위"}},
		{"HangulPairBrokenByStopWord", "농민 및 시위", []string{"농민", "농민", "및", "시위", "시위"}},
		{"HangulPairBrokenByOtherToken", "농민 2 시위", []string{"농민", "농민", "2", "시위", "시위"}},
		{"SpecLetterDigit", "D80", []string{"d80"}},
		{"SpecDashedNumbers", "25-180-12", []string{"25-180-12", "25", "180", "12"}},
		{"SpecSuperscriptNFKC", "0.7m³", []string{"0.7m3"}},
		{"KoreanAmount", "1000만원", []string{"1000만원", "1000", "만원", "만원"}},
		{"KoreanAmountDigitGroups", "1,000만원", []string{"1000만원", "1000", "만원", "만원"}},
		{"Decimal", "3.14", []string{"3.14"}},
		{"Date", "2024-01-15", []string{"2024-01-15", "2024", "01", "15"}},
		{"Version", "v1.2", []string{"v1.2"}},
		{"YearCounter", "1989년", []string{"1989년", "1989", "년"}},
		{"Percent", "50%", []string{"50%", "50"}},
		{"PercentWithParticle", "1%랑", []string{"1%랑", "1%", "1", "랑"}},
		{"InitialsJoined", "A/B 테스트", []string{"a/b", "ab", "테스트", "테스", "스트"}},
		{"PercentRange", "50%-60%", []string{"50%-60%", "50%", "50", "60%", "60"}},
		{"ListCommaSeparates", "1,2", []string{"1", "2"}},
		{"CPlusPlus", "C++ and C#", []string{"c++", "and", "c#"}},
		{"Hyphenated", "high-speed", []string{"high-speed", "high", "speed"}},
		{"HyphenatedStemmed", "boundary-layers", []string{"boundari-layer", "boundari", "layer"}},
		{"LoneLetterPartDropped", "x-ray", []string{"x-ray", "ray"}},
		{"LetterDigitSplitWhenLong", "covid19", []string{"covid19", "covid", "19"}},
		{"LetterDigitKeptWhenShort", "mp3", []string{"mp3"}},
		{"TrailingPunctuation", "end. (start)", []string{"end", "start"}},
		{"DottedName", "node.js", []string{"node.js", "node", "js"}},
		{"Mixed", "pgvector HNSW 인덱스(m=16)", []string{"pgvector", "hnsw", "인덱스", "인덱", "덱스", "m", "16"}},
		{"FullwidthNFKC", "ＡＢＣ１２３", []string{"abc123", "abc", "123"}},
		{"CombiningMarkDropped", "cafe\u0301", []string{"café"}},
		{"Han", "漢字語", []string{"漢字語", "漢字", "字語"}},
		{"Empty", " ... ", []string{}},
		{"CamelCaseParts", "parseQuery", []string{"parsequeri", "pars", "queri"}},
		{"PascalCaseAcronym", "HTTPServer", []string{"httpserver", "http", "server"}},
		{"SnakeCaseParts", "parse_query", []string{"pars_queri", "pars", "queri"}},
		{"MethodPathParts", "byteBudget.reserve", []string{"bytebudget.reserv", "bytebudget", "reserv", "byte", "budget"}},
		{"QualifiedMethod", "server.byteBudget.reserve", []string{"server.bytebudget.reserv", "bytebudget.reserv", "server", "bytebudget", "reserv", "byte", "budget"}},
		{"CamelLoneLetterDropped", "getX", []string{"getx", "get"}},
		{"CapitalisedWordNotSplit", "Experimental NASA", []string{"experiment", "nasa"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := IndexTerms(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("IndexTerms(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestQueryTerms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"StopWordsDropped", "what are the effects of the wing", []string{"effect", "wing"}},
		{"OnlyStopWordsKept", "the who", []string{"the", "who"}},
		{"Distinct", "wing wings WING", []string{"wing"}},
		{"KoreanQuestionWordDropped", "임종석이 누구인가?", []string{"임종석이", "임종석", "임종", "종석"}},
		{"KoreanOnlyQuestion", "무엇인가?", []string{"무엇인가", "무엇"}},
		{"Mixed", "pgvector HNSW 인덱스(m=16)", []string{"pgvector", "hnsw", "인덱스", "인덱", "덱스", "m", "16"}},
		{"CompoundPartsKept", "state-of-the-art 2024-01-15", []string{"state-of-the-art", "state", "art", "2024-01-15", "2024", "01", "15"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := QueryTerms(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("QueryTerms(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestTermCharacters checks the store's contract: every term is letters, digits and joiners only, so that a
// full-text tokenizer with the joiners as token characters sees exactly one token.
func TestTermCharacters(t *testing.T) {
	t.Parallel()
	text := "Ünïcode — “quotes”, 'single' [brackets] {braces} <a href=x>link</a> e-mail@example.com " +
		"C:\\path\\file.txt ~tilde `code` 50%+ #tag @user a++b ..dots.. --dash-- 한국어(괄호)와 “인용” 1,234.5원 " +
		"x86_64 ÅNGSTRÖM ǅ ﬁ ½ ⅻ 𝐀𝐁 e\u0301 ٣٤ नमस्ते"
	for _, term := range IndexTerms(text) {
		if term == "" {
			t.Fatalf("empty term in %q", IndexTerms(text))
		}
		for _, r := range term {
			if !unicode.IsLetter(r) && !unicode.IsNumber(r) && !strings.ContainsRune(Joiners, r) {
				t.Errorf("term %q has %q", term, r)
			}
			if unicode.IsUpper(r) {
				t.Errorf("term %q is not lower-case", term)
			}
		}
		if strings.ContainsRune(Joiners, []rune(term)[0]) {
			t.Errorf("term %q starts with a joiner", term)
		}
	}
}

func TestTermWordIndex(t *testing.T) {
	t.Parallel()
	var words []int
	Analyze("the 임종석이 high-speed flow", func(tm Term) { words = append(words, tm.Word) })
	want := []int{0, 1, 1, 1, 1, 2, 2, 2, 3}
	if !slices.Equal(words, want) {
		t.Errorf("word indexes = %v, want %v", words, want)
	}
}

func TestDetectLanguage(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"임종석이 누구인가?", "ko"},
		{"what is HNSW?", "en"},
		{"pgvector HNSW 인덱스는 무엇인가", "ko"},
		{"", "en"},
	}
	for _, tt := range tests {
		if got := DetectLanguage(tt.in); got != tt.want {
			t.Errorf("DetectLanguage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"０.７m³", "0.7m3"},
		{"a \t b\n\nc", "a b\n\nc"},
		{"zero\u200bwidth\ufeff", "zerowidth"},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func BenchmarkIndexTerms(b *testing.B) {
	text := strings.Repeat("임종석은 1989년 2월 15일 여의도 농민 폭력 시위를 주도한 혐의로 지명수배되었다. "+
		"An experimental study of a wing in a propeller slipstream was made (25-180-12, 0.7m³). ", 10)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		IndexTerms(text)
	}
}

func TestKoreanQuestionForms(t *testing.T) {
	// A one-syllable noun with a particle gives the noun; polite question endings make stop-words.
	got := QueryTerms("이 법의 시행일은 언제인가요?")
	want := map[string]bool{"법": true, "시행일": true, "시행": true}
	for _, term := range got {
		delete(want, term)
		if term == "언제인가요" || term == "언제" || term == "인가" {
			t.Errorf("QueryTerms kept the question word %q: %q", term, got)
		}
	}
	if len(want) > 0 {
		t.Errorf("QueryTerms = %q, missing %v", got, want)
	}
	// 이/가 stay on two-syllable words: 국가 is a noun, not 국 + particle.
	for _, term := range IndexTerms("국가") {
		if term == "국" {
			t.Errorf("IndexTerms(국가) = %q: 가 stripped from a noun", IndexTerms("국가"))
		}
	}
}

func TestHyphenCompound(t *testing.T) {
	for term, want := range map[string]bool{
		"boundari-layer": true, "non-linear": true, "a-b-c": true, "вихре-вой": true,
		"boundari": false, "-layer": false, "layer-": false, "a--b": false, "25-180-12": false, "mp3-player": false,
		"a/b": false, "코로나-바이러스": false, "e.g": false,
	} {
		if got := HyphenCompound(term); got != want {
			t.Errorf("HyphenCompound(%q) = %v, want %v", term, got, want)
		}
	}
}
