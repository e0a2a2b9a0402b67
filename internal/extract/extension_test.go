package extract

import "testing"

func TestExtension(t *testing.T) {
	t.Parallel()
	types := map[string]bool{}
	for _, mt := range docTypes {
		types[mt] = true
	}
	for _, lang := range codeLangs {
		types["text/x-"+lang] = true
	}
	for mt := range types {
		ext := Extension(mt)
		if got := MediaType("document"+ext, nil); ext == "" || got != mt {
			t.Errorf("Extension(%s) = %q, read as %q", mt, ext, got)
		}
	}
	if Extension(MediaHTML) != ".html" || Extension("image/png") != "" {
		t.Errorf("html %q, png %q", Extension(MediaHTML), Extension("image/png"))
	}
}
