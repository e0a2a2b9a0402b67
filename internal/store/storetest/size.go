package storetest

import (
	"math/rand/v2"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// testStoreSize checks rag.StoreSizer: a store reports a positive size that grows by at least the bytes of
// an incompressible blob written to it.
func testStoreSize(t *testing.T, open func(t *testing.T) rag.Store) {
	s := open(t)
	sz, ok := s.(rag.StoreSizer)
	if !ok {
		t.Fatalf("%T does not report its size (rag.StoreSizer)", s)
	}
	before, err := sz.StoreSize(t.Context())
	if err != nil || before <= 0 {
		t.Fatalf("StoreSize = %d, %v; want > 0", before, err)
	}
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(rng.UintN(256))
	}
	if err := s.PutBlob(t.Context(), hashOf(string(data)), data); err != nil {
		t.Fatal(err)
	}
	after, err := sz.StoreSize(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after-before < n*9/10 {
		t.Fatalf("StoreSize grew by %d bytes after a %d-byte blob (from %d to %d)", after-before, n, before, after)
	}
}
