package storetest

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sealing"
)

// RunSealing checks encryption at rest: newDB makes a fresh empty database and returns a function that
// opens a store over it with the given keys (nil: none), closed by the test's cleanup. Contents read back
// in the clear under the right keys, a store refuses to open over data whose key it lacks, and a rotation
// re-seals everything under the new key.
func RunSealing(t *testing.T, newDB func(t *testing.T) func(keys *sealing.Keyring) (rag.Store, error)) {
	k1 := bytes.Repeat([]byte{1}, sealing.KeySize)
	k2 := bytes.Repeat([]byte{2}, sealing.KeySize)
	ring := func(cur []byte, old ...[]byte) *sealing.Keyring {
		k, err := sealing.New(cur, old...)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	keyIDs := func(t *testing.T, s rag.Store) []string {
		t.Helper()
		ids, err := s.(rag.SealedStore).DataKeyIDs(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ids)
		return ids
	}
	const text, original = "the harbour ledger counts nineteen gales", "%original bytes of the harbour ledger%"
	// readBack checks that the document's chunk, its original and its text blob read back in the clear.
	readBack := func(t *testing.T, s rag.Store, d *rag.Document) {
		t.Helper()
		chunks, err := s.ListChunks(t.Context(), admin, d.ID)
		if err != nil || len(chunks) != 1 || chunks[0].Text != text {
			t.Fatalf("ListChunks = %v, %v", chunks, err)
		}
		hits, err := s.Hits(t.Context(), rag.LocalPrincipal, []int64{chunks[0].ID})
		if err != nil || len(hits) != 1 || hits[0].Text != text {
			t.Fatalf("Hits = %v, %v", hits, err)
		}
		if got := hitDocs(t, s, keyword(t, s, admin, "gales", rag.Filter{}, 5)); !slices.Equal(got, []string{d.ID}) {
			t.Errorf("keyword search = %v", got)
		}
		if b, err := s.GetBlob(t.Context(), hashOf(original)); err != nil || string(b) != original {
			t.Fatalf("GetBlob(original) = %q, %v", b, err)
		}
		if b, err := s.GetBlob(t.Context(), hashOf(text)); err != nil || string(b) != text {
			t.Fatalf("GetBlob(text) = %q, %v", b, err)
		}
	}

	// seed opens a store with keys and stores a document with its original, text and one chunk.
	seed := func(t *testing.T, open func(*sealing.Keyring) (rag.Store, error), keys *sealing.Keyring) (rag.Store, *rag.Document) {
		t.Helper()
		s, err := open(keys)
		if err != nil {
			t.Fatal(err)
		}
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "ledger.txt")
		if err := s.PutBlob(t.Context(), hashOf(original), []byte(original)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CommitVersion(t.Context(), &rag.VersionCommit{DocumentID: d.ID, ContentHash: hashOf(original), Title: "ledger",
			Space: spaceA, Chunks: chunksOf(spaceA, []string{text}, nil), Text: text}); err != nil {
			t.Fatal(err)
		}
		return s, d
	}

	t.Run("SealOpenRotate", func(t *testing.T) {
		open := newDB(t)
		s, d := seed(t, open, ring(k1))
		var err error
		readBack(t, s, d)
		id1, id2 := sealing.KeyID(k1), sealing.KeyID(k2)
		if got := keyIDs(t, s); !slices.Equal(got, []string{id1}) {
			t.Errorf("key IDs = %v, want only %s", got, id1)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		// Without the key, or with another one only, the store refuses to open.
		for name, keys := range map[string]*sealing.Keyring{"NoKey": nil, "OtherKey": ring(k2)} {
			if s, err := open(keys); !errors.Is(err, sealing.ErrNoKey) {
				if s != nil {
					s.Close()
				}
				t.Errorf("%s: open = %v, want ErrNoKey", name, err)
			}
		}

		// Rotation: the new key seals, the old one still opens until everything is re-sealed.
		s, err = open(ring(k2, k1))
		if err != nil {
			t.Fatal(err)
		}
		readBack(t, s, d)
		for {
			n, err := s.(rag.SealedStore).RekeyData(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		if got := keyIDs(t, s); !slices.Equal(got, []string{id2}) {
			t.Errorf("key IDs after the rotation = %v, want only %s", got, id2)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = open(ring(k2))
		if err != nil {
			t.Fatalf("open with the new key alone after the rotation: %v", err)
		}
		readBack(t, s, d)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("ClearThenSealed", func(t *testing.T) {
		open := newDB(t)
		s, d := seed(t, open, nil)
		var err error
		if got := keyIDs(t, s); !slices.Equal(got, []string{""}) {
			t.Errorf("key IDs in the clear = %q", got)
		}
		s.Close()
		// Setting a key later: the data in the clear still reads, and a rotation seals it.
		s, err = open(ring(k1))
		if err != nil {
			t.Fatal(err)
		}
		readBack(t, s, d)
		for {
			n, err := s.(rag.SealedStore).RekeyData(t.Context(), 100)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		if got := keyIDs(t, s); !slices.Equal(got, []string{sealing.KeyID(k1)}) {
			t.Errorf("key IDs after sealing = %v", got)
		}
		readBack(t, s, d)
	})

	// A source's credentials are sealed like contents: another key cannot open them, an old key still
	// does, and a rotation re-seals them so that the old key can go.
	// Sources' credentials and webhooks' secrets are sealed, refused under another key and re-sealed by a
	// rotation.
	t.Run("SourceCredentials", func(t *testing.T) {
		open := newDB(t)
		s, err := open(ring(k1))
		if err != nil {
			t.Fatal(err)
		}
		c := mustCollection(t, s, "docs")
		src := &rag.SyncSource{CollectionID: c.ID, Kind: "notion", Owner: alice.ID}
		if err := syncStore(t, s).CreateSource(t.Context(), src, []byte("secret_notion_token")); err != nil {
			t.Fatal(err)
		}
		hook := &rag.Webhook{CollectionID: c.ID, URL: "https://hooks.example.com/", Events: []string{rag.EventDocumentReady}, Owner: alice.ID}
		if err := webhookStore(t, s).CreateWebhook(t.Context(), hook, []byte("whsec_harbour")); err != nil {
			t.Fatal(err)
		}
		if got := keyIDs(t, s); !slices.Equal(got, []string{sealing.KeyID(k1)}) {
			t.Errorf("key IDs = %v", got)
		}
		s.Close()
		if s, err = open(ring(k2)); err == nil {
			_, err = syncStore(t, s).SourceCredentials(t.Context(), src.ID)
			s.Close()
		}
		if !errors.Is(err, sealing.ErrNoKey) {
			t.Errorf("credentials under another key: %v, want ErrNoKey", err)
		}
		s, err = open(ring(k2, k1))
		if err != nil {
			t.Fatal(err)
		}
		if sec, err := webhookStore(t, s).WebhookSecret(t.Context(), hook.ID); err != nil || string(sec) != "whsec_harbour" {
			t.Errorf("webhook secret under the old key while rotating: %q, %v", sec, err)
		}
		for {
			n, err := s.(rag.SealedStore).RekeyData(t.Context(), 10)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		s.Close()
		s, err = open(ring(k2))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if cred, err := syncStore(t, s).SourceCredentials(t.Context(), src.ID); err != nil || string(cred) != "secret_notion_token" {
			t.Errorf("credentials after the rotation: %q, %v", cred, err)
		}
		if sec, err := webhookStore(t, s).WebhookSecret(t.Context(), hook.ID); err != nil || string(sec) != "whsec_harbour" {
			t.Errorf("webhook secret after the rotation: %q, %v", sec, err)
		}
		if got := keyIDs(t, s); !slices.Equal(got, []string{sealing.KeyID(k2)}) {
			t.Errorf("key IDs after the rotation = %v", got)
		}
	})
}
