package lexicon

import (
	"bytes"
	"compress/gzip"
	"runtime"
	"strings"
	"testing"
)

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDecode(t *testing.T) {
	l, err := decode(gz(t, "0가나\n2다\n1라마\n0나무\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"가나", "가나다", "가라마", "나무"}
	if len(l.end) != len(want) {
		t.Fatalf("%d words, want %d", len(l.end), len(want))
	}
	for i, w := range want {
		if l.word(i) != w || !l.has(w) {
			t.Errorf("word %d = %q (has %v), want %q", i, l.word(i), l.has(w), w)
		}
	}
	for _, w := range []string{"가", "가나다라", "나", "다", ""} {
		if l.has(w) {
			t.Errorf("has(%q) = true", w)
		}
	}
	for _, bad := range []string{"가나\n", "3가나\n", "0가나\n3다\n", "x\n"} {
		if _, err := decode(gz(t, bad)); err == nil || !strings.Contains(err.Error(), "bad word list line") {
			t.Errorf("decode(%q) err = %v, want a bad line", bad, err)
		}
	}
	if _, err := decode([]byte("not gzip")); err == nil {
		t.Error("decode(not gzip) succeeded")
	}
}

// TestEmbedded checks the embedded list: it unpacks, it is sorted and distinct, and every word has two or
// more Hangul syllables.
func TestEmbedded(t *testing.T) {
	l, err := korean()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.end) < 100_000 {
		t.Fatalf("%d words", len(l.end))
	}
	prev := ""
	for i := range l.end {
		w := l.word(i)
		if w <= prev {
			t.Fatalf("word %d %q after %q", i, w, prev)
		}
		n := 0
		for _, r := range w {
			if !syllable(r) {
				t.Fatalf("word %d %q is not Hangul", i, w)
			}
			n++
		}
		if n < 2 {
			t.Fatalf("word %d %q has one syllable", i, w)
		}
		prev = w
	}
}

// BenchmarkFirstUse measures what the first question that nothing matched pays once: unpacking the embedded
// word list. "heap-MB" is the memory the unpacked list keeps.
func BenchmarkFirstUse(b *testing.B) {
	var before, after runtime.MemStats
	var l list
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if l, err = decode(koWords); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/1e6, "heap-MB")
	b.ReportMetric(float64(len(l.end)), "words")
}
