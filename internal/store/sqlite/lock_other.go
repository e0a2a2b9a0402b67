//go:build !unix

package sqlite

import "os"

// canLockFiles: no space's files have an owner here.
const canLockFiles = false

// lockSpace cannot lock a file on this system: no store owns a vector file, every space keeps its vectors
// in memory.
func lockSpace(string) (*os.File, bool, error) { return nil, false, nil }
