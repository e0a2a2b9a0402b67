//go:build !linux

package extract

import "context"

// withWasmMemory leaves wazero's own memory allocation in place where mmap is not used.
func withWasmMemory(ctx context.Context) context.Context { return ctx }

// wasmMemoryLive is unknown here: 0.
func wasmMemoryLive() int64 { return 0 }
