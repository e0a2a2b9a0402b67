package fuzzbudget

import (
	"runtime"
	"testing"
	"time"
)

// The budget counts the CPU the process spends, not time spent waiting: a goroutine that sleeps adds
// (next to) nothing, one that computes adds what it computed, however busy the machine is.
func TestCPUTime(t *testing.T) {
	if runtime.GOOS == "windows" || cpuTime() < 0 {
		t.Skip("no process CPU time here")
	}
	before := cpuTime()
	time.Sleep(300 * time.Millisecond)
	if slept := cpuTime() - before; slept >= 150*time.Millisecond {
		t.Errorf("sleeping 300 ms counted %s of CPU time", slept)
	}
	before = cpuTime()
	deadline := time.Now().Add(time.Minute)
	x := 0
	for cpuTime()-before < 200*time.Millisecond && time.Now().Before(deadline) {
		for i := range 100000 {
			x += i
		}
	}
	if spun := cpuTime() - before; spun < 200*time.Millisecond {
		t.Errorf("a minute of computing counted %s of CPU time (%d)", spun, x)
	}
}
