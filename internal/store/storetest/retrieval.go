package storetest

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// spaceC has the dimension of spaceA but is another model: vectors of the two must never mix.
var spaceC = rag.Space{Provider: "test", Model: "c", Dim: 8}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-5 }

func testVectorCandidates(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("OK", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		e0, e1 := basis(spaceA.Dim, 0), basis(spaceA.Dim, 1)
		mix := normalize([]float32{1, 1, 0, 0, 0, 0, 0, 0})
		anti := normalize([]float32{-1, 0, 1, 0, 0, 0, 0, 0})
		commitTexts(t, s, d, spaceA, []string{"one", "two", "three", "four"}, [][]float32{e1, mix, e0, anti})
		chunks, _ := s.ListChunks(t.Context(), alice, d.ID)
		vc := vector(t, s, alice, spaceA, e0, rag.Filter{}, 10)
		if len(vc) != 4 {
			t.Fatalf("%d candidates, want 4", len(vc))
		}
		wantIDs := []int64{chunks[2].ID, chunks[1].ID, chunks[0].ID, chunks[3].ID}
		wantScores := []float64{1, math.Sqrt2 / 2, 0, -math.Sqrt2 / 2}
		for i, x := range vc {
			if x.ChunkID != wantIDs[i] || !near(x.Score, wantScores[i]) {
				t.Errorf("candidate %d = %+v, want chunk %d score %.4f", i, x, wantIDs[i], wantScores[i])
			}
		}
		if vc := vector(t, s, alice, spaceA, e0, rag.Filter{}, 2); len(vc) != 2 || vc[0].ChunkID != wantIDs[0] || vc[1].ChunkID != wantIDs[1] {
			t.Errorf("k=2: %+v", vc)
		}
	})
	t.Run("DimensionMismatch", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		commitTexts(t, s, newDoc(t, s, c.ID, "a.txt"), spaceA, []string{"one"}, nil)
		_, err := s.VectorCandidates(t.Context(), alice, rag.VectorQuery{Space: spaceA, Vector: make([]float32, spaceA.Dim-1), K: 5})
		if !isCode(err, rag.CodeInvalid) {
			t.Fatalf("err = %v, want invalid_request", err)
		}
	})
	t.Run("SpaceWithoutVectors", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		commitTexts(t, s, newDoc(t, s, c.ID, "a.txt"), spaceA, []string{"one"}, nil)
		if vc := vector(t, s, alice, spaceC, basis(spaceC.Dim, 0), rag.Filter{}, 5); len(vc) != 0 {
			t.Fatalf("candidates from another space: %v", vc)
		}
	})
	t.Run("EmptyStore", func(t *testing.T) {
		s := open(t)
		if vc := vector(t, s, alice, spaceA, basis(spaceA.Dim, 0), rag.Filter{}, 5); len(vc) != 0 {
			t.Fatalf("candidates in an empty store: %v", vc)
		}
	})
}

