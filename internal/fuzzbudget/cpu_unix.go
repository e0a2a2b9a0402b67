//go:build unix

package fuzzbudget

import (
	"syscall"
	"time"
)

// cpuTime returns the user and system CPU time of this process so far, or -1 when it cannot be read.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
