// Package fuzzbudget bounds the time of one fuzz input: a parser with a super-linear path shows up under
// `go test -fuzz` as an input that takes seconds. The bound applies only while fuzzing, never when the
// seed corpus runs as a normal test (tests do not assert wall-clock times).
package fuzzbudget

import (
	"flag"
	"fmt"
	"testing"
	"time"
)

// PerInput is the longest one fuzz input may take. Fuzz inputs are kilobytes; the slowest extractor reads
// one in milliseconds, so seconds mean a path that grows faster than the input.
const PerInput = 2 * time.Second

// fuzzing reports whether this test binary runs with -test.fuzz.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// Time runs f on one input and, while fuzzing, fails when it takes longer than PerInput: t fails when f
// returns late, and an input that has not returned after 5×PerInput crashes the fuzz worker with the input
// in the message, so that the fuzzer records a hang as a failing input instead of stalling on it.
func Time(t *testing.T, input []byte, f func()) {
	t.Helper()
	if !fuzzing() {
		f()
		return
	}
	start := time.Now()
	hang := time.AfterFunc(5*PerInput, func() {
		panic(fmt.Sprintf("fuzzbudget: input still running after %s: %q", 5*PerInput, input))
	})
	f()
	hang.Stop()
	if d := time.Since(start); d > PerInput {
		t.Fatalf("input of %d bytes took %s (more than %s): super-linear? %q", len(input), d, PerInput, input)
	}
}
