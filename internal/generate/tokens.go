package generate

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// TokenEncoding is the tokenizer that budgets are counted with. The providers' own tokenizers differ
// (Gemini's and Claude's are not public); cl100k_base counts Korean a little high, which keeps a budget
// on the safe side.
const TokenEncoding = "cl100k_base"

var (
	tokOnce sync.Once
	tokEnc  *tiktoken.Tiktoken
)

// loadTokenizer reads the encoding from the BPE files compiled into the binary
// (github.com/pkoukk/tiktoken-go-loader): tiktoken-go would otherwise download them at run time.
func loadTokenizer() *tiktoken.Tiktoken {
	tokOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		enc, err := tiktoken.GetEncoding(TokenEncoding)
		if err == nil {
			tokEnc = enc
		}
	})
	return tokEnc
}

// WarmTokenizer loads the tokenizer (about half a second, once per process) so that the first question
// does not wait for it. Generators call it in the background when they are created.
func WarmTokenizer() { loadTokenizer() }

// CountTokens counts the tokens of s with TokenEncoding, or estimates them with EstimateTokens if the
// encoding cannot be loaded.
func CountTokens(s string) int {
	if s == "" {
		return 0
	}
	if enc := loadTokenizer(); enc != nil {
		return len(enc.EncodeOrdinary(s))
	}
	return EstimateTokens(s)
}

// EstimateTokens is the fallback count: a quarter of the bytes of ASCII text, one token per Hangul, Han or
// kana character, half a token per other character; never less than the count of words.
func EstimateTokens(s string) int {
	var ascii, cjk, other, words int
	inWord := false
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			ascii++
		case unicode.In(r, unicode.Hangul, unicode.Han, unicode.Hiragana, unicode.Katakana):
			cjk++
		default:
			other++
		}
		if unicode.IsSpace(r) {
			inWord = false
		} else if !inWord {
			inWord = true
			words++
		}
	}
	return max((ascii+3)/4+cjk+(other+1)/2, words)
}
