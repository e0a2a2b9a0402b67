package storetest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func testVersions(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("CommitVersion/OK", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "guide.md", func(d *rag.Document) {
			d.PendingHash = hashOf("content v1")
			d.Metadata = map[string]any{"lang": "en"}
		})
		tick()
		if err := s.SetDocumentState(t.Context(), d.ID, rag.DocumentState{Status: rag.StatusProcessing, Stage: rag.StageIndex,
			Progress: 0.9, ErrorCode: rag.CodeEmbeddingFailed, Error: "earlier attempt failed"}); err != nil {
			t.Fatal(err)
		}
		chunks := []rag.Chunk{
			{Index: 0, Kind: rag.KindText, Text: "Installation guide", PageStart: 1, PageEnd: 1, Section: "Intro", StartOffset: 0, EndOffset: 18, Vector: basis(spaceA.Dim, 0)},
			{Index: 1, Kind: rag.KindTable, Text: "| a | b |\n| 1 | 2 |", PageStart: 1, PageEnd: 2, Section: "Intro > Table", StartOffset: 20, EndOffset: 39, Vector: basis(spaceA.Dim, 1)},
			{Index: 2, Kind: rag.KindCode, Text: "go run ./cmd/ragd", PageStart: 2, PageEnd: 2, StartOffset: 41, EndOffset: 58, Vector: basis(spaceA.Dim, 2)},
		}
		v, err := s.CommitVersion(t.Context(), &rag.VersionCommit{DocumentID: d.ID, ContentHash: hashOf("content v1"),
			Title: "Guide", Source: "/docs/guide.md", MediaType: "text/markdown", Size: 1234, Space: spaceA, Chunks: chunks})
		if err != nil {
			t.Fatal(err)
		}
		if v != 1 {
			t.Fatalf("version = %d, want 1", v)
		}
		got := getDoc(t, s, d.ID)
		if got.Version != 1 || got.Status != rag.StatusReady || got.Stage != rag.StageDone || got.Progress != 1 ||
			got.ErrorCode != "" || got.Error != "" || got.PendingHash != "" || got.ContentHash != hashOf("content v1") ||
			got.Title != "Guide" || got.Source != "/docs/guide.md" || got.MediaType != "text/markdown" || got.Size != 1234 ||
			got.ChunkCount != 3 || !got.UpdatedAt.After(d.UpdatedAt) {
			t.Errorf("document after commit: %+v", got)
		}
		list, err := s.ListChunks(t.Context(), alice, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 3 {
			t.Fatalf("ListChunks: %d chunks, want 3", len(list))
		}
		for i, ch := range list {
			want := chunks[i]
			want.ID, want.DocumentID, want.Version, want.Vector = ch.ID, d.ID, 1, nil
			if ch.ID <= 0 || ch.Vector != nil || fmt.Sprintf("%+v", *ch) != fmt.Sprintf("%+v", want) {
				t.Errorf("chunk %d:\n got %+v\nwant %+v", i, *ch, want)
			}
		}
		versions, err := s.ListVersions(t.Context(), alice, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(versions) != 1 {
			t.Fatalf("ListVersions: %d, want 1", len(versions))
		}
		vr := versions[0]
		if vr.DocumentID != d.ID || vr.Version != 1 || vr.ContentHash != hashOf("content v1") || vr.Title != "Guide" ||
			vr.Source != "/docs/guide.md" || vr.MediaType != "text/markdown" || vr.Size != 1234 || vr.ChunkCount != 3 ||
			!jsonEqual(vr.Metadata, map[string]any{"lang": "en"}) || vr.CreatedAt.IsZero() {
			t.Errorf("version record: %+v", vr)
		}
	})
	t.Run("CommitVersion/OCRAndWarning", func(t *testing.T) {
		// Chunks read by OCR keep their mark and confidence; the pages left out are the ready document's error.
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "scan.pdf", func(d *rag.Document) { d.PendingHash = hashOf("scan") })
		chunks := []rag.Chunk{
			{Index: 0, Kind: rag.KindText, Text: "text layer", PageStart: 1, PageEnd: 1, StartOffset: 0, EndOffset: 10, Vector: basis(spaceA.Dim, 0)},
			{Index: 1, Kind: rag.KindText, Text: "read from the image", PageStart: 2, PageEnd: 2, StartOffset: 12, EndOffset: 31,
				OCR: true, OCRConfidence: 0.87, Vector: basis(spaceA.Dim, 1)},
			{Index: 2, Kind: rag.KindTable, Text: "| a |\n| 1 |", PageStart: 2, PageEnd: 2, StartOffset: 33, EndOffset: 44,
				OCR: true, OCRConfidence: 0, Vector: basis(spaceA.Dim, 2)},
		}
		warning := "1 page(s) could not be read and are left out: page 3: OCR failed: tesseract: signal: killed"
		if _, err := s.CommitVersion(t.Context(), &rag.VersionCommit{DocumentID: d.ID, ContentHash: hashOf("scan"),
			MediaType: "application/pdf", Space: spaceA, Chunks: chunks, Warning: warning}); err != nil {
			t.Fatal(err)
		}
		got := getDoc(t, s, d.ID)
		if got.Status != rag.StatusReady || got.ErrorCode != "" || got.Error != warning {
			t.Errorf("document: status %s, error %s %q; want ready with the warning", got.Status, got.ErrorCode, got.Error)
		}
		list, err := s.ListChunks(t.Context(), alice, d.ID)
		if err != nil || len(list) != 3 {
			t.Fatalf("ListChunks: %d chunks, %v", len(list), err)
		}
		for i, ch := range list {
			if ch.OCR != chunks[i].OCR || ch.OCRConfidence != chunks[i].OCRConfidence {
				t.Errorf("chunk %d: OCR %v %v, want %v %v", i, ch.OCR, ch.OCRConfidence, chunks[i].OCR, chunks[i].OCRConfidence)
			}
		}
		// The next version without failed pages clears the warning.
		next := hashOf("scan v2")
		if err := s.SetDocumentState(t.Context(), d.ID, rag.DocumentState{Status: rag.StatusProcessing, Stage: rag.StageIndex,
			PendingHash: &next}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CommitVersion(t.Context(), &rag.VersionCommit{DocumentID: d.ID, ContentHash: hashOf("scan v2"),
			Space: spaceA, Chunks: chunks[:1]}); err != nil {
			t.Fatal(err)
		}
		if got := getDoc(t, s, d.ID); got.Error != "" {
			t.Errorf("error after a clean version: %q", got.Error)
		}
	})
	t.Run("CommitVersion/PageBreaks", func(t *testing.T) {
		// A chunk that crosses pages keeps where each page's part starts; one on a single page has none.
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "pages.pdf", func(d *rag.Document) { d.PendingHash = hashOf("pages") })
		chunks := []rag.Chunk{
			{Index: 0, Kind: rag.KindText, Text: "End of page two. Top of page three.", PageStart: 2, PageEnd: 3,
				StartOffset: 0, EndOffset: 35, PageBreaks: []rag.PageBreak{{Offset: 0, Page: 2}, {Offset: 17, Page: 3}},
				Vector: basis(spaceA.Dim, 0)},
			{Index: 1, Kind: rag.KindText, Text: "All on page three.", PageStart: 3, PageEnd: 3, StartOffset: 37, EndOffset: 55,
				Vector: basis(spaceA.Dim, 1)},
		}
		if _, err := s.CommitVersion(t.Context(), &rag.VersionCommit{DocumentID: d.ID, ContentHash: hashOf("pages"),
			MediaType: "application/pdf", Space: spaceA, Chunks: chunks}); err != nil {
			t.Fatal(err)
		}
		list, err := s.ListChunks(t.Context(), alice, d.ID)
		if err != nil || len(list) != 2 {
			t.Fatalf("ListChunks: %d chunks, %v", len(list), err)
		}
		for i, ch := range list {
			if !slices.Equal(ch.PageBreaks, chunks[i].PageBreaks) {
				t.Errorf("chunk %d: page breaks %v, want %v", i, ch.PageBreaks, chunks[i].PageBreaks)
			}
		}
		hits, err := s.Hits(t.Context(), rag.LocalPrincipal, []int64{list[0].ID, list[1].ID})
		if err != nil || len(hits) != 2 {
			t.Fatalf("Hits: %d, %v", len(hits), err)
		}
		for _, h := range hits {
			want := chunks[h.Index].PageBreaks
			if !slices.Equal(h.PageBreaks, want) {
				t.Errorf("hit %d: page breaks %v, want %v", h.Index, h.PageBreaks, want)
			}
		}
	})
	t.Run("CommitVersion/KeepsNewerPendingHash", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt", func(d *rag.Document) { d.PendingHash = hashOf("v1") })
		// A newer upload arrives while v1 is processed.
		newer := hashOf("v2")
		if err := s.SetDocumentState(t.Context(), d.ID, rag.DocumentState{Status: rag.StatusProcessing, Stage: rag.StageEmbed, PendingHash: &newer}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CommitVersion(t.Context(), &rag.VersionCommit{DocumentID: d.ID, ContentHash: hashOf("v1"), Title: "a",
			MediaType: "text/plain", Space: spaceA, Chunks: chunksOf(spaceA, []string{"one"}, nil)}); err != nil {
			t.Fatal(err)
		}
		if got := getDoc(t, s, d.ID); got.PendingHash != newer || got.ContentHash != hashOf("v1") {
			t.Errorf("pending/content = %q/%q, want %q/%q", got.PendingHash, got.ContentHash, newer, hashOf("v1"))
		}
	})
	t.Run("CommitVersion/ReplacesChunks", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt", func(d *rag.Document) { d.Metadata = map[string]any{"rev": "one"} })
		commitTexts(t, s, d, spaceA, []string{"the ancient lighthouse keeper", "stormy harbour nights"},
			[][]float32{basis(spaceA.Dim, 0), basis(spaceA.Dim, 1)})
		old, err := s.ListChunks(t.Context(), alice, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateDocument(t.Context(), alice, d.ID, rag.DocumentUpdate{Metadata: map[string]any{"rev": "two"}}); err != nil {
			t.Fatal(err)
		}
		v := commitTexts(t, s, d, spaceA, []string{"modern harbour cranes", "container ships", "port logistics"},
			[][]float32{basis(spaceA.Dim, 2), basis(spaceA.Dim, 3), basis(spaceA.Dim, 4)})
		if v != 2 {
			t.Fatalf("second commit: version %d, want 2", v)
		}
		cur, err := s.ListChunks(t.Context(), alice, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(cur) != 3 {
			t.Fatalf("ListChunks: %d, want 3", len(cur))
		}
		for i, ch := range cur {
			if ch.Version != 2 || ch.Index != i || slices.ContainsFunc(old, func(o *rag.Chunk) bool { return o.ID == ch.ID }) {
				t.Errorf("chunk %d: %+v (old IDs must not be reused)", i, ch)
			}
		}
		if kc := keyword(t, s, alice, "lighthouse", rag.Filter{}, 10); len(kc) != 0 {
			t.Errorf("old chunk text still found: %v", kc)
		}
		if kc := keyword(t, s, alice, "harbour", rag.Filter{}, 10); len(kc) != 1 || kc[0].ChunkID != cur[0].ID {
			t.Errorf("keyword harbour = %v, want only new chunk %d", kc, cur[0].ID)
		}
		vc := vector(t, s, alice, spaceA, basis(spaceA.Dim, 0), rag.Filter{}, 10)
		if len(vc) != 3 {
			t.Errorf("vector candidates: %d, want 3", len(vc))
		}
		for _, x := range vc {
			if !slices.ContainsFunc(cur, func(ch *rag.Chunk) bool { return ch.ID == x.ChunkID }) {
				t.Errorf("vector candidate %d is not a current chunk", x.ChunkID)
			}
		}
		hits, err := s.Hits(t.Context(), rag.LocalPrincipal, []int64{old[0].ID, cur[1].ID})
		if err != nil || len(hits) != 1 || hits[0].ID != cur[1].ID {
			t.Errorf("Hits(old, new) = %v, %v; want only the new chunk", hits, err)
		}
		versions, err := s.ListVersions(t.Context(), alice, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(versions) != 2 || versions[0].Version != 2 || versions[1].Version != 1 ||
			versions[0].ChunkCount != 3 || versions[1].ChunkCount != 2 || versions[0].ContentHash == versions[1].ContentHash ||
			!jsonEqual(versions[1].Metadata, map[string]any{"rev": "one"}) || !jsonEqual(versions[0].Metadata, map[string]any{"rev": "two"}) {
			t.Errorf("versions = %+v, %+v", versions[0], versions[1])
		}
		if got := getDoc(t, s, d.ID); got.Version != 2 || got.ChunkCount != 3 {
			t.Errorf("document version %d with %d chunks, want 2 with 3", got.Version, got.ChunkCount)
		}
		st, err := s.SpaceStats(t.Context())
		if err != nil || st.Chunks != 3 || st.Spaces[spaceA.ID()] != 3 {
			t.Errorf("SpaceStats = %+v, %v; want 3 chunks, 3 in %s", st, err, spaceA.ID())
		}
	})
	t.Run("CommitVersion/EmptyVersion", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		commitTexts(t, s, d, spaceA, []string{"something"}, nil)
		if v := commitTexts(t, s, d, spaceA, nil, nil); v != 2 {
			t.Fatalf("version %d, want 2", v)
		}
		list, err := s.ListChunks(t.Context(), alice, d.ID)
		if err != nil || len(list) != 0 || getDoc(t, s, d.ID).ChunkCount != 0 {
			t.Errorf("after an empty version: %d chunks, %v", len(list), err)
		}
	})
	t.Run("CommitVersion/DimensionMismatchChangesNothing", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		commitTexts(t, s, d, spaceA, []string{"original words"}, nil)
		before := getDoc(t, s, d.ID)
		chunksBefore, _ := s.ListChunks(t.Context(), alice, d.ID)
		bad := chunksOf(spaceA, []string{"replacement words", "second"}, nil)
		bad[1].Vector = bad[1].Vector[:spaceA.Dim-1]
		noVector := chunksOf(spaceA, []string{"replacement words"}, nil)
		noVector[0].Vector = nil
		for name, commit := range map[string]*rag.VersionCommit{
			"ShortVector": {DocumentID: d.ID, ContentHash: hashOf("x"), Title: "x", Space: spaceA, Chunks: bad},
			"NoVector":    {DocumentID: d.ID, ContentHash: hashOf("x"), Title: "x", Space: spaceA, Chunks: noVector},
			"ZeroSpace":   {DocumentID: d.ID, ContentHash: hashOf("x"), Title: "x", Chunks: chunksOf(spaceA, []string{"w"}, nil)},
		} {
			if _, err := s.CommitVersion(t.Context(), commit); !isCode(err, rag.CodeInvalid) {
				t.Errorf("%s: err = %v, want invalid_request", name, err)
			}
		}
		checkDocEqual(t, getDoc(t, s, d.ID), before)
		chunksAfter, _ := s.ListChunks(t.Context(), alice, d.ID)
		if len(chunksAfter) != 1 || chunksAfter[0].ID != chunksBefore[0].ID {
			t.Errorf("chunks changed: %v", chunksAfter)
		}
		if kc := keyword(t, s, alice, "replacement", rag.Filter{}, 10); len(kc) != 0 {
			t.Errorf("rejected text indexed: %v", kc)
		}
		if versions, _ := s.ListVersions(t.Context(), alice, d.ID); len(versions) != 1 {
			t.Errorf("%d versions, want 1", len(versions))
		}
	})
	t.Run("FailedNewVersionKeepsServingOld", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		commitTexts(t, s, d, spaceA, []string{"meadow larks sing"}, [][]float32{basis(spaceA.Dim, 0)})
		newer := hashOf("unreadable upload")
		if err := s.SetDocumentState(t.Context(), d.ID, rag.DocumentState{Status: rag.StatusProcessing, Stage: rag.StageExtract, PendingHash: &newer}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDocumentState(t.Context(), d.ID, rag.DocumentState{Status: rag.StatusFailed, Stage: rag.StageExtract,
			ErrorCode: rag.CodeInvalid, Error: "a.txt: corrupt PDF"}); err != nil {
			t.Fatal(err)
		}
		got := getDoc(t, s, d.ID)
		if got.Status != rag.StatusFailed || got.Version != 1 || got.ChunkCount != 1 || got.ContentHash == newer || got.PendingHash != newer {
			t.Errorf("failed document: %+v", got)
		}
		if kc := keyword(t, s, alice, "meadow larks", rag.Filter{}, 5); len(kc) != 1 {
			t.Errorf("keyword candidates of the previous version: %v", kc)
		}
		if vc := vector(t, s, alice, spaceA, basis(spaceA.Dim, 0), rag.Filter{}, 5); len(vc) != 1 {
			t.Errorf("vector candidates of the previous version: %v", vc)
		}
		if chunks, err := s.ListChunks(t.Context(), alice, d.ID); err != nil || len(chunks) != 1 {
			t.Errorf("ListChunks = %v, %v", chunks, err)
		}
	})
	t.Run("CommitVersion/ErrNotFound", func(t *testing.T) {
		s := open(t)
		_, err := s.CommitVersion(t.Context(), &rag.VersionCommit{DocumentID: "missing", ContentHash: hashOf("x"),
			Space: spaceA, Chunks: chunksOf(spaceA, []string{"w"}, nil)})
		wantNotFound(t, "CommitVersion(missing)", err)
	})
	t.Run("CommitVersion/ReadersNeverSeeAMix", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "flip.txt")
		// Version kinds alternate: 7 "apple" chunks with vector e0, 11 "banana" chunks with vector e1. A
		// query between e0 and e1 scores each kind differently, so a mix shows as unequal scores.
		kinds := []struct {
			n    int
			text string
			vec  []float32
		}{{7, "apple orchard", basis(spaceA.Dim, 0)}, {11, "banana plantation", basis(spaceA.Dim, 1)}}
		commitKind := func(ctx context.Context, k int) error {
			texts := make([]string, kinds[k].n)
			vecs := make([][]float32, kinds[k].n)
			for i := range texts {
				texts[i], vecs[i] = kinds[k].text, kinds[k].vec
			}
			_, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: hashOf(fmt.Sprint(k)), Title: "flip",
				MediaType: "text/plain", Space: spaceA, Chunks: chunksOf(spaceA, texts, vecs)})
			return err
		}
		if err := commitKind(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
		query := normalize([]float32{0.9, 0.3, 0, 0, 0, 0, 0, 0})
		terms := queryTerms("apple banana")
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		errs := make(chan string, 100)
		report := func(format string, args ...any) {
			select {
			case errs <- fmt.Sprintf(format, args...):
			default:
			}
		}
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					vc, err := s.VectorCandidates(ctx, alice, rag.VectorQuery{Space: spaceA, Vector: query, K: 50})
					if err != nil {
						if ctx.Err() == nil {
							report("VectorCandidates: %v", err)
						}
						return
					}
					if len(vc) != 7 && len(vc) != 11 {
						report("vector: %d candidates, want 7 or 11", len(vc))
					}
					for _, x := range vc {
						if math.Abs(x.Score-vc[0].Score) > 1e-6 {
							report("vector: mixed scores %v and %v", vc[0].Score, x.Score)
							break
						}
					}
					kc, err := s.KeywordCandidates(ctx, alice, rag.KeywordQuery{Terms: terms, K: 50})
					if err != nil {
						if ctx.Err() == nil {
							report("KeywordCandidates: %v", err)
						}
						return
					}
					if len(kc) != 7 && len(kc) != 11 {
						report("keyword: %d candidates, want 7 or 11", len(kc))
					}
					for _, x := range kc {
						if math.Abs(x.Score-kc[0].Score) > 1e-6*math.Abs(kc[0].Score) {
							report("keyword: mixed scores %v and %v", kc[0].Score, x.Score)
							break
						}
					}
					chunks, err := s.ListChunks(ctx, alice, d.ID)
					if err != nil {
						if ctx.Err() == nil {
							report("ListChunks: %v", err)
						}
						return
					}
					if len(chunks) != 7 && len(chunks) != 11 {
						report("ListChunks: %d chunks, want 7 or 11", len(chunks))
					}
					for _, ch := range chunks {
						if ch.Version != chunks[0].Version || ch.Text != chunks[0].Text {
							report("ListChunks: mixed versions %d and %d", chunks[0].Version, ch.Version)
							break
						}
					}
				}
			}()
		}
		for i := 1; i <= 30; i++ {
			if err := commitKind(t.Context(), i%2); err != nil {
				t.Errorf("commit %d: %v", i, err)
				break
			}
		}
		cancel()
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		if got := getDoc(t, s, d.ID); got.Version != 31 || got.ChunkCount != 7 {
			t.Errorf("final document version %d with %d chunks, want 31 with 7", got.Version, got.ChunkCount)
		}
	})
}
