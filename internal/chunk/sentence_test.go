package chunk

import (
	"slices"
	"strings"
	"testing"
)

func sentenceTexts(s string) []string {
	var out []string
	for _, sp := range Sentences(s) {
		out = append(out, s[sp.Start:sp.End])
	}
	return out
}

func TestSentences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"English", "The wing stalls. Does it recover? Yes!  It does.",
			[]string{"The wing stalls.", "Does it recover?", "Yes!", "It does."}},
		{"Decimal", "Pi is about 3.14 in value. The end.", []string{"Pi is about 3.14 in value.", "The end."}},
		{"DecimalEndsSentence", "Flutter began at Mach 0.8. It stopped.", []string{"Flutter began at Mach 0.8.", "It stopped."}},
		{"Abbreviations", "Use a tool, e.g. a hammer. Mr. Kim met Dr. Lee at 5 p.m. today. Done.",
			[]string{"Use a tool, e.g. a hammer.", "Mr. Kim met Dr. Lee at 5 p.m. today.", "Done."}},
		{"LowerCaseContinues", "It weighs approx. three tons. Next.", []string{"It weighs approx. three tons.", "Next."}},
		{"Initials", "J. R. R. Tolkien wrote it. Then he slept.", []string{"J. R. R. Tolkien wrote it.", "Then he slept."}},
		{"ListNumbers", "1. Install the tool.\n2. Run it. It works.",
			[]string{"1. Install the tool.", "2. Run it.", "It works."}},
		{"YearEndsSentence", "It was founded in 1999. Then it grew.", []string{"It was founded in 1999.", "Then it grew."}},
		{"Korean", "임종석은 1989년에 검거되었다. 경찰은 12명을 투입했어요. 왜 그랬을까? 몰라!",
			[]string{"임종석은 1989년에 검거되었다.", "경찰은 12명을 투입했어요.", "왜 그랬을까?", "몰라!"}},
		{"KoreanNoSpace", "계획을 세웠다.그리고 실행했다.", []string{"계획을 세웠다.", "그리고 실행했다."}},
		{"KoreanQuote", "그는 \"끝났다.\"라고 말했다. 다음 날 떠났다.", []string{"그는 \"끝났다.\"라고 말했다.", "다음 날 떠났다."}},
		{"KoreanListNumber", "1. 개요\n탄소중립 기본계획은 2023년에 수립되었다. 제2조 1.5배 증가.",
			[]string{"1. 개요", "탄소중립 기본계획은 2023년에 수립되었다.", "제2조 1.5배 증가."}},
		{"ClosingQuote", "He said \"stop.\" She left.", []string{"He said \"stop.\"", "She left."}},
		{"Ideographic", "東京に行った。大阪にも行った。", []string{"東京に行った。", "大阪にも行った。"}},
		{"Ellipsis", "Wait... what happened? Nothing.", []string{"Wait...", "what happened?", "Nothing."}},
		{"DetachedPeriod", "a wing in a slipstream . an experimental study was made .",
			[]string{"a wing in a slipstream .", "an experimental study was made ."}},
		{"InsideQuotation", "그는 \"뭔 말이 많아. 나라 팔아먹었지.\"라고 말했다. 다음 문장.",
			[]string{"그는 \"뭔 말이 많아. 나라 팔아먹었지.\"라고 말했다.", "다음 문장."}},
		{"CurlyQuotation", "He wrote “It works. It is fast.” Then he left.",
			[]string{"He wrote “It works. It is fast.”", "Then he left."}},
		{"StrayQuote", "The screen is 5\" wide. " + strings.Repeat("Filler words here. ", 40) + "End.",
			nil},
		{"LineBreaks", "  first line\n\n second line  ", []string{"first line", "second line"}},
		{"NoTerminator", "a heading without a period", []string{"a heading without a period"}},
		{"Empty", " \n ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := sentenceTexts(tt.in)
			if tt.name == "StrayQuote" {
				// A stray quotation mark holds sentences together for a while, then no longer.
				if len(got) < 5 || len(got) > 30 || got[len(got)-1] != "End." {
					t.Errorf("stray quote: got %d sentences %q", len(got), got)
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Sentences(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}
