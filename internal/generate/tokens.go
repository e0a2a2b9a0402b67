package generate

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed" // the BPE ranks
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
)

// TokenEncoding is the tokenizer that budgets are counted with. The providers' own tokenizers differ
// (Gemini's and Claude's are not public); cl100k_base counts Korean a little high, which keeps a budget
// on the safe side.
const TokenEncoding = "cl100k_base"

var (
	tokOnce sync.Once
	tokEnc  *tiktoken.Tiktoken
)

// cl100kBase is OpenAI's cl100k_base.tiktoken (github.com/openai/tiktoken, MIT licence; see
// cl100k_base.NOTICE), gzip-compressed: 0.8 MB in the binary instead of 1.7 MB, and only the one encoding
// ragd uses rather than the four of github.com/pkoukk/tiktoken-go-loader.
//
//go:embed cl100k_base.tiktoken.gz
var cl100kBase []byte

// cl100kSHA256 is the checksum of the uncompressed file, as tiktoken publishes it.
const cl100kSHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"

// bpeLoader gives tiktoken-go the ranks compiled into the binary; tiktoken-go would otherwise download
// them at run time.
type bpeLoader struct{}

func (bpeLoader) LoadTiktokenBpe(file string) (map[string]int, error) {
	if name := path.Base(file); name != TokenEncoding+".tiktoken" {
		return nil, fmt.Errorf("tokenizer: %s is not compiled in (only %s)", name, TokenEncoding)
	}
	return readBPE(cl100kBase, cl100kSHA256)
}

// readBPE reads gzip-compressed tiktoken ranks ("base64-token rank" lines) and checks their checksum.
func readBPE(gz []byte, sum string) (map[string]int, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if h := sha256.Sum256(raw); hex.EncodeToString(h[:]) != sum {
		return nil, fmt.Errorf("tokenizer: the BPE ranks do not match their checksum")
	}
	ranks := make(map[string]int, 100_256)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		tok, rank, ok := bytes.Cut(sc.Bytes(), []byte{' '})
		if !ok {
			continue
		}
		t, err := base64.StdEncoding.DecodeString(string(tok))
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		r, err := strconv.Atoi(string(rank))
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		ranks[string(t)] = r
	}
	return ranks, sc.Err()
}

// loadTokenizer reads the encoding from the ranks compiled into the binary.
func loadTokenizer() *tiktoken.Tiktoken {
	tokOnce.Do(func() {
		tiktoken.SetBpeLoader(bpeLoader{})
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

// maxRunRunes bounds the run of non-space characters that CountTokens hands the BPE at once. cl100k_base's
// pre-tokenizer keeps a run of letters whole, and merging one piece costs time quadratic in its length
// (4 KiB of one letter took 28 ms, 16 KiB 1.15 s), so a longer run is counted in pieces of this many runes.
// Each cut can add at most about one token to the count (a merge across it is lost): on the safe side of a
// budget. Text with spaces every few hundred characters, i.e. every natural text, is counted exactly.
const maxRunRunes = 128

// CountTokens counts the tokens of s with TokenEncoding, or estimates them with EstimateTokens if the
// encoding cannot be loaded. Its cost is linear in len(s) (see maxRunRunes).
func CountTokens(s string) int {
	if s == "" {
		return 0
	}
	enc := loadTokenizer()
	if enc == nil {
		return EstimateTokens(s)
	}
	n, start, run := 0, 0, 0
	for i, r := range s {
		if unicode.IsSpace(r) {
			run = 0
			continue
		}
		if run == maxRunRunes {
			n += len(enc.EncodeOrdinary(s[start:i]))
			start, run = i, 0
		}
		run++
	}
	return n + len(enc.EncodeOrdinary(s[start:]))
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
