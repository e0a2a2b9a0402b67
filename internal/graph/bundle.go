package graph

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ragd/ragd/internal/rag"
)

// Bundle files, in the order they are read. Sections and chunks are optional; entities and relations are
// required.
const (
	SectionsFile  = "sections.jsonl"
	EntitiesFile  = "entities.jsonl"
	RelationsFile = "relations.jsonl"
	ChunksFile    = "chunks.jsonl"
)

// BundleFiles are the files of a bundle.
var BundleFiles = []string{SectionsFile, EntitiesFile, RelationsFile, ChunksFile}

// MaxBundleBytes bounds one bundle file (64 MiB) and MaxBundleRows the rows of one file.
const (
	MaxBundleBytes = 64 << 20
	MaxBundleRows  = 200_000
)

// Bundle is a parsed graph bundle.
type Bundle struct {
	Sections  []rag.GraphSection
	Entities  []rag.GraphEntity
	Relations []rag.GraphRelation
	Chunks    []rag.GraphChunk
	// lines are the file lines of the rows, for the report.
	lines map[string][]int
}

// line is the file line of row i of file.
func (b *Bundle) line(file string, i int) int { return b.lines[file][i] }

// Problem is one thing wrong with a bundle: the file and 1-based line (0 for the file as a whole).
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Message)
}

// BundleError is a rejected bundle: every problem found (at most MaxProblems). Nothing was changed.
type BundleError struct {
	Problems []Problem
	More     int // problems beyond MaxProblems
}

// MaxProblems is how many problems a BundleError lists.
const MaxProblems = 50

func (e *BundleError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "graph bundle rejected, nothing changed: %d problem(s)", len(e.Problems)+e.More)
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n  … and %d more", e.More)
	}
	return b.String()
}

// Unwrap makes a BundleError a CodeInvalid *rag.Error for errors.As.
func (e *BundleError) Unwrap() error { return rag.Errorf(rag.CodeInvalid, "%s", e.Error()) }

type problems struct{ BundleError }

func (ps *problems) add(file string, line int, format string, args ...any) {
	if len(ps.Problems) >= MaxProblems {
		ps.More++
		return
	}
	ps.Problems = append(ps.Problems, Problem{File: file, Line: line, Message: fmt.Sprintf(format, args...)})
}

// ReadDir reads a bundle from the files of dir.
func ReadDir(dir string) (*Bundle, error) {
	files := map[string][]byte{}
	for _, name := range BundleFiles {
		b, err := readLimited(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		files[name] = b
	}
	return Parse(files)
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBundleBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxBundleBytes {
		return nil, rag.Errorf(rag.CodePayloadTooLarge, "%s is over %d bytes", filepath.Base(path), MaxBundleBytes)
	}
	return b, nil
}

// Parse parses and checks the files of a bundle (file name → content). A bundle with any problem is
// rejected as a whole with a *BundleError listing them: unknown files, lines that are not JSON objects of
// the schema, missing ids or names, duplicate ids, duplicate relations, and references to ids that do not
// exist (relation endpoints, source sections, parents, a chunk's section).
func Parse(files map[string][]byte) (*Bundle, error) {
	var ps problems
	for name := range files {
		if !isBundleFile(name) {
			ps.add(name, 0, "not a bundle file (want %s)", strings.Join(BundleFiles, ", "))
		}
	}
	for _, req := range []string{EntitiesFile, RelationsFile} {
		if _, ok := files[req]; !ok {
			ps.add(req, 0, "missing: a bundle needs %s and %s", EntitiesFile, RelationsFile)
		}
	}
	b := &Bundle{lines: map[string][]int{}}
	readLines(&ps, SectionsFile, files[SectionsFile], func(line int, raw []byte) {
		var s struct {
			rag.GraphSection
			ParentID *string `json:"parent_id"`
		}
		if decodeLine(&ps, SectionsFile, line, raw, &s) {
			if s.ParentID != nil {
				s.GraphSection.ParentID = *s.ParentID
			}
			b.Sections = append(b.Sections, s.GraphSection)
			b.lines[SectionsFile] = append(b.lines[SectionsFile], line)
		}
	})
	readLines(&ps, EntitiesFile, files[EntitiesFile], func(line int, raw []byte) {
		var e rag.GraphEntity
		if decodeLine(&ps, EntitiesFile, line, raw, &e) {
			b.Entities = append(b.Entities, e)
			b.lines[EntitiesFile] = append(b.lines[EntitiesFile], line)
		}
	})
	readLines(&ps, RelationsFile, files[RelationsFile], func(line int, raw []byte) {
		var r rag.GraphRelation
		if decodeLine(&ps, RelationsFile, line, raw, &r) {
			b.Relations = append(b.Relations, r)
			b.lines[RelationsFile] = append(b.lines[RelationsFile], line)
		}
	})
	readLines(&ps, ChunksFile, files[ChunksFile], func(line int, raw []byte) {
		var c rag.GraphChunk
		if decodeLine(&ps, ChunksFile, line, raw, &c) {
			b.Chunks = append(b.Chunks, c)
			b.lines[ChunksFile] = append(b.lines[ChunksFile], line)
		}
	})
	b.check(&ps)
	if len(ps.Problems) > 0 {
		e := ps.BundleError
		return nil, &e
	}
	return b, nil
}

func isBundleFile(name string) bool {
	for _, f := range BundleFiles {
		if name == f {
			return true
		}
	}
	return false
}

// readLines calls fn with each non-blank line of data (1-based line numbers).
func readLines(ps *problems, file string, data []byte, fn func(line int, raw []byte)) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), MaxBundleBytes)
	line, rows := 0, 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if rows++; rows > MaxBundleRows {
			ps.add(file, line, "more than %d rows", MaxBundleRows)
			return
		}
		fn(line, raw)
	}
	if err := sc.Err(); err != nil {
		ps.add(file, line+1, "cannot be read: %v", err)
	}
}

