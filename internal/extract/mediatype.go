package extract

import (
	"bytes"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// codeLangs maps source-file extensions to the <lang> of their media type text/x-<lang>.
var codeLangs = map[string]string{
	".go": "go", ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".jsx": "jsx", ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
	".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".c": "c", ".h": "c", ".cc": "c++", ".cpp": "c++",
	".cxx": "c++", ".hpp": "c++", ".hh": "c++", ".hxx": "c++", ".cs": "csharp", ".rs": "rust", ".rb": "ruby",
	".php": "php", ".swift": "swift", ".scala": "scala", ".sh": "shellscript", ".bash": "shellscript",
	".zsh": "shellscript", ".sql": "sql", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json",
	".css": "css", ".scss": "scss", ".sass": "sass", ".less": "less", ".lua": "lua", ".r": "r", ".m": "objc",
	".mm": "objc", ".pl": "perl", ".pm": "perl", ".dart": "dart", ".ex": "elixir", ".exs": "elixir",
	".erl": "erlang", ".hs": "haskell", ".clj": "clojure", ".fs": "fsharp", ".vue": "vue", ".svelte": "svelte",
	".proto": "protobuf", ".graphql": "graphql", ".tf": "terraform", ".ini": "ini", ".xml": "xml",
	".gradle": "groovy", ".groovy": "groovy", ".ps1": "powershell", ".bat": "bat", ".zig": "zig", ".nim": "nim",
	".jl": "julia", ".ml": "ocaml", ".v": "verilog", ".vhd": "vhdl", ".cmake": "cmake", ".mk": "makefile",
}

// codeFamilies are languages whose name covers a variant with a media type of its own.
var codeFamilies = map[string][]string{"javascript": {"jsx"}, "typescript": {"tsx"}}

// CodeMediaTypes returns the media types of source code in the language called name: the <lang> of
// text/x-<lang> ("go", "python", "typescript", "c++") or a file extension without its dot ("py", "ts",
// "rs"), any case; typescript includes tsx and javascript jsx. It returns nil for a name that is no
// language ragd extracts as code.
func CodeMediaTypes(name string) []string {
	n := strings.ToLower(strings.TrimSpace(name))
	lang, ok := codeLangs["."+n]
	if !ok {
		for _, l := range codeLangs {
			if l == n {
				lang, ok = l, true
				break
			}
		}
	}
	if !ok {
		return nil
	}
	out := []string{"text/x-" + lang}
	for _, v := range codeFamilies[lang] {
		out = append(out, "text/x-"+v)
	}
	return out
}

// codeNames are source files recognised by their whole name.
var codeNames = map[string]string{
	"makefile": "makefile", "gnumakefile": "makefile", "dockerfile": "dockerfile", "containerfile": "dockerfile",
	"cmakelists.txt": "cmake", "jenkinsfile": "groovy", "vagrantfile": "ruby", "gemfile": "ruby", "rakefile": "ruby",
}

var docTypes = map[string]string{
	".pdf": MediaPDF, ".docx": MediaDOCX, ".hwpx": MediaHWPX, ".hwp": MediaHWP, ".xlsx": MediaXLSX, ".pptx": MediaPPTX, ".html": MediaHTML, ".htm": MediaHTML, ".xhtml": MediaHTML,
	".md": MediaMarkdown, ".markdown": MediaMarkdown, ".mdown": MediaMarkdown, ".mkd": MediaMarkdown,
	".mdx": MediaMDX, ".txt": MediaText, ".text": MediaText, ".log": MediaText, ".csv": MediaText,
	".tsv": MediaText, ".rst": MediaText, ".adoc": MediaText, ".org": MediaText,
}

// MediaType returns the media type ragd extracts name as: by its extension (or whole name, for Makefile
// and the like), and for a name without extension by sniffing data (PDF and DOCX signatures, HTML, UTF-8
// text). It returns "" for types ragd does not extract.
func MediaType(name string, data []byte) string {
	base := strings.ToLower(filepath.Base(name))
	if lang, ok := codeNames[base]; ok {
		return "text/x-" + lang
	}
	ext := filepath.Ext(base)
	if mt, ok := docTypes[ext]; ok {
		return mt
	}
	if lang, ok := codeLangs[ext]; ok {
		return "text/x-" + lang
	}
	if ext != "" {
		return ""
	}
	return sniff(data)
}

// Supported reports whether a file called name is extracted, judging by its name alone (what `ragd ingest`
// uses when it walks a folder). Names without an extension are not: their type needs their content.
func Supported(name string) bool {
	base := strings.ToLower(filepath.Base(name))
	if _, ok := codeNames[base]; ok {
		return true
	}
	ext := filepath.Ext(base)
	if _, ok := docTypes[ext]; ok {
		return true
	}
	_, ok := codeLangs[ext]
	return ok
}

func sniff(data []byte) string {
	switch {
	case len(data) == 0:
		return ""
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return MediaPDF
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) && bytes.Contains(data, []byte("word/document.xml")):
		return MediaDOCX
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) && bytes.Contains(data, []byte("xl/workbook.xml")):
		return MediaXLSX
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) && bytes.Contains(data, []byte("ppt/presentation.xml")):
		return MediaPPTX
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) && bytes.Contains(data[:min(len(data), 128)], []byte("application/hwp+zip")):
		return MediaHWPX
	case bytes.HasPrefix(data, []byte("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1")) && bytes.Contains(data, []byte("HWP Document File")):
		return MediaHWP
	}
	head := data
	if len(head) > 512 {
		head = head[:512]
	}
	if utf16BOM(data) != nil {
		return MediaText
	}
	lower := bytes.ToLower(bytes.TrimSpace(trimBOM(head)))
	if bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.HasPrefix(lower, []byte("<html")) {
		return MediaHTML
	}
	// Text if the head is UTF-8 (a rune may be cut at the end of the head) and has no NUL.
	if bytes.IndexByte(head, 0) < 0 {
		for i := 0; i < 4 && i <= len(head); i++ {
			if utf8.Valid(head[:len(head)-i]) {
				return MediaText
			}
		}
	}
	return ""
}

// preferredExt are the usual extensions of types that several extensions read as.
var preferredExt = map[string]string{MediaHTML: ".html", MediaMarkdown: ".md", MediaText: ".txt"}

// Extension returns an extension that MediaType reads as mediaType (".html" for text/html, ".go" for
// text/x-go), or "" when ragd extracts no such type: it names content known by its type alone, such as a
// web page at "https://example.com/".
func Extension(mediaType string) string {
	if ext, ok := preferredExt[mediaType]; ok {
		return ext
	}
	best := ""
	for ext, mt := range docTypes {
		if mt == mediaType && (best == "" || ext < best) {
			best = ext
		}
	}
	if lang, ok := strings.CutPrefix(mediaType, "text/x-"); ok && best == "" {
		for ext, l := range codeLangs {
			if l == lang && (best == "" || ext < best) {
				best = ext
			}
		}
	}
	return best
}
