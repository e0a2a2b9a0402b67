package ingest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/chunk"
	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
)

type bundle struct {
	store *sqlite.Store
	pipe  *ingest.Pipeline
	emb   *flakyEmbedder
}

// flakyEmbedder is the real hash embedder that can be told to fail, as a hosted one does when it is down.
// It can also be told to hang (hang is closed when a call starts), as a hosted one does when it is slow: the
// call then returns only when its context ends, or after a minute.
type flakyEmbedder struct {
	*hash.Embedder
	mu   sync.Mutex
	fail error
	hang chan struct{}
}

func (f *flakyEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	err, hang := f.fail, f.hang
	f.hang = nil
	f.mu.Unlock()
	if hang != nil {
		close(hang)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return nil, errors.New("still hanging: the attempt's context was never cancelled")
		}
	}
	if err != nil {
		return nil, err
	}
	return f.Embedder.EmbedDocuments(ctx, texts)
}

func setup(t testing.TB, opt ingest.Options) *bundle {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ex, err := extract.New(extract.Options{MaxBytes: opt.MaxBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	emb := &flakyEmbedder{Embedder: hash.New(0)}
	return &bundle{store: st, pipe: ingest.New(st, ex, emb, opt), emb: emb}
}

var p = rag.LocalPrincipal

func (b *bundle) chunks(t *testing.T, id string) []*rag.Chunk {
	t.Helper()
	cs, err := b.store.ListChunks(context.Background(), p, id)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestIngest(t *testing.T) {
	ctx := context.Background()
	b := setup(t, ingest.Options{})
	v1 := ingest.Request{Name: "notes.md", Data: []byte("# Notes\n\nThe first version talks about turbines.\n")}

	doc, out, err := b.pipe.Ingest(ctx, p, v1)
	if err != nil || out != ingest.Queued {
		t.Fatalf("first ingest: %v %v", out, err)
	}
	if doc.Status != rag.StatusReady || doc.Version != 1 || doc.ChunkCount == 0 || doc.MediaType != "text/markdown" || doc.Title != "Notes" {
		t.Fatalf("after first ingest: %+v", doc)
	}

	t.Run("SameContentIsNoop", func(t *testing.T) {
		before := b.chunks(t, doc.ID)
		d, out, err := b.pipe.Ingest(ctx, p, v1)
		if err != nil || out != ingest.Unchanged || d.Version != 1 {
			t.Fatalf("re-ingest: %v version %d %v", out, d.Version, err)
		}
		after := b.chunks(t, doc.ID)
		if len(after) != len(before) || after[0].ID != before[0].ID {
			t.Error("re-ingesting identical content rewrote the chunks")
		}
	})

	t.Run("NewContentIsNewVersion", func(t *testing.T) {
		v2 := v1
		v2.Data = []byte("# Notes\n\nThe second version talks about compressors.\n")
		d, out, err := b.pipe.Ingest(ctx, p, v2)
		if err != nil || out != ingest.Queued || d.Version != 2 || d.ID != doc.ID {
			t.Fatalf("new version: %v %+v %v", out, d, err)
		}
		for _, c := range b.chunks(t, doc.ID) {
			if strings.Contains(c.Text, "turbines") || c.Version != 2 {
				t.Errorf("an old chunk survived: %+v", c)
			}
		}
		vs, err := b.store.ListVersions(ctx, p, doc.ID)
		if err != nil || len(vs) != 2 || vs[0].Version != 2 || vs[1].Version != 1 {
			t.Fatalf("versions: %+v %v", vs, err)
		}
	})

	t.Run("FailedVersionKeepsTheOldOne", func(t *testing.T) {
		b.emb.mu.Lock()
		b.emb.fail = rag.Errorf(rag.CodeEmbeddingFailed, "provider down")
		b.emb.mu.Unlock()
		defer func() { b.emb.mu.Lock(); b.emb.fail = nil; b.emb.mu.Unlock() }()
		v3 := v1
		v3.Data = []byte("# Notes\n\nA third version that cannot be embedded.\n")
		_, _, err := b.pipe.Ingest(ctx, p, v3)
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed {
			t.Fatalf("err = %v, want embedding_failed", err)
		}
		d, err := b.store.GetDocument(ctx, p, doc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Version != 2 || d.Status != rag.StatusReady || !strings.Contains(d.Error, "provider down") || d.PendingHash != "" {
			t.Errorf("after a failed version: %+v", d)
		}
		for _, c := range b.chunks(t, doc.ID) {
			if !strings.Contains(c.Text, "compressors") && !strings.Contains(c.Text, "Notes") {
				t.Errorf("chunks changed: %q", c.Text)
			}
		}
	})

	t.Run("Rejected", func(t *testing.T) {
		small := setup(t, ingest.Options{MaxBytes: 10})
		cases := []struct {
			name string
			data []byte
			code rag.Code
		}{
			{"empty.txt", nil, rag.CodeInvalid},
			{"photo.jpg", []byte("\xff\xd8\xff\xe0"), rag.CodeUnsupportedMediaType},
			{"big.txt", []byte("eleven char"), rag.CodePayloadTooLarge},
			{"bad.txt", []byte("caf\xe9"), rag.CodeInvalid},
		}
		for _, c := range cases {
			d, _, err := small.pipe.Ingest(ctx, p, ingest.Request{Name: c.name, Data: c.data})
			if rag.ErrorCode(err) != c.code || !strings.Contains(rag.ErrorMessage(err), c.name) {
				t.Errorf("%s: err %v, want %s naming the file", c.name, err, c.code)
				continue
			}
			if d == nil || d.Status != rag.StatusFailed || d.ErrorCode != c.code || d.ChunkCount != 0 {
				t.Errorf("%s: recorded as %+v", c.name, d)
			}
		}
		if _, _, err := small.pipe.Ingest(ctx, p, ingest.Request{Name: "ten.txt", Data: []byte("ten chars.")}); err != nil {
			t.Errorf("exactly MaxBytes: %v", err)
		}
	})

	t.Run("ConcurrentSubmitsOfOneKey", func(t *testing.T) {
		c := setup(t, ingest.Options{})
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := c.pipe.Ingest(ctx, p, ingest.Request{Name: "same.txt", Data: []byte(strings.Repeat("word ", i+1))})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		page, err := c.store.ListDocuments(ctx, p, rag.DocumentQuery{})
		if err != nil || page.Total != 1 {
			t.Fatalf("documents: %d (%v), want 1", page.Total, err)
		}
		d := page.Documents[0]
		if d.Status != rag.StatusReady || d.PendingHash != "" || len(c.chunks(t, d.ID)) != d.ChunkCount {
			t.Errorf("after concurrent submits: %+v", d)
		}
	})
}

func TestProcessIsIdempotent(t *testing.T) {
	ctx := context.Background()
	b := setup(t, ingest.Options{})
	d, out, err := b.pipe.Submit(ctx, p, ingest.Request{Name: "a.txt", Data: []byte("Alpha beta gamma.")})
	if err != nil || out != ingest.Queued || d.Status != rag.StatusQueued {
		t.Fatalf("submit: %v %+v %v", out, d, err)
	}
	for range 2 {
		if err := b.pipe.Process(ctx, d.ID); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := b.store.ListVersions(ctx, p, d.ID)
	if err != nil || len(vs) != 1 {
		t.Fatalf("versions after processing twice: %d %v", len(vs), err)
	}
	if err := b.pipe.Process(ctx, "no-such-document"); !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("unknown document: %v", err)
	}
}

// Deleting a document stops its running attempt: the cancellation reaches the stage at work (here the
// embedder), and the attempt ends quietly rather than failing or recording a state on a deleted document.
func TestDeleteStopsAttempt(t *testing.T) {
	ctx := context.Background()
	b := setup(t, ingest.Options{WatchInterval: 20 * time.Millisecond})
	d, _, err := b.pipe.Submit(ctx, p, ingest.Request{Name: "a.txt", Data: []byte("Alpha beta gamma.")})
	if err != nil {
		t.Fatal(err)
	}
	hang := make(chan struct{})
	b.emb.mu.Lock()
	b.emb.hang = hang
	b.emb.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		done <- b.pipe.ProcessAttempt(ctx, d.ID, ingest.Attempt{ContentHash: d.PendingHash, Retry: true})
	}()
	<-hang
	if err := b.store.DeleteDocument(ctx, p, d.ID); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("attempt at a deleted document: %v, want it stopped quietly", err)
	}
}

// Metadata over a limit is refused before anything is stored.
func TestMetadataLimits(t *testing.T) {
	ctx := context.Background()
	b := setup(t, ingest.Options{Metadata: rag.MetadataLimits{MaxKeys: 2}})
	if _, _, err := b.pipe.Submit(ctx, p, ingest.Request{Name: "a.txt", Data: []byte("a"), Metadata: map[string]any{"a": 1, "b": 2}}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	_, _, err := b.pipe.Submit(ctx, p, ingest.Request{Name: "b.txt", Data: []byte("b"), Metadata: map[string]any{"a": 1, "b": 2, "c": 3}})
	if rag.ErrorCode(err) != rag.CodeInvalid || !strings.Contains(rag.ErrorMessage(err), "RAGD_MAX_METADATA_KEYS") {
		t.Fatalf("over the limit: %v", err)
	}
	if page, err := b.store.ListDocuments(ctx, p, rag.DocumentQuery{}); err != nil || page.Total != 1 {
		t.Fatalf("documents after one accepted and one refused: %+v %v", page, err)
	}
}

// A document over the chunk budget fails with too_large naming the limit; at the limit it is indexed.
func TestMaxChunks(t *testing.T) {
	ctx := context.Background()
	// Three paragraphs far apart in size limits: each becomes its own chunk at chunk size 100.
	text := strings.Repeat("alpha beta gamma delta. ", 4) + "\n\n" + strings.Repeat("one two three four. ", 4) + "\n\n" + strings.Repeat("red green blue. ", 5)
	probe := setup(t, ingest.Options{Chunk: chunk.Options{Size: 100, Overlap: -1}})
	d, _, err := probe.pipe.Ingest(ctx, p, ingest.Request{Name: "c.txt", Data: []byte(text)})
	if err != nil || d.ChunkCount < 2 {
		t.Fatalf("probe: %v %+v", err, d)
	}
	n := d.ChunkCount
	at := setup(t, ingest.Options{Chunk: chunk.Options{Size: 100, Overlap: -1}, MaxChunks: n})
	if _, _, err := at.pipe.Ingest(ctx, p, ingest.Request{Name: "c.txt", Data: []byte(text)}); err != nil {
		t.Fatalf("at the limit of %d chunks: %v", n, err)
	}
	over := setup(t, ingest.Options{Chunk: chunk.Options{Size: 100, Overlap: -1}, MaxChunks: n - 1})
	d, _, err = over.pipe.Ingest(ctx, p, ingest.Request{Name: "c.txt", Data: []byte(text)})
	if rag.ErrorCode(err) != rag.CodeTooLarge || !strings.Contains(rag.ErrorMessage(err), "(limit RAGD_MAX_CHUNKS)") {
		t.Fatalf("over the limit: %v", err)
	}
	if d.Status != rag.StatusFailed || d.ErrorCode != rag.CodeTooLarge || d.PendingHash != "" {
		t.Fatalf("document over the limit: %+v, want failed with nothing pending", d)
	}
	if ingest.Transient(err) {
		t.Fatal("too_large must not be retried")
	}
}

// BenchmarkIngestKoreanPDFsAndHandbook measures the time until the three Korean PDFs and the 872-page DOCX
// are all searchable (issue 2 target: ≤ 20 s together), PDFium's start-up included.
func BenchmarkIngestKoreanPDFsAndHandbook(b *testing.B) {
	files := []string{
		"pdf/bill_2125318_original.pdf", "pdf/bill_2125318_review_report.pdf",
		"pdf/assembly_minutes_21_414_1_env_labor.pdf", "docx/handbook-872p.docx",
	}
	data := make([][]byte, len(files))
	for i, f := range files {
		var err error
		if data[i], err = os.ReadFile(filepath.Join("..", "..", "..", "shared", "fixtures", f)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		bb := setup(b, ingest.Options{})
		start := time.Now()
		var wg sync.WaitGroup
		for i, f := range files {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, _, err := bb.pipe.Ingest(context.Background(), p, ingest.Request{Name: filepath.Base(f), Data: data[i]}); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(time.Since(start).Seconds(), "s/all-four")
	}
}

// countingStore is the real SQLite store that counts CreateDocument calls and can run a hook between a
// FindDocument and the CreateDocument that follows it (where another submit of the same key can land).
type countingStore struct {
	*sqlite.Store
	mu        sync.Mutex
	creates   int
	afterFind func()
}

func (s *countingStore) FindDocument(ctx context.Context, pr rag.Principal, collectionID, externalID string) (*rag.Document, error) {
	d, err := s.Store.FindDocument(ctx, pr, collectionID, externalID)
	s.mu.Lock()
	hook := s.afterFind
	s.afterFind = nil
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return d, err
}

func (s *countingStore) CreateDocument(ctx context.Context, d *rag.Document) error {
	s.mu.Lock()
	s.creates++
	s.mu.Unlock()
	return s.Store.CreateDocument(ctx, d)
}

func TestSubmitConflicts(t *testing.T) {
	ctx := context.Background()
	newPipe := func(t *testing.T) (*countingStore, *ingest.Pipeline) {
		b := setup(t, ingest.Options{})
		ex, err := extract.New(extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ex.Close() })
		cs := &countingStore{Store: b.store}
		return cs, ingest.New(cs, ex, hash.New(0), ingest.Options{})
	}

	t.Run("ErrInvisibleDocument", func(t *testing.T) {
		// Alice's document is not visible to Bob: Bob's FindDocument says not found and every create of the
		// same key conflicts. Submit must stop after its bounded attempts with a clear conflict.
		cs, pipe := newPipe(t)
		alice := rag.Principal{ID: "user:alice"}
		bob := rag.Principal{ID: "user:bob"}
		req := ingest.Request{Name: "plan.md", Data: []byte("# Plan\n\nAlice's plan.\n")}
		if _, out, err := pipe.Submit(ctx, alice, req); err != nil || out != ingest.Queued {
			t.Fatalf("alice: %v %v", out, err)
		}
		cs.creates = 0
		req.Data = []byte("# Plan\n\nBob's plan.\n")
		doc, out, err := pipe.Submit(ctx, bob, req)
		if rag.ErrorCode(err) != rag.CodeConflict || out != ingest.Failed || doc != nil {
			t.Fatalf("bob: %v %v %+v, want a conflict", out, err, doc)
		}
		if msg := rag.ErrorMessage(err); !strings.Contains(msg, "plan.md") || !strings.Contains(msg, "cannot see") {
			t.Errorf("message %q must name the file and say why", msg)
		}
		if cs.creates != 2 {
			t.Errorf("%d creates, want 2 (bounded)", cs.creates)
		}
		got, err := cs.FindDocument(ctx, alice, docCollection(t, cs, alice), "plan.md")
		if err != nil || got.PendingHash == "" || got.Owner != alice.ID {
			t.Fatalf("alice's document after bob's submit: %+v %v", got, err)
		}
	})

	t.Run("CreatedMeanwhileBecomesUpdate", func(t *testing.T) {
		// Another submit of the same key lands between this submit's find and its create: the create
		// conflicts and the second attempt updates that document.
		cs, pipe := newPipe(t)
		cs.afterFind = func() {
			if _, out, err := pipe.Submit(ctx, p, ingest.Request{Name: "race.txt", Data: []byte("first words")}); err != nil || out != ingest.Queued {
				t.Errorf("interleaved submit: %v %v", out, err)
			}
		}
		doc, out, err := pipe.Submit(ctx, p, ingest.Request{Name: "race.txt", Data: []byte("second words")})
		if err != nil || out != ingest.Queued {
			t.Fatalf("submit: %v %v", out, err)
		}
		if cs.creates != 2 {
			t.Errorf("%d creates, want 2 (the interleaved one and the conflicting one)", cs.creates)
		}
		page, err := cs.ListDocuments(ctx, p, rag.DocumentQuery{})
		if err != nil || page.Total != 1 || page.Documents[0].ID != doc.ID {
			t.Fatalf("documents: %+v %v, want only %s", page, err, doc.ID)
		}
		if err := pipe.Process(ctx, doc.ID); err != nil {
			t.Fatal(err)
		}
		chunks, err := cs.ListChunks(ctx, p, doc.ID)
		if err != nil || len(chunks) == 0 || !strings.Contains(chunks[0].Text, "second words") {
			t.Fatalf("the later submit must win: %+v %v", chunks, err)
		}
	})

	t.Run("ErrDatabase", func(t *testing.T) {
		cs, pipe := newPipe(t)
		if err := cs.Close(); err != nil {
			t.Fatal(err)
		}
		doc, out, err := pipe.Submit(ctx, p, ingest.Request{Name: "a.txt", Data: []byte("words")})
		if rag.ErrorCode(err) != rag.CodeDBError || out != ingest.Failed || doc != nil {
			t.Fatalf("closed store: %v %v %+v, want %s and outcome failed", out, err, doc, rag.CodeDBError)
		}
	})
}

// docCollection returns the ID of the default collection.
func docCollection(t *testing.T, st rag.Store, pr rag.Principal) string {
	t.Helper()
	c, err := st.EnsureCollection(context.Background(), rag.DefaultCollection, pr.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// TestSettled: Options.Settled is told of each processed version's final outcome — committed, failed for
// good — with the document as recorded, and of nothing else: not an unchanged upload, not a failed attempt
// that will be retried.
func TestSettled(t *testing.T) {
	ctx := context.Background()
	type call struct {
		status  rag.Status
		version int
		failed  bool
	}
	var calls []call
	b := setup(t, ingest.Options{Settled: func(_ context.Context, d *rag.Document, failure error) {
		calls = append(calls, call{d.Status, d.Version, failure != nil})
	}})
	v1 := ingest.Request{Name: "tides.md", Data: []byte("# Tides\n\nHigh water at the quay comes after the bell.\n")}
	doc, _, err := b.pipe.Ingest(ctx, p, v1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []call{{rag.StatusReady, 1, false}}; !slices.Equal(calls, want) {
		t.Fatalf("after the first version: %v, want %v", calls, want)
	}
	if _, out, err := b.pipe.Ingest(ctx, p, v1); err != nil || out != ingest.Unchanged || len(calls) != 1 {
		t.Fatalf("an unchanged upload: %v %v, calls %v", out, err, calls)
	}

	// A transient failure with a retry to come is not final; the same failure on the last try is.
	b.emb.mu.Lock()
	b.emb.fail = rag.Errorf(rag.CodeEmbeddingFailed, "embedder unavailable")
	b.emb.mu.Unlock()
	v2 := ingest.Request{Name: "tides.md", Data: []byte("# Tides\n\nHigh water at the quay now comes before the bell.\n")}
	d, _, err := b.pipe.Submit(ctx, p, v2)
	if err != nil || d.ID != doc.ID {
		t.Fatalf("submit v2: %v", err)
	}
	if err := b.pipe.ProcessAttempt(ctx, d.ID, ingest.Attempt{ContentHash: d.PendingHash, Retry: true}); err == nil {
		t.Fatal("the attempt with a failing embedder succeeded")
	}
	if len(calls) != 1 {
		t.Fatalf("a failure to be retried was reported: %v", calls)
	}
	if err := b.pipe.ProcessAttempt(ctx, d.ID, ingest.Attempt{ContentHash: d.PendingHash}); err == nil {
		t.Fatal("the last attempt with a failing embedder succeeded")
	}
	// The document keeps its ready version 1; the update failed.
	if want := []call{{rag.StatusReady, 1, false}, {rag.StatusReady, 1, true}}; !slices.Equal(calls, want) {
		t.Fatalf("after the final failure: %v, want %v", calls, want)
	}

	// A new document whose file cannot be read fails for good at once.
	b.emb.mu.Lock()
	b.emb.fail = nil
	b.emb.mu.Unlock()
	if _, _, err := b.pipe.Ingest(ctx, p, ingest.Request{Name: "broken.pdf", Data: []byte("%PDF-1.7\nnot a PDF body\n%%EOF")}); err == nil {
		t.Fatal("a broken PDF was ingested")
	}
	if last := calls[len(calls)-1]; len(calls) != 3 || last != (call{rag.StatusFailed, 0, true}) {
		t.Fatalf("after the broken PDF: %v", calls)
	}
}
