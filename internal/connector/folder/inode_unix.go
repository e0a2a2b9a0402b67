//go:build unix

package folder

import (
	"io/fs"
	"strconv"
	"syscall"
)

// inode identifies a file across renames: its device and inode numbers.
func inode(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(uint64(st.Ino), 10)
}
