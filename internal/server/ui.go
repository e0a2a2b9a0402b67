package server

import (
	"cmp"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/ragd/ragd/web"
)

// contentSecurityPolicy allows only the server's own scripts and styles: no inline script, no event-handler
// attributes, no remote resources. It is a second wall behind DOMPurify for answers that quote hostile
// documents.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func uiHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	// The files are embedded in the binary: revalidate so that an upgrade is seen at once.
	h.Set("Cache-Control", "no-cache")
}

// page serves one HTML page of the UI.
func (s *Server) page(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := fs.ReadFile(web.FS, name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		uiHeaders(w)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(b)
	})
}

// assets serves the UI's scripts, styles and vendored libraries: files only, never a directory listing.
func (s *Server) assets() http.Handler {
	files := http.FileServerFS(web.FS)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if st, err := fs.Stat(web.FS, cmp.Or(name, ".")); err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		uiHeaders(w)
		files.ServeHTTP(w, r)
	})
}
