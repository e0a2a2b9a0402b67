package extract

import (
	"context"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero/experimental"
)

// withWasmMemory makes PDFium's WebAssembly memories mmap-backed: each reserves its maximum address range
// once (untouched pages cost nothing), grows in place instead of copying itself into a larger Go slice at
// every step — which left several copies of a large PDF's memory on the Go heap until the next collection —
// and is given back to the system as soon as its instance is closed.
func withWasmMemory(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
		buf, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
		if err != nil {
			return nil
		}
		return &mmapMemory{buf: buf}
	}))
}

type mmapMemory struct {
	buf  []byte
	size atomic.Uint64
}

// wasmLive is the size of all live PDFium memories together.
var wasmLive atomic.Int64

// wasmMemoryLive returns the size of all live PDFium memories together.
func wasmMemoryLive() int64 { return wasmLive.Load() }

// Reallocate implements experimental.LinearMemory: the memory grows within its reserved range.
func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	old := m.size.Swap(size)
	wasmLive.Add(int64(size) - int64(old))
	return m.buf[:size]
}

// freeDelay is how long a freed memory stays mapped (its pages already returned): a call interrupted by
// closing its instance may still be unwinding when the instance is closed.
const freeDelay = time.Minute

// Free implements experimental.LinearMemory: the pages go back to the system at once, the address range
// a minute later.
func (m *mmapMemory) Free() {
	wasmLive.Add(-int64(m.size.Swap(0)))
	_ = syscall.Madvise(m.buf, syscall.MADV_DONTNEED)
	buf := m.buf
	time.AfterFunc(freeDelay, func() { _ = syscall.Munmap(buf) })
}