func testKeywordCandidates(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("RareTermOutranksCommon", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		commitTexts(t, s, d, spaceA, []string{
			"river bank walk", "river boats at dawn", "quiet river evening", "flooded meadow grass", "river current speed",
			"mountain trail guide", "river fishing season",
		}, nil)
		chunks, _ := s.ListChunks(t.Context(), alice, d.ID)
		kc := keyword(t, s, alice, "river flooded", rag.Filter{}, 10)
		if len(kc) != 6 {
			t.Fatalf("%d candidates, want the 6 chunks with either word", len(kc))
		}
		if kc[0].ChunkID != chunks[3].ID {
			t.Errorf("top candidate %d, want the chunk with the rare word (%d)", kc[0].ChunkID, chunks[3].ID)
		}
		if slices.ContainsFunc(kc, func(x rag.Candidate) bool { return x.ChunkID == chunks[5].ID }) {
			t.Errorf("a chunk without any query word is a candidate")
		}
		if kc := keyword(t, s, alice, "river flooded", rag.Filter{}, 3); len(kc) != 3 || kc[0].ChunkID != chunks[3].ID {
			t.Errorf("k=3: %+v", kc)
		}
	})
	t.Run("TermFrequencyCounts", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		commitTexts(t, s, d, spaceA, []string{"glacier lake ice cave", "glacier glacier glacier cave", "desert dunes sand wind"}, nil)
		chunks, _ := s.ListChunks(t.Context(), alice, d.ID)
		kc := keyword(t, s, alice, "glacier", rag.Filter{}, 10)
		if len(kc) != 2 || kc[0].ChunkID != chunks[1].ID || !(kc[0].Score > kc[1].Score) {
			t.Errorf("candidates %+v, want chunk %d (three occurrences) strictly first", kc, chunks[1].ID)
		}
	})
	t.Run("AnalyzerWordsAreFound", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		texts := []string{
			"부품 번호 25-180-12 의 납품 일정을 확인합니다.",
			"저장 탱크 용량은 0.7m³ 이며 옥외에 설치한다.",
			"사업 예산 1000만원 을 배정하였다.",
			"The engine is written in C++ for speed.",
			"탄소중립 기본계획 을 수립한다.",
			"Chunking respects sentence boundaries.",
			"※ 참고자료\n문 의 처\n02)6788-5533", // a letter-spaced label (textproc.SpacedWords)
			"Unrelated filler text about gardens.",
		}
		commitTexts(t, s, d, spaceA, texts, nil)
		chunks, _ := s.ListChunks(t.Context(), alice, d.ID)
		for i, word := range []string{"25-180-12", "0.7m³", "1000만원", "C++", "탄소중립", "sentence boundaries", "문의처"} {
			kc := keyword(t, s, alice, word, rag.Filter{}, 10)
			if len(kc) == 0 || kc[0].ChunkID != chunks[i].ID {
				t.Errorf("%q: candidates %+v, want chunk %d first", word, kc, chunks[i].ID)
			}
		}
	})
	t.Run("SyntaxCharactersAreLiteral", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		commitTexts(t, s, newDoc(t, s, c.ID, "a.txt"), spaceA, []string{"plain words here"}, nil)
		terms := []string{"and", "or", "not", "near", `"`, `""`, "*", "(x)", "a:b", "-", "^", "'", "\\", "&|!", "NEAR(a b)", "{x}", "a'b"}
		terms = append(terms, queryTerms("words")...)
		kc, err := s.KeywordCandidates(t.Context(), alice, rag.KeywordQuery{Terms: terms, K: 10})
		if err != nil {
			t.Fatalf("KeywordCandidates: %v", err)
		}
		if len(kc) != 1 {
			t.Errorf("%d candidates, want the one chunk with 'words'", len(kc))
		}
	})
	t.Run("NoTerms", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		commitTexts(t, s, newDoc(t, s, c.ID, "a.txt"), spaceA, []string{"plain words here"}, nil)
		for _, terms := range [][]string{nil, {}, {""}} {
			kc, err := s.KeywordCandidates(t.Context(), alice, rag.KeywordQuery{Terms: terms, K: 10})
			if err != nil || len(kc) != 0 {
				t.Errorf("terms %q: %v, %v; want no candidates", terms, kc, err)
			}
		}
	})
	t.Run("UnknownTerm", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		commitTexts(t, s, newDoc(t, s, c.ID, "a.txt"), spaceA, []string{"plain words here"}, nil)
		if kc := keyword(t, s, alice, "zyxwvut", rag.Filter{}, 10); len(kc) != 0 {
			t.Errorf("candidates for a word no chunk has: %v", kc)
		}
	})
}

