//go:build unix

package jobs

import (
	"errors"
	"syscall"
)

// processExists reports whether a process with that ID exists in this PID namespace.
func processExists(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
