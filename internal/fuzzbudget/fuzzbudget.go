// Package fuzzbudget bounds the work of one fuzz input: a parser with a super-linear path shows up under
// `go test -fuzz` as an input that takes seconds. The bound applies only while fuzzing, never when the
// seed corpus runs as a normal test (tests do not assert wall-clock times).
//
// The bound is on the CPU time the fuzz worker process spends on the input (all its threads: the
// extractor, PDFium's WebAssembly, the garbage collector), not on the wall clock: on a machine shared by
// many builds a worker gets a fraction of a core, and an input of 0.03 s alone took 2.9 s of wall time
// there. Fuzz with `-parallel 1` (one worker process) so that the process's CPU time is the input's.
package fuzzbudget

import (
	"flag"
	"fmt"
	"testing"
	"time"
)

// PerInput is the most CPU time one fuzz input may take. Fuzz inputs are kilobytes; the slowest extractor
// reads one in milliseconds, so seconds mean a path that grows faster than the input.
const PerInput = 2 * time.Second

// Hang is the CPU time after which an input that has not returned crashes the worker; Stuck is the wall
// time after which it does so even without using the CPU (an input blocked forever).
const (
	Hang  = 5 * PerInput
	Stuck = 30 * PerInput
)

// fuzzing reports whether this test binary runs with -test.fuzz.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// Time runs f on one input and, while fuzzing, fails when it takes more than PerInput of CPU time: t fails
// when f returns over budget, and an input that has not returned after Hang of CPU time (or Stuck of wall
// time) crashes the fuzz worker with the input in the message, so that the fuzzer records a hang as a
// failing input instead of stalling on it. Where the process's CPU time cannot be read, wall time counts.
func Time(t *testing.T, input []byte, f func()) {
	t.Helper()
	if !fuzzing() {
		f()
		return
	}
	start, wall := cpuTime(), time.Now()
	used := func() time.Duration {
		if start < 0 {
			return time.Since(wall)
		}
		return cpuTime() - start
	}
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if d, w := used(), time.Since(wall); d > Hang || w > Stuck {
					panic(fmt.Sprintf("fuzzbudget: input still running after %s of CPU time (%s of wall time): %q", d, w, input))
				}
			}
		}
	}()
	f()
	close(done)
	if d := used(); d > PerInput {
		t.Fatalf("input of %d bytes took %s of CPU time (more than %s; %s of wall time): super-linear? %q",
			len(input), d, PerInput, time.Since(wall), input)
	}
}
