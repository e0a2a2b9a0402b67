package hash

import (
	"archive/zip"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestSpace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		dim  int
		want rag.Space
	}{
		{"Default", 0, rag.Space{Provider: "hash", Model: Model, Dim: 768}},
		{"Custom", 256, rag.Space{Provider: "hash", Model: Model, Dim: 256}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(tt.dim)
			if got := e.Space(); got != tt.want {
				t.Errorf("Space() = %v, want %v", got, tt.want)
			}
			v, err := e.EmbedQuery(context.Background(), "wing slipstream")
			if err != nil {
				t.Fatal(err)
			}
			if len(v) != tt.want.Dim {
				t.Errorf("len = %d, want %d", len(v), tt.want.Dim)
			}
		})
	}
}

func TestNewNegativeDimPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("New(-1) did not panic")
		}
	}()
	New(-1)
}

func TestEmbedDocuments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := New(0)
	texts := []string{
		"An experimental study of a wing in a propeller slipstream.",
		"임종석은 1989년 여의도 농민 폭력 시위를 주도한 혐의로 지명수배되었다.",
		"pgvector HNSW 인덱스(m=16, ef_construction=128)",
		"",
		"the of and", // only stop-words
	}
	vs, err := e.EmbedDocuments(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vs), len(texts))
	}
	t.Run("UnitLength", func(t *testing.T) {
		for i, v := range vs[:3] {
			if n := math.Sqrt(dot(v, v)); math.Abs(n-1) > 1e-5 {
				t.Errorf("text %d: norm %v", i, n)
			}
		}
	})
	t.Run("NoFeaturesIsZero", func(t *testing.T) {
		for _, v := range vs[3:] {
			if dot(v, v) != 0 {
				t.Errorf("vector of a text without features is not zero")
			}
		}
	})
	t.Run("Deterministic", func(t *testing.T) {
		again, err := New(0).EmbedDocuments(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range vs {
			if !slices.Equal(vs[i], again[i]) {
				t.Errorf("text %d embeds differently on a second run", i)
			}
		}
	})
	t.Run("QueryEqualsDocument", func(t *testing.T) {
		q, err := e.EmbedQuery(ctx, texts[1])
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(q, vs[1]) {
			t.Error("EmbedQuery and EmbedDocuments differ for the same text")
		}
	})
	t.Run("Empty", func(t *testing.T) {
		out, err := e.EmbedDocuments(ctx, nil)
		if err != nil || len(out) != 0 {
			t.Errorf("EmbedDocuments(nil) = %d vectors, %v", len(out), err)
		}
	})
}

// TestSimilarity checks that the features do their job: a query is closest to the passage that shares
// its words, stems, Korean stems or character n-grams.
func TestSimilarity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := New(0)
	tests := []struct {
		name, query, near, far string
	}{
		{"EnglishStems", "heated wings", "the wing was heating up", "the rudder was cold"},
		{"WordOrder", "boundary layer", "the boundary layer thickens", "a layer at the boundary of the city"},
		{"KoreanParticles", "임종석이 주도한 시위", "시위를 주도했던 임종석은", "경찰은 학생 5명과 함께 발견했다"},
		{"KoreanCompound", "지명수배", "그는 지명수배되었다", "그는 수배 전단을 보았다"},
		{"SpecToken", "25-180-12 규격", "규격 25-180-12 제품", "규격 30-200-15 제품"},
		{"KoreanAmount", "1000만원", "보증금 1000만원", "보증금 500만원"},
		{"CharGrams", "aeroelasticity", "aeroelastic models", "elastic bands"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := e.EmbedDocuments(ctx, []string{tt.query, tt.near, tt.far})
			if err != nil {
				t.Fatal(err)
			}
			near, far := dot(vs[0], vs[1]), dot(vs[0], vs[2])
			if near <= far {
				t.Errorf("cos(%q, %q) = %.3f, not above cos(…, %q) = %.3f", tt.query, tt.near, near, tt.far, far)
			}
		})
	}
}

func TestCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := New(0)
	if _, err := e.EmbedDocuments(ctx, []string{"a"}); rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !errors.Is(err, context.Canceled) {
		t.Errorf("EmbedDocuments on a cancelled ctx: %v", err)
	}
	if _, err := e.EmbedQuery(ctx, "a"); rag.ErrorCode(err) != rag.CodeEmbeddingFailed {
		t.Errorf("EmbedQuery on a cancelled ctx: %v", err)
	}
}

// handbookChunks returns the text of the handbook fixture (~809k characters) cut into ~1000-character
// pieces, as the chunker's default would.
func handbookChunks(tb testing.TB) []string {
	tb.Helper()
	zr, err := zip.OpenReader(filepath.Join("..", "..", "..", "..", "shared", "fixtures", "docx", "handbook-872p.docx"))
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	var b strings.Builder
	for _, f := range zr.File {
		if f.Name != "word/document.xml" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			tb.Fatal(err)
		}
		dec := xml.NewDecoder(rc)
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				tb.Fatal(err)
			}
			switch el := tok.(type) {
			case xml.CharData:
				b.Write(el)
			case xml.EndElement:
				if el.Name.Local == "p" {
					b.WriteByte('\n')
				}
			}
		}
		rc.Close()
	}
	text := []rune(b.String())
	var chunks []string
	for i := 0; i < len(text); i += 1000 {
		chunks = append(chunks, string(text[i:min(i+1000, len(text))]))
	}
	return chunks
}

func TestHandbookChunks(t *testing.T) {
	t.Parallel()
	chunks := handbookChunks(t)
	if len(chunks) < 700 {
		t.Fatalf("handbook gave %d chunks, expected ~800", len(chunks))
	}
	vs, err := New(0).EmbedDocuments(context.Background(), chunks)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if n := dot(v, v); strings.TrimSpace(chunks[i]) != "" && math.Abs(n-1) > 1e-4 {
			t.Fatalf("chunk %d: squared norm %v", i, n)
		}
	}
}

// BenchmarkEmbedHandbook embeds the whole handbook fixture (~809k characters) per iteration.
func BenchmarkEmbedHandbook(b *testing.B) {
	chunks := handbookChunks(b)
	e := New(0)
	var n int
	for _, c := range chunks {
		n += len(c)
	}
	b.SetBytes(int64(n))
	b.ReportMetric(float64(len(chunks)), "chunks")
	for b.Loop() {
		if _, err := e.EmbedDocuments(context.Background(), chunks); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedQuery embeds a typical question.
func BenchmarkEmbedQuery(b *testing.B) {
	e := New(0)
	ctx := context.Background()
	for b.Loop() {
		if _, err := e.EmbedQuery(ctx, "임종석이 여의도 농민 폭력 시위를 주도한 혐의로 지명수배 된 날은?"); err != nil {
			b.Fatal(err)
		}
	}
}