func testHits(t *testing.T, open func(t *testing.T) rag.Store) {
	s := open(t)
	c := mustCollection(t, s, "docs")
	d := newDoc(t, s, c.ID, "a.txt", func(d *rag.Document) { d.Metadata = map[string]any{"week": float64(3)} })
	commitTexts(t, s, d, spaceA, []string{"first", "second", "third"}, nil)
	d = getDoc(t, s, d.ID)
	chunks, _ := s.ListChunks(t.Context(), alice, d.ID)
	ids := []int64{chunks[2].ID, 987654321, chunks[0].ID}
	hits, err := s.Hits(t.Context(), rag.LocalPrincipal, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ID != chunks[2].ID || hits[1].ID != chunks[0].ID {
		t.Fatalf("Hits = %+v, want chunks 2 and 0 in that order", hits)
	}
	h := hits[0]
	if h.Text != "third" || h.DocumentID != d.ID || h.Version != 1 || h.Index != 2 || h.PageStart != 3 || h.Section != "Part 2" ||
		h.CollectionID != c.ID || h.ExternalID != "a.txt" || h.Title != d.Title || h.Source != d.Source ||
		h.MediaType != d.MediaType || !jsonEqual(h.Metadata, d.Metadata) || !h.UpdatedAt.Equal(d.UpdatedAt) ||
		h.Score != 0 || h.VectorScore != 0 || h.KeywordScore != 0 || h.VectorRank != 0 || h.KeywordRank != 0 {
		t.Errorf("hit = %+v", h)
	}
	if hits, err := s.Hits(t.Context(), rag.LocalPrincipal, nil); err != nil || len(hits) != 0 {
		t.Errorf("Hits(nil) = %v, %v", hits, err)
	}
}

func testSpaces(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("ReEmbedIntoSecondSpace", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		commitTexts(t, s, d, spaceA, []string{"one", "two", "three"}, nil)
		other := newDoc(t, s, c.ID, "b.txt")
		commitTexts(t, s, other, spaceA, []string{"four"}, nil)
		all, _ := s.ListChunks(t.Context(), alice, d.ID)
		more, _ := s.ListChunks(t.Context(), alice, other.ID)
		all = append(all, more...)

		todo, err := s.ChunksWithoutVector(t.Context(), spaceB, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(todo) != 4 {
			t.Fatalf("ChunksWithoutVector: %d, want 4", len(todo))
		}
		for i, ch := range todo {
			if ch.ID != all[i].ID || ch.Text != all[i].Text || ch.DocumentID != all[i].DocumentID {
				t.Errorf("work item %d = %+v, want %+v", i, ch, all[i])
			}
		}
		page, err := s.ChunksWithoutVector(t.Context(), spaceB, all[1].ID, 2)
		if err != nil || len(page) != 2 || page[0].ID != all[2].ID || page[1].ID != all[3].ID {
			t.Errorf("after %d limit 2 = %v, %v", all[1].ID, page, err)
		}
		if none, err := s.ChunksWithoutVector(t.Context(), spaceA, 0, 10); err != nil || len(none) != 0 {
			t.Errorf("space A work list = %v, %v; want empty", none, err)
		}

		if err := s.PutVectors(t.Context(), spaceB, map[int64][]float32{
			all[0].ID: basis(spaceB.Dim, 0), all[1].ID: basis(spaceB.Dim, 1), 987654321: basis(spaceB.Dim, 2),
		}); err != nil {
			t.Fatal(err)
		}
		todo, err = s.ChunksWithoutVector(t.Context(), spaceB, 0, 10)
		if err != nil || len(todo) != 2 || todo[0].ID != all[2].ID || todo[1].ID != all[3].ID {
			t.Errorf("after PutVectors: %v, %v; want chunks 2 and 3", todo, err)
		}
		vc := vector(t, s, alice, spaceB, basis(spaceB.Dim, 1), rag.Filter{}, 10)
		if len(vc) != 2 || vc[0].ChunkID != all[1].ID || !near(vc[0].Score, 1) || vc[1].ChunkID != all[0].ID || !near(vc[1].Score, 0) {
			t.Errorf("space B candidates = %+v", vc)
		}
		if vc := vector(t, s, alice, spaceA, textVector(spaceA.Dim, "one"), rag.Filter{}, 10); len(vc) != 4 || vc[0].ChunkID != all[0].ID || !near(vc[0].Score, 1) {
			t.Errorf("space A candidates = %+v", vc)
		}
		st, err := s.SpaceStats(t.Context())
		if err != nil || st.Chunks != 4 || len(st.Spaces) != 2 || st.Spaces[spaceA.ID()] != 4 || st.Spaces[spaceB.ID()] != 2 {
			t.Errorf("SpaceStats = %+v, %v", st, err)
		}

		// Re-embedding a chunk again replaces its vector.
		if err := s.PutVectors(t.Context(), spaceB, map[int64][]float32{all[1].ID: basis(spaceB.Dim, 3)}); err != nil {
			t.Fatal(err)
		}
		vc = vector(t, s, alice, spaceB, basis(spaceB.Dim, 3), rag.Filter{}, 10)
		if len(vc) != 2 || vc[0].ChunkID != all[1].ID || !near(vc[0].Score, 1) {
			t.Errorf("after replacing a vector: %+v", vc)
		}
		if st, _ := s.SpaceStats(t.Context()); st.Spaces[spaceB.ID()] != 2 {
			t.Errorf("replacing a vector changed the count: %+v", st)
		}
	})
	t.Run("DropSpace", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		commitTexts(t, s, d, spaceA, []string{"one", "two", "three"}, nil)
		chunks, _ := s.ListChunks(t.Context(), alice, d.ID)
		vb := map[int64][]float32{}
		for i, ch := range chunks {
			vb[ch.ID] = basis(spaceB.Dim, i)
		}
		if err := s.PutVectors(t.Context(), spaceB, vb); err != nil {
			t.Fatal(err)
		}
		for _, sp := range []rag.Space{spaceA, spaceB} {
			if err := s.CacheEmbeddings(t.Context(), sp, map[string][]float32{"h1": basis(sp.Dim, 0)}); err != nil {
				t.Fatal(err)
			}
		}
		// Searched before the drop, so that any in-memory copy of the space is loaded.
		if vc := vector(t, s, alice, spaceB, basis(spaceB.Dim, 0), rag.Filter{}, 10); len(vc) != 3 {
			t.Fatalf("space B before the drop: %d candidates, want 3", len(vc))
		}

		n, err := s.DropSpace(t.Context(), spaceB)
		if err != nil || n != 3 {
			t.Fatalf("DropSpace(B) = %d, %v; want 3 vectors", n, err)
		}
		if vc := vector(t, s, alice, spaceB, basis(spaceB.Dim, 0), rag.Filter{}, 10); len(vc) != 0 {
			t.Errorf("space B after the drop: %+v, want no candidates", vc)
		}
		st, err := s.SpaceStats(t.Context())
		if err != nil || st.Chunks != 3 || len(st.Spaces) != 1 || st.Spaces[spaceA.ID()] != 3 {
			t.Errorf("SpaceStats after the drop = %+v, %v; want only space A with 3", st, err)
		}
		if got, err := s.CachedEmbeddings(t.Context(), spaceB, []string{"h1"}); err != nil || len(got) != 0 {
			t.Errorf("space B cache after the drop = %v, %v; want empty", got, err)
		}
		if got, err := s.CachedEmbeddings(t.Context(), spaceA, []string{"h1"}); err != nil || len(got) != 1 {
			t.Errorf("space A cache after dropping B = %v, %v; want its entry", got, err)
		}
		if vc := vector(t, s, alice, spaceA, textVector(spaceA.Dim, "two"), rag.Filter{}, 10); len(vc) != 3 || vc[0].ChunkID != chunks[1].ID {
			t.Errorf("space A after dropping B: %+v", vc)
		}
		if todo, err := s.ChunksWithoutVector(t.Context(), spaceB, 0, 10); err != nil || len(todo) != 3 {
			t.Errorf("space B work list after the drop: %d, %v; want 3", len(todo), err)
		}
		// The space can be filled again, and dropping what is not there removes nothing.
		if err := s.PutVectors(t.Context(), spaceB, map[int64][]float32{chunks[2].ID: basis(spaceB.Dim, 2)}); err != nil {
			t.Fatal(err)
		}
		if vc := vector(t, s, alice, spaceB, basis(spaceB.Dim, 2), rag.Filter{}, 10); len(vc) != 1 || vc[0].ChunkID != chunks[2].ID {
			t.Errorf("space B refilled: %+v", vc)
		}
		if n, err := s.DropSpace(t.Context(), rag.Space{Provider: "none", Model: "never", Dim: 4}); err != nil || n != 0 {
			t.Errorf("DropSpace(unknown) = %d, %v; want 0, nil", n, err)
		}
	})
	t.Run("SameDimensionSpacesDoNotMix", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		commitTexts(t, s, d, spaceA, []string{"one", "two"}, [][]float32{basis(8, 0), basis(8, 1)})
		chunks, _ := s.ListChunks(t.Context(), alice, d.ID)
		if err := s.PutVectors(t.Context(), spaceC, map[int64][]float32{chunks[1].ID: basis(8, 0)}); err != nil {
			t.Fatal(err)
		}
		a := vector(t, s, alice, spaceA, basis(8, 0), rag.Filter{}, 10)
		cc := vector(t, s, alice, spaceC, basis(8, 0), rag.Filter{}, 10)
		if len(a) != 2 || a[0].ChunkID != chunks[0].ID {
			t.Errorf("space A: %+v", a)
		}
		if len(cc) != 1 || cc[0].ChunkID != chunks[1].ID || !near(cc[0].Score, 1) {
			t.Errorf("space C: %+v", cc)
		}
	})
	t.Run("PutVectorsDimensionMismatch", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		commitTexts(t, s, d, spaceA, []string{"one", "two"}, nil)
		chunks, _ := s.ListChunks(t.Context(), alice, d.ID)
		err := s.PutVectors(t.Context(), spaceB, map[int64][]float32{chunks[0].ID: basis(spaceB.Dim, 0), chunks[1].ID: basis(spaceB.Dim+1, 0)})
		if !isCode(err, rag.CodeInvalid) {
			t.Fatalf("err = %v, want invalid_request", err)
		}
		if st, _ := s.SpaceStats(t.Context()); st.Spaces[spaceB.ID()] != 0 {
			t.Errorf("a rejected PutVectors stored vectors: %+v", st)
		}
	})
	t.Run("NewVersionDropsOtherSpaces", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		commitTexts(t, s, d, spaceA, []string{"one"}, nil)
		chunks, _ := s.ListChunks(t.Context(), alice, d.ID)
		if err := s.PutVectors(t.Context(), spaceB, map[int64][]float32{chunks[0].ID: basis(spaceB.Dim, 0)}); err != nil {
			t.Fatal(err)
		}
		commitTexts(t, s, d, spaceA, []string{"uno", "dos"}, nil)
		st, err := s.SpaceStats(t.Context())
		if err != nil || st.Chunks != 2 || st.Spaces[spaceA.ID()] != 2 || st.Spaces[spaceB.ID()] != 0 {
			t.Errorf("SpaceStats = %+v, %v", st, err)
		}
		if todo, _ := s.ChunksWithoutVector(t.Context(), spaceB, 0, 10); len(todo) != 2 {
			t.Errorf("space B work list: %d, want 2", len(todo))
		}
	})
	t.Run("EmptyStats", func(t *testing.T) {
		s := open(t)
		st, err := s.SpaceStats(t.Context())
		if err != nil || st.Chunks != 0 || len(st.Spaces) != 0 {
			t.Errorf("SpaceStats = %+v, %v", st, err)
		}
	})
}

