// Package hostile runs the real ragd binary on a real port against hostile input — a DOCX zip bomb,
// quadratic Markdown, a PDF bomb, deep and large metadata, slow request bodies, fail-open configurations,
// DNS rebinding — each payload built at test time (internal/hostile), and checks that each gets a clear
// error, that the server's memory stays bounded (read from /proc), that other documents stay searchable
// meanwhile, and that a failed document is not retried after a restart.
//
//	go test ./test/hostile -v
//
// Search latency during the run is reported (t.Log), never asserted: tests do not assert wall-clock times.
package hostile
