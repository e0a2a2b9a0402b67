// Package hash is ragd's offline default embedder: deterministic vectors made by hashing word and
// character n-gram features into a fixed dimension. It needs no weights, no download and no network.
//
// It is lexical, not semantic: two texts are close when they share words, word stems, Korean syllable
// n-grams or character n-grams, not when they mean the same thing in different words ("car" and
// "automobile" are unrelated to it). It complements the keyword index — it rewards shared phrases (word
// bigrams) and partial word matches (character n-grams) that BM25 does not see — and it is the fallback
// that works anywhere. Switch to a neural embedder (Ollama, TEI, OpenAI, Gemini) for semantic search.
//
// # Features
//
// The text goes through the keyword analyzer (package textproc), so the embedder sees the same stemmed
// English words and Korean stems as the index. Stop-words are dropped. Each feature is hashed (64-bit
// FNV-1a, mixed) into one of Dim buckets with a sign taken from the hash (signed hashing, so collisions
// cancel out on average instead of piling up), weighted by its kind and by sub-linear term frequency
// 1+ln(tf), and the vector is L2-normalised, so a dot product is the cosine similarity. The kinds and
// weights were chosen by measuring retrieval on Cranfield and KorQuAD (quality_test.go):
//
//   - stemmed English words (1), word bigrams of neighbouring content words across stop-words (0.5),
//     character 3- to 5-grams of English words with boundary marks ("<win", "ing>"; 0.1 each);
//   - Korean words with the particle stripped (1) and the syllable bigrams of that stem (1);
//   - numbers and spec-like tokens whole ("25-180-12", "1000만원"; 1) and their parts (1).
//
// # Limits
//
// There is no IDF — a vector cannot know the corpus — and at 768 dimensions hash collisions are the main
// loss: a paragraph has several hundred features, so every bucket holds some, and the noise in a cosine is
// about 1/√768 ≈ 0.04, the size of a weak true match. Measured vector-only nDCG@10 rises from 0.86 (768)
// to 0.91 (3072) on KorQuAD. Because of that, fewer and stronger features win: Korean surface forms and
// syllable trigrams, which only repeat what the stem and bigrams say, made results worse; weighting query
// features by the corpus's own IDF and softer length normalisation did not help. Vector-only retrieval is
// below BM25 (Cranfield 0.28 vs 0.36, KorQuAD 0.86 vs 0.95), so with this embedder hybrid search should
// lean on the keyword side: fusion weights of about 0.15–0.2 vector / 0.8–0.85 keyword add to BM25 on
// Cranfield, while 0.7/0.3 (right for a neural embedder) loses 0.03–0.06 nDCG@10 against BM25 alone.
//
// The space is {Provider: "hash", Model: [Model], Dim}; Model changes whenever the features or weights
// change, so that stored vectors of an older version are re-embedded instead of being compared with new ones.
package hash

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// Model is the version of the feature set; it is the Model of the embedding space.
const Model = "v1"

// DefaultDim is the dimension New uses when given 0.
const DefaultDim = 768

// Embedder is the hash embedder. It is safe for concurrent use.
type Embedder struct {
	dim int
	f   features
}

var _ rag.Embedder = (*Embedder)(nil)

// New returns a hash embedder of dim dimensions (DefaultDim when dim is 0). A negative dim panics: it is a
// programming error, configuration is validated before.
func New(dim int) *Embedder {
	if dim == 0 {
		dim = DefaultDim
	}
	if dim < 0 {
		panic(fmt.Sprintf("hash: negative dimension %d", dim))
	}
	return &Embedder{dim: dim, f: defaultFeatures}
}

// Space implements rag.Embedder.
func (e *Embedder) Space() rag.Space { return rag.Space{Provider: "hash", Model: Model, Dim: e.dim} }

