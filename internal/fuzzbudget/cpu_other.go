//go:build !unix

package fuzzbudget

import "time"

// cpuTime returns -1: the process's CPU time is not read here, so the budget counts wall time.
func cpuTime() time.Duration { return -1 }
