package vindex

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
)

const testDim = 32

func mustBuild(t *testing.T, vecs []float32, dim, n int, seed uint64) *Index {
	t.Helper()
	ix, err := Build(context.Background(), Mem{vecs, dim}, dim, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestBuildCancelled(t *testing.T) {
	vecs, _ := testData(t, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ix, err := Build(ctx, Mem{vecs, testDim}, testDim, 1000, 1); !errors.Is(err, context.Canceled) || ix != nil {
		t.Fatalf("Build after cancel: %v, %v", ix, err)
	}
}

func testData(t *testing.T, n int) (vecs, queries []float32) {
	t.Helper()
	return Clustered(n, 20, testDim, 1, 7)
}

// search is ix.Search over rows in memory; a failure to read them cannot happen.
func search(t *testing.T, ix *Index, q, vecs []float32, ids []int64, k, nprobe, shortlist int, accept func(int32) bool) []Hit {
	t.Helper()
	got, err := ix.Search(q, Mem{vecs, ix.Dim()}, ids, k, nprobe, shortlist, accept)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// searchAll scans every list: the index must then give exactly the exact search's rows and scores.
func searchAll(t *testing.T, ix *Index, q, vecs []float32, k int, accept func(int32) bool) []Hit {
	t.Helper()
	return search(t, ix, q, vecs, nil, k, ix.Lists(), ix.Rows(), accept)
}

func mustAdd(t *testing.T, ix *Index, vecs []float32, n int) *Index {
	t.Helper()
	next, err := ix.Add(Mem{vecs, ix.Dim()}, n)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

func TestSearch(t *testing.T) {
	vecs, queries := testData(t, 3000)
	ix := mustBuild(t, vecs, testDim, 3000, 1)
	if ix.Lists() != ListsFor(3000) || ix.Rows() != 3000 {
		t.Fatalf("lists %d rows %d", ix.Lists(), ix.Rows())
	}
	total := 0
	for _, l := range ix.lists {
		total += len(l)
	}
	if total != 3000 {
		t.Fatalf("lists hold %d rows, want 3000", total)
	}
	t.Run("AllListsIsExact", func(t *testing.T) {
		for i := range 20 {
			q := queries[i*testDim : (i+1)*testDim]
			if got, want := searchAll(t, ix, q, vecs, 10, nil), Exact(q, vecs, testDim, 10); !slices.Equal(got, want) {
				t.Fatalf("query %d: got %v, want %v", i, got, want)
			}
		}
	})
	t.Run("DefaultProbesRecall", func(t *testing.T) {
		var recall float64
		for i := range 20 {
			q := queries[i*testDim : (i+1)*testDim]
			recall += Recall(search(t, ix, q, vecs, nil, 10, ProbesFor(ix.Lists()), 0, nil), Exact(q, vecs, testDim, 10))
		}
		if recall /= 20; recall < 0.9 {
			t.Fatalf("recall@10 %.3f at %d of %d lists", recall, ProbesFor(ix.Lists()), ix.Lists())
		}
	})
	t.Run("Accept", func(t *testing.T) {
		even := func(r int32) bool { return r%2 == 0 }
		q := queries[:testDim]
		got := searchAll(t, ix, q, vecs, 10, even)
		if len(got) != 10 {
			t.Fatalf("got %d hits", len(got))
		}
		for _, h := range got {
			if h.Row%2 != 0 {
				t.Fatalf("odd row %d returned", h.Row)
			}
		}
	})
	t.Run("TiesByID", func(t *testing.T) {
		dup := slices.Clone(vecs[:2*testDim])
		copy(dup[testDim:], dup[:testDim]) // rows 0 and 1 equal
		small := mustBuild(t, dup, testDim, 2, 1)
		ids := []int64{9, 4}
		got := search(t, small, dup[:testDim], dup, ids, 1, 1, 0, nil)
		if len(got) != 1 || got[0].Row != 1 {
			t.Fatalf("got %v, want row 1 (the lower id)", got)
		}
	})
	t.Run("ZeroK", func(t *testing.T) {
		if got := search(t, ix, queries[:testDim], vecs, nil, 0, 4, 0, nil); len(got) != 0 {
			t.Fatalf("got %v", got)
		}
	})
}

func TestAddAndRemap(t *testing.T) {
	vecs, queries := testData(t, 2000)
	half := mustBuild(t, vecs, testDim, 1000, 1)
	full := mustAdd(t, half, vecs, 2000)
	if half.Rows() != 1000 || full.Rows() != 2000 || full.Trained() != 1000 || !full.Stale() || half.Stale() {
		t.Fatalf("rows %d/%d trained %d stale %v/%v", half.Rows(), full.Rows(), full.Trained(), half.Stale(), full.Stale())
	}
	q := queries[:testDim]
	if got, want := searchAll(t, full, q, vecs, 10, nil), Exact(q, vecs, testDim, 10); !slices.Equal(got, want) {
		t.Fatalf("after Add: got %v, want %v", got, want)
	}
	// The old index still sees only its rows.
	for _, h := range searchAll(t, half, q, vecs, 2000, nil) {
		if h.Row >= 1000 {
			t.Fatalf("old index returned row %d", h.Row)
		}
	}
	// Compact away the odd rows.
	newRow := make([]int32, 2000)
	var compact []float32
	for r := range 2000 {
		if r%2 == 1 {
			newRow[r] = -1
			continue
		}
		newRow[r] = int32(r / 2)
		compact = append(compact, vecs[r*testDim:(r+1)*testDim]...)
	}
	re := full.Remap(newRow, 1000)
	if got, want := searchAll(t, re, q, compact, 10, nil), Exact(q, compact, testDim, 10); !slices.Equal(got, want) {
		t.Fatalf("after Remap: got %v, want %v", got, want)
	}
}

func TestFile(t *testing.T) {
	vecs, queries := testData(t, 1500)
	ix := mustBuild(t, vecs, testDim, 1000, 1)
	key := func(r int32) Key { return Key{int64(r) + 100, 1} }
	entry := func(r int32) Entry { return Entry{Key: key(r), Doc: int64(r) / 10, Slot: uint32(r) + 3} }
	var buf bytes.Buffer
	// Row 7 is left out of the file, as a removed row would be.
	header := []byte("the caller's header")
	if err := ix.Write(&buf, header, func(r int32) (Entry, bool) { return entry(r), r != 7 }); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	read := func(t *testing.T) *Saved {
		t.Helper()
		saved, err := Read(bytes.NewReader(file), testDim)
		if err != nil {
			t.Fatal(err)
		}
		return saved
	}

	t.Run("Restore", func(t *testing.T) {
		saved := read(t)
		if string(saved.Header) != string(header) || len(saved.Entries) != 999 {
			t.Fatalf("header %q, %d entries", saved.Header, len(saved.Entries))
		}
		re, reused, err := saved.Restore(Mem{vecs, testDim}, 1500, key)
		if err != nil {
			t.Fatal(err)
		}
		if reused != 999 || re.Rows() != 1500 || re.Trained() != 1000 {
			t.Fatalf("reused %d rows %d trained %d", reused, re.Rows(), re.Trained())
		}
		want := mustAdd(t, ix, vecs, 1500)
		for c := range want.lists {
			if !slices.Equal(re.lists[c], want.lists[c]) || !slices.Equal(re.codes[c], want.codes[c]) || !slices.Equal(re.pcs[c], want.pcs[c]) {
				t.Fatalf("list %d: %v, want %v", c, re.lists[c], want.lists[c])
			}
		}
		q := queries[:testDim]
		if got, want := searchAll(t, re, q, vecs, 10, nil), Exact(q, vecs, testDim, 10); !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("IndexOfEntries", func(t *testing.T) {
		// The file's entries, in file order, are the rows of Index(): the caller lays its rows out so.
		saved := read(t)
		re := saved.Index()
		rows := make([]float32, 0, len(saved.Entries)*testDim)
		for i, e := range saved.Entries {
			r := int(e.Key[0] - 100)
			if e != entry(int32(r)) || r == 7 {
				t.Fatalf("entry %d: %+v", i, e)
			}
			rows = append(rows, vecs[r*testDim:(r+1)*testDim]...)
		}
		if re.Rows() != 999 || re.Check(Mem{rows, testDim}) != nil {
			t.Fatalf("rows %d, check %v", re.Rows(), re.Check(Mem{rows, testDim}))
		}
		q := queries[:testDim]
		if got, want := searchAll(t, re, q, rows, 10, nil), Exact(q, rows, testDim, 10); !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		// Rows of other vectors (a vector file that is not the index's) are refused.
		other := slices.Clone(rows)
		copy(other[testDim*500:], vecs[1200*testDim:1300*testDim])
		if err := re.Check(Mem{other, testDim}); !errors.Is(err, ErrBadFile) {
			t.Fatalf("Check of other rows: %v", err)
		}
	})
	t.Run("StaleKeysAreAssignedAgain", func(t *testing.T) {
		// Every row re-embedded since: no key matches.
		_, reused, err := read(t).Restore(Mem{vecs, testDim}, 1000, func(r int32) Key { return Key{int64(r) + 100, 2} })
		if err != nil || reused != 0 {
			t.Fatalf("reused %d stale rows (%v)", reused, err)
		}
	})
	t.Run("OtherVectorsRefused", func(t *testing.T) {
		other, _ := Clustered(1000, 0, testDim, 1, 99) // same keys, different vectors
		if _, _, err := read(t).Restore(Mem{other, testDim}, 1000, key); !errors.Is(err, ErrBadFile) {
			t.Fatalf("Restore: %v, want ErrBadFile", err)
		}
	})
	bad := map[string][]byte{
		"Empty":        nil,
		"Truncated":    file[:len(file)-9],
		"FlippedByte":  flip(file, len(file)/2),
		"WrongVersion": flip(file, len(magic)),
		"WrongMagic":   flip(file, 0),
		"Trailing":     append(slices.Clone(file), 0),
		"HugeCount":    flip(file, len(magic)+1+16+3), // the entry count's top byte
	}
	for name, b := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := Read(bytes.NewReader(b), testDim); !errors.Is(err, ErrBadFile) {
				t.Fatalf("Read: %v, want ErrBadFile", err)
			}
		})
	}
	t.Run("WrongDim", func(t *testing.T) {
		if _, err := Read(bytes.NewReader(file), testDim+1); !errors.Is(err, ErrBadFile) {
			t.Fatalf("Read: %v, want ErrBadFile", err)
		}
	})
}

func flip(b []byte, i int) []byte {
	c := slices.Clone(b)
	c[i] ^= 0x5a
	return c
}