// EmbedDocuments implements rag.Embedder. Large batches are spread over the CPUs. It fails only when ctx
// is done.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	workers := min(runtime.GOMAXPROCS(0), len(texts)/32+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var x extractor
			for i := w; i < len(texts); i += workers {
				if i%64 == w && ctx.Err() != nil {
					return
				}
				out[i] = e.embed(&x, texts[i])
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, rag.WrapError(rag.CodeEmbeddingFailed, err, "embedding was cancelled")
	}
	return out, nil
}

// EmbedQuery implements rag.Embedder. Queries get the same features as documents.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, rag.WrapError(rag.CodeEmbeddingFailed, err, "embedding was cancelled")
	}
	var x extractor
	return e.embed(&x, text), nil
}

// features are the kinds of features and their weights; zero weight drops a kind.
type features struct {
	word       float64 // stemmed English word (or any alphabetic word)
	wordBigram float64 // two neighbouring content words
	char       float64 // character n-grams of English words, per n-gram
	charMin    int
	charMax    int
	hangulWord float64 // Korean word, particle stripped
	hangulSurf float64 // Korean word as written, when a particle was stripped
	hangul2    float64 // Korean syllable bigram
	hangul3    float64 // Korean syllable trigram
	number     float64 // number or spec-like token
	part       float64 // factor for the parts of a compound token
	// bigramSkipStops forms word bigrams across dropped stop-words ("boundary of the layer" → boundary+layer).
	bigramSkipStops bool
}

// defaultFeatures are the measured best at 768 dimensions (quality_test.go): at that size collisions are the
// main loss, so redundant kinds (Korean surface forms and syllable trigrams) are left out.
var defaultFeatures = features{
	word:            1,
	wordBigram:      0.5,
	char:            0.1,
	charMin:         3,
	charMax:         5,
	hangulWord:      1,
	hangulSurf:      0,
	hangul2:         1,
	hangul3:         0,
	number:          1,
	part:            1,
	bigramSkipStops: true,
}

// Feature classes, mixed into the hash so that equal strings of different kinds do not collide on purpose.
const (
	clsWord byte = iota + 1
	clsBigram
	clsChar
	clsHangulWord
	clsHangulSurf
	clsHangul2
	clsHangul3
	clsNumber
)

type feature struct {
	h uint64
	w float64
}

// extractor holds scratch buffers for one goroutine.
type extractor struct {
	f     *features
	feats []feature
	word  []textproc.Term // the terms of the current word
	prev  string          // previous content word, for bigrams
	runes []rune
}

func (e *Embedder) embed(x *extractor, text string) []float32 {
	x.extract(&e.f, text)
	vec := make([]float32, e.dim)
	fs := x.feats
	if len(fs) == 0 {
		return vec
	}
	slices.SortFunc(fs, func(a, b feature) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return 0
	})
	acc := make([]float64, e.dim)
	for i := 0; i < len(fs); {
		j := i + 1
		for j < len(fs) && fs[j].h == fs[i].h {
			j++
		}
		v := fs[i].w * (1 + math.Log(float64(j-i)))
		h := fs[i].h
		b := int(h % uint64(e.dim))
		if h>>63 == 1 {
			v = -v
		}
		acc[b] += v
		i = j
	}
	var norm float64
	for _, v := range acc {
		norm += v * v
	}
	if norm == 0 {
		return vec
	}
	inv := 1 / math.Sqrt(norm)
	for i, v := range acc {
		vec[i] = float32(v * inv)
	}
	return vec
}

// extract collects the features of text into x.feats.
func (x *extractor) extract(f *features, text string) {
	x.f = f
	x.feats, x.word, x.prev = x.feats[:0], x.word[:0], ""
	textproc.Analyze(text, func(t textproc.Term) {
		if len(x.word) > 0 && x.word[0].Word != t.Word {
			x.flush()
		}
		x.word = append(x.word, t)
	})
	x.flush()
}