func testEmbeddingCache(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("OK", func(t *testing.T) {
		s := open(t)
		v1 := []float32{0.1, -0.2, 0.3, float32(math.Pi) / 10}
		v2 := []float32{1e-7, 0, -1, 0.5}
		if err := s.CacheEmbeddings(t.Context(), spaceB, map[string][]float32{hashOf("a"): v1, hashOf("b"): v2}); err != nil {
			t.Fatal(err)
		}
		if err := s.CacheEmbeddings(t.Context(), spaceB, map[string][]float32{hashOf("a"): v1}); err != nil {
			t.Fatalf("caching again: %v", err)
		}
		got, err := s.CachedEmbeddings(t.Context(), spaceB, []string{hashOf("a"), hashOf("missing"), hashOf("b")})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !slices.Equal(got[hashOf("a")], v1) || !slices.Equal(got[hashOf("b")], v2) {
			t.Errorf("CachedEmbeddings = %v", got)
		}
		other := rag.Space{Provider: "test", Model: "other", Dim: 4}
		if got, err := s.CachedEmbeddings(t.Context(), other, []string{hashOf("a")}); err != nil || len(got) != 0 {
			t.Errorf("another space sees the cache: %v, %v", got, err)
		}
		if got, err := s.CachedEmbeddings(t.Context(), spaceB, nil); err != nil || len(got) != 0 {
			t.Errorf("no hashes: %v, %v", got, err)
		}
	})
	t.Run("ManyHashes", func(t *testing.T) {
		s := open(t)
		vecs := map[string][]float32{}
		var hashes []string
		for i := range 1500 {
			h := hashOf(fmt.Sprint(i))
			vecs[h] = textVector(spaceB.Dim, h)
			hashes = append(hashes, h)
		}
		if err := s.CacheEmbeddings(t.Context(), spaceB, vecs); err != nil {
			t.Fatal(err)
		}
		got, err := s.CachedEmbeddings(t.Context(), spaceB, hashes)
		if err != nil || len(got) != 1500 {
			t.Fatalf("CachedEmbeddings: %d, %v", len(got), err)
		}
	})
	t.Run("DimensionMismatch", func(t *testing.T) {
		s := open(t)
		err := s.CacheEmbeddings(t.Context(), spaceB, map[string][]float32{hashOf("a"): make([]float32, spaceB.Dim+1)})
		if !isCode(err, rag.CodeInvalid) {
			t.Fatalf("err = %v, want invalid_request", err)
		}
	})
}