func decodeLine(ps *problems, file string, line int, raw []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		ps.add(file, line, "not a JSON object of the schema: %v", err)
		return false
	}
	if dec.More() {
		ps.add(file, line, "more than one JSON value on the line")
		return false
	}
	return true
}

// uniqueID reports a missing or repeated id of a row and records it in seen (id → line).
func uniqueID(ps *problems, file string, line int, kind, id string, seen map[string]int) {
	switch {
	case strings.TrimSpace(id) == "":
		ps.add(file, line, "a %s needs an id", kind)
	case seen[id] > 0:
		ps.add(file, line, "duplicate %s id %q (first on line %d)", kind, id, seen[id])
	default:
		seen[id] = line
	}
}

// check finds missing fields, duplicates and dangling references.
func (b *Bundle) check(ps *problems) {
	sections := map[string]int{}
	for i, s := range b.Sections {
		line := b.line(SectionsFile, i)
		uniqueID(ps, SectionsFile, line, "section", s.ID, sections)
		if strings.TrimSpace(s.Name) == "" {
			ps.add(SectionsFile, line, "section %q needs a name", s.ID)
		}
	}
	for i, s := range b.Sections {
		if s.ParentID != "" && sections[s.ParentID] == 0 {
			ps.add(SectionsFile, b.line(SectionsFile, i), "section %q: parent_id %q is not a section", s.ID, s.ParentID)
		}
	}
	entities := map[string]int{}
	for i, e := range b.Entities {
		row := b.line(EntitiesFile, i)
		uniqueID(ps, EntitiesFile, row, "entity", e.ID, entities)
		if strings.TrimSpace(e.Name) == "" || strings.TrimSpace(e.Type) == "" {
			ps.add(EntitiesFile, row, "entity %q needs a name and a type", e.ID)
		}
		if e.SourceSection != "" && sections[e.SourceSection] == 0 {
			ps.add(EntitiesFile, row, "entity %q: source_section %q is not a section", e.ID, e.SourceSection)
		}
	}
	type edge struct{ s, t, typ string }
	seen := map[edge]int{}
	for i, r := range b.Relations {
		row := b.line(RelationsFile, i)
		if r.Type == "" {
			ps.add(RelationsFile, row, "a relation needs a type")
		}
		if entities[r.Source] == 0 {
			ps.add(RelationsFile, row, "relation %s: unknown source entity %q", r.Type, r.Source)
		}
		if entities[r.Target] == 0 {
			ps.add(RelationsFile, row, "relation %s: unknown target entity %q", r.Type, r.Target)
		}
		k := edge{r.Source, r.Target, r.Type}
		if first := seen[k]; first > 0 {
			ps.add(RelationsFile, row, "duplicate relation %s %s → %s (first on line %d)", r.Type, r.Source, r.Target, first)
		} else {
			seen[k] = row
		}
	}
	chunks := map[string]int{}
	for i, c := range b.Chunks {
		row := b.line(ChunksFile, i)
		uniqueID(ps, ChunksFile, row, "chunk", c.ID, chunks)
		if sections[c.SectionID] == 0 {
			ps.add(ChunksFile, row, "chunk %q: section_id %q is not a section", c.ID, c.SectionID)
		}
		if strings.TrimSpace(c.Content) == "" {
			ps.add(ChunksFile, row, "chunk %q has no content", c.ID)
		}
	}
}
