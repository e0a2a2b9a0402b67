//go:build unix

package cli

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time of this process so far (0 when it cannot be read).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