func testConcurrency(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("ConcurrentWriters", func(t *testing.T) {
		s := open(t)
		const writers, perWriter = 4, 6
		var wg sync.WaitGroup
		errs := make(chan error, writers*perWriter*8)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := t.Context()
				for i := range perWriter {
					coll, err := s.EnsureCollection(ctx, "shared", alice.ID)
					if err != nil {
						errs <- fmt.Errorf("EnsureCollection: %w", err)
						return
					}
					content := fmt.Sprintf("writer %d document %d", w, i)
					if err := s.PutBlob(ctx, hashOf(content), []byte(content)); err != nil {
						errs <- fmt.Errorf("PutBlob: %w", err)
						return
					}
					d := &rag.Document{CollectionID: coll.ID, ExternalID: fmt.Sprintf("w%d/%d", w, i), Owner: alice.ID, PendingHash: hashOf(content)}
					if err := s.CreateDocument(ctx, d); err != nil {
						errs <- fmt.Errorf("CreateDocument: %w", err)
						return
					}
					if err := s.SetDocumentState(ctx, d.ID, rag.DocumentState{Status: rag.StatusProcessing, Stage: rag.StageEmbed, Progress: 0.5}); err != nil {
						errs <- fmt.Errorf("SetDocumentState: %w", err)
						return
					}
					texts := []string{content + " shared corpus", "second chunk of " + content}
					if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: hashOf(content), Title: content,
						MediaType: "text/plain", Space: spaceA, Chunks: chunksOf(spaceA, texts, nil)}); err != nil {
						errs <- fmt.Errorf("CommitVersion: %w", err)
						return
					}
					if i%3 == 2 {
						if err := s.DeleteDocument(ctx, alice, d.ID); err != nil {
							errs <- fmt.Errorf("DeleteDocument: %w", err)
							return
						}
					}
					if _, err := s.KeywordCandidates(ctx, alice, rag.KeywordQuery{Terms: queryTerms("shared corpus"), K: 5}); err != nil {
						errs <- fmt.Errorf("KeywordCandidates: %w", err)
						return
					}
					if _, err := s.VectorCandidates(ctx, alice, rag.VectorQuery{Space: spaceA, Vector: basis(spaceA.Dim, 0), K: 5}); err != nil {
						errs <- fmt.Errorf("VectorCandidates: %w", err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		const kept = writers * (perWriter - perWriter/3)
		page, err := s.ListDocuments(t.Context(), alice, rag.DocumentQuery{})
		if err != nil || page.Total != kept {
			t.Fatalf("ListDocuments total = %v, %v; want %d", page, err, kept)
		}
		st, err := s.SpaceStats(t.Context())
		if err != nil || st.Chunks != 2*kept || st.Spaces[spaceA.ID()] != 2*kept {
			t.Errorf("SpaceStats = %+v, %v; want %d chunks", st, err, 2*kept)
		}
		if kc := keyword(t, s, alice, "shared corpus", rag.Filter{}, 100); len(kc) != kept {
			t.Errorf("%d keyword candidates, want %d", len(kc), kept)
		}
		if vc := vector(t, s, alice, spaceA, basis(spaceA.Dim, 0), rag.Filter{}, 100); len(vc) != 2*kept {
			t.Errorf("%d vector candidates, want %d", len(vc), 2*kept)
		}
	})
}
