//go:build !unix

package cli

import "time"

// processCPU cannot read the process's CPU time on this system: 0.
func processCPU() time.Duration { return 0 }