// flush adds the features of the buffered terms of one word.
func (x *extractor) flush() {
	ts := x.word
	if len(ts) == 0 {
		return
	}
	x.word = x.word[:0]
	f := x.f
	head := ts[0]
	if head.Stop {
		if !f.bigramSkipStops {
			x.prev = ""
		}
		return
	}
	primary := head.Text
	switch head.Script {
	case textproc.ScriptAlpha:
		x.add(f.word, clsWord, head.Text)
		x.charGrams(head.Text)
	case textproc.ScriptHangul, textproc.ScriptCJK:
		primary = x.syllables(ts, 1)
	default:
		x.add(f.number, clsNumber, head.Text)
		x.parts(ts[1:])
	}
	x.bigram(primary)
}

// syllables adds the features of a Hangul (or Han/kana) word given as its terms (whole, stem?, bigrams) and
// returns its primary form, the stem when there is one.
func (x *extractor) syllables(ts []textproc.Term, scale float64) string {
	f := x.f
	whole := ts[0].Text
	primary := whole
	for _, t := range ts[1:] {
		switch t.Kind {
		case textproc.KindStem:
			primary = t.Text
		case textproc.KindGram:
			x.add(scale*f.hangul2, clsHangul2, t.Text)
		}
	}
	x.add(scale*f.hangulWord, clsHangulWord, primary)
	if primary != whole {
		x.add(scale*f.hangulSurf, clsHangulSurf, whole)
	}
	if f.hangul3 != 0 {
		x.runes = append(x.runes[:0], []rune(whole)...)
		for i := 0; i+3 <= len(x.runes); i++ {
			x.add(scale*f.hangul3, clsHangul3, string(x.runes[i:i+3]))
		}
	}
	return primary
}

// parts adds the features of the parts of a compound token.
func (x *extractor) parts(ts []textproc.Term) {
	f := x.f
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		if t.Stop {
			continue
		}
		switch t.Script {
		case textproc.ScriptAlpha:
			x.add(f.part*f.word, clsWord, t.Text)
		case textproc.ScriptHangul, textproc.ScriptCJK:
			j := i + 1
			for j < len(ts) && ts[j].Kind != textproc.KindWord && ts[j].Kind != textproc.KindPart {
				j++
			}
			x.syllables(ts[i:j], f.part)
			i = j - 1
		default:
			x.add(f.part*f.number, clsNumber, t.Text)
		}
	}
}

func (x *extractor) add(w float64, cls byte, s string) {
	if w == 0 {
		return
	}
	x.feats = append(x.feats, feature{hashString(cls, s), w})
}

// bigram adds the word bigram of the previous content word and w.
func (x *extractor) bigram(w string) {
	if x.prev != "" && x.f.wordBigram != 0 {
		h := mix(hashString(clsBigram, x.prev)*31 ^ hashString(clsBigram, w))
		x.feats = append(x.feats, feature{h, x.f.wordBigram})
	}
	x.prev = w
}

// charGrams adds the character n-grams of a word marked with boundaries ("<wing>").
func (x *extractor) charGrams(w string) {
	f := x.f
	if f.char == 0 || utf8.RuneCountInString(w) < 2 {
		return
	}
	var buf [64]byte
	s := append(append(append(buf[:0], '<'), w...), '>')
	// rune start offsets
	var starts [66]int
	n := 0
	for i := range string(s) {
		if n == len(starts) {
			break
		}
		starts[n] = i
		n++
	}
	for size := f.charMin; size <= f.charMax; size++ {
		for i := 0; i+size <= n; i++ {
			end := len(s)
			if i+size < n {
				end = starts[i+size]
			}
			x.feats = append(x.feats, feature{hashBytes(clsChar, s[starts[i]:end]), f.char})
		}
	}
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashString(cls byte, s string) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(cls)) * fnvPrime
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return mix(h)
}

func hashBytes(cls byte, s []byte) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(cls)) * fnvPrime
	for _, c := range s {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return mix(h)
}

// mix is the splitmix64 finaliser: FNV's high bits, which give the sign, are poorly mixed on their own.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
