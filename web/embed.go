// Package web holds ragd's browser UI: static HTML, CSS and JavaScript with no build step and no CDN. The
// third-party libraries (marked for markdown, DOMPurify for sanitising it) are vendored under vendor/ with
// their licences. The server embeds everything here into the binary.
package web

import "embed"

// FS is the UI's files: index.html (chat), documents.html, board.html (Q&A), the page scripts, app.css,
// favicon.ico and vendor/.
//
//go:embed *.html *.css *.js favicon.ico vendor
var FS embed.FS
