//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// canLockFiles: spaces' files have owners (lockSpace works here).
const canLockFiles = true

// lockSpace takes the lock file of a space (path, created if needed) without waiting, and reports false
// when another store — in this process or another — holds it (flock locks belong to an open file, so two
// stores of one process exclude each other too). The holder owns the space's vector and index files.
func lockSpace(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", filepath.Base(path), err)
	}
	return f, true, nil
}
