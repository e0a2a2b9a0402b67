//go:build !unix

package folder

import "io/fs"

// inode is "" where the file system gives no inode: moves are then found by content (the sync engine).
func inode(fs.FileInfo) string { return "" }
