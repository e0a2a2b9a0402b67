package generate

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestBPELoader: only cl100k_base is compiled in, and ranks that do not match the published checksum are
// refused rather than counted with.
func TestBPELoader(t *testing.T) {
	ranks, err := bpeLoader{}.LoadTiktokenBpe("https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken")
	if err != nil || len(ranks) != 100_256 || ranks["hello"] == 0 {
		t.Fatalf("%d ranks, err %v", len(ranks), err)
	}
	if _, err := (bpeLoader{}).LoadTiktokenBpe("o200k_base.tiktoken"); err == nil {
		t.Error("o200k_base loaded, but it is not compiled in")
	}
	if _, err := readBPE(cl100kBase, "0000"); err == nil {
		t.Error("ranks with a wrong checksum accepted")
	}
}

// TestCountTokensLongRuns: text with spaces is counted exactly as the encoder counts it whole, and a run
// without spaces far longer than maxRunRunes is counted in pieces at most one token per cut above the
// whole count (and never below it).
func TestCountTokensLongRuns(t *testing.T) {
	enc := loadTokenizer()
	if enc == nil {
		t.Fatal("tokenizer not loaded")
	}
	prose := strings.Repeat("개정법률은 공포 후 6개월이 경과한 날부터 시행한다. The agency estimates the costs. ", 200)
	if got, want := CountTokens(prose), len(enc.EncodeOrdinary(prose)); got != want {
		t.Errorf("prose: %d tokens, the encoder counts %d", got, want)
	}
	for _, run := range []string{strings.Repeat("가", 3000), strings.Repeat("ab", 1500), strings.Repeat("x", maxRunRunes), strings.Repeat("x", maxRunRunes+1)} {
		whole := len(enc.EncodeOrdinary(run))
		cuts := (utf8.RuneCountInString(run) - 1) / maxRunRunes
		if got := CountTokens(run); got < whole || got > whole+cuts {
			t.Errorf("run of %d runes: %d tokens, the encoder counts %d (cuts %d)", utf8.RuneCountInString(run), got, whole, cuts)
		}
	}
}

// BenchmarkCountTokensRun: one run of 16 KiB without spaces (1.15 s a count before runs were cut; about
// 12 ms after, at a load average of 10 on the 2-core development machine).
func BenchmarkCountTokensRun(b *testing.B) {
	s := strings.Repeat("가", 16<<10/3)
	loadTokenizer()
	for b.Loop() {
		CountTokens(s)
	}
}
