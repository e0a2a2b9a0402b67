package graph

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ragd/ragd/internal/rag"
)

// Block kinds: what a numbered piece of graph context is (Metadata "kind" of its source).
const (
	KindEntity  = "entity"
	KindRecords = "records"
	KindPassage = "passage"
)

// block is one numbered piece of the context: an entity with its relations, the record rows, or a passage.
type block struct {
	kind   string
	title  string
	path   string
	text   string
	entity *EntityHit
	rows   []RowHit
}

// blocks cuts the result into the context's numbered pieces, in the seed's §6.1 order (entities, record
// rows, passages), within Limits.Chars (the first entity is always kept).
func (r *Result) blocks() []block {
	set := r.Settings
	var out []block
	used := 0
	add := func(b block) {
		n := len([]rune(b.text))
		if len(out) > 0 && used+n > set.Limits.Chars {
			return
		}
		used += n
		out = append(out, b)
	}
	for i := range r.Entities {
		h := &r.Entities[i]
		add(block{kind: KindEntity, title: h.Name, path: h.Path, text: entityText(set, i+1, h), entity: h})
	}
	if len(r.Rows) > 0 {
		add(block{kind: KindRecords, title: r.Rows[0].Table.title(), path: r.Entities[0].Path, text: rowsText(r.Rows), rows: r.Rows})
	}
	for _, p := range r.Passages {
		add(block{kind: KindPassage, title: p.ID, path: p.Path, text: "> " + strings.ReplaceAll(p.Content, "\n", "\n> ")})
	}
	return out
}

func (t Table) title() string { return orText(t.Title, t.Name) }

// Context is the graph context in the layout of the seed's §6.1: the entities with their relations, the
// record table, the source passages, each numbered as the answer cites it.
func (r *Result) Context() string {
	var b strings.Builder
	bl := r.blocks()
	fmt.Fprintf(&b, "## %s\n\n", r.Settings.Labels.Results)
	for i, x := range bl {
		if x.kind == KindRecords {
			fmt.Fprintf(&b, "---\n\n## %s [%d]\n\n", x.title, i+1)
		}
		if x.kind == KindPassage && (i == 0 || bl[i-1].kind != KindPassage) {
			fmt.Fprintf(&b, "---\n\n## %s\n\n", r.Settings.Labels.Passages)
		}
		if x.kind == KindPassage {
			fmt.Fprintf(&b, "[%d] %s\n", i+1, x.path)
		}
		b.WriteString(x.text)
		b.WriteString("\n\n")
	}
	return b.String()
}

// GeneratorPassages are the numbered pieces of the context as a generator's passages.
func (r *Result) GeneratorPassages() []rag.Passage {
	var out []rag.Passage
	for i, x := range r.blocks() {
		out = append(out, rag.Passage{N: i + 1, Title: x.title, Section: x.path, Text: x.text})
	}
	return out
}

// Sources are the numbered pieces of the context as an answer's sources: entity name (or table, or passage
// id), type, section path and similarity.
func (r *Result) Sources() []rag.Source {
	var out []rag.Source
	for i, x := range r.blocks() {
		h := rag.Hit{Title: x.title, Metadata: map[string]any{"kind": x.kind}}
		h.Section, h.Text, h.Source = x.path, x.text, "graph:"+r.Collection
		if e := x.entity; e != nil {
			h.Metadata["entity_id"], h.Metadata["entity_type"] = e.ID, e.Type
			h.Metadata["relations"] = relationRows(r.Settings, e.Edges)
			h.Scores = rag.Scores{Score: e.Score, FusedScore: e.Score, VectorScore: e.Similarity, VectorRank: e.VectorRank,
				KeywordScore: e.KeywordScore, KeywordRank: e.KeywordRank}
		}
		if len(x.rows) > 0 {
			h.Metadata["columns"], h.Metadata["rows"] = rowsTable(x.rows)
		}
		out = append(out, rag.Source{N: i + 1, Hit: h})
	}
	return out
}

// RelationRow is one relation of an entity source (metadata "relations"), for a client to show as
// entity → relation → other: the relation's label as the context groups it, its type, whether the entity
// is its source, the other entity's name, and the line the context shows (quantity and unit, or context).
type RelationRow struct {
	Label  string `json:"label"`
	Type   string `json:"type"`
	Out    bool   `json:"out"`
	Entity string `json:"entity"`
	Text   string `json:"text"`
}

// relationRows are an entity's relations as its context shows them, grouped by label.
func relationRows(set Settings, edges []Edge) []RelationRow {
	out := []RelationRow{}
	for _, g := range groupEdges(set, edges) {
		for _, e := range g.edges {
			out = append(out, RelationRow{Label: g.label, Type: e.Type, Out: e.Out, Entity: e.Other.Name, Text: edgeText(e)})
		}
	}
	return out
}

// entityText is an entity's piece of context: heading, source path, labelled properties, description, and
// its relations grouped by type.
func entityText(set Settings, n int, h *EntityHit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %d. %s (%s, %s: %.2f)\n", n, h.Name, h.Type, set.Labels.Similarity, h.Similarity)
	if h.Path != "" {
		fmt.Fprintf(&b, "**%s**: %s\n", set.Labels.Source, h.Path)
	}
	for _, line := range propertyLines(set, h.GraphEntity) {
		b.WriteString("- " + line + "\n")
	}
	if d, ok := h.Properties["description"].(string); ok && d != "" {
		b.WriteString(d + "\n")
	}
	for _, g := range groupEdges(set, h.Edges) {
		fmt.Fprintf(&b, "\n**%s**:\n", g.label)
		for _, e := range g.edges {
			b.WriteString("- " + edgeText(e) + "\n")
		}
	}
	if h.Relations > len(h.Edges) {
		fmt.Fprintf(&b, "(+%d)\n", h.Relations-len(h.Edges))
	}
	return strings.TrimRight(b.String(), "\n")
}

// propertyLines are the entity's labelled properties, "label: value", in label order.
func propertyLines(set Settings, e rag.GraphEntity) []string {
	var keys []string
	for k := range set.Labels.Properties {
		if _, ok := e.Properties[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s: %s", set.Labels.Properties[k], value(e.Properties[k])))
	}
	return out
}

type edgeGroup struct {
	label string
	edges []Edge
}

// groupEdges groups edges by type and direction, in the order they first appear.
func groupEdges(set Settings, edges []Edge) []edgeGroup {
	var out []edgeGroup
	at := map[string]int{}
	for _, e := range edges {
		label := set.Labels.Relations[e.Type]
		if label == "" {
			label = e.Type
		} else {
			label += " (" + e.Type + ")"
		}
		if !e.Out {
			label = set.Labels.Inverse[e.Type]
			if label == "" {
				label = "← " + e.Type
			} else {
				label += " (← " + e.Type + ")"
			}
		}
		i, ok := at[label]
		if !ok {
			i = len(out)
			at[label] = i
			out = append(out, edgeGroup{label: label})
		}
		out[i].edges = append(out[i].edges, e)
	}
	return out
}

// edgeText is one relation: the other entity's name with the relation's quantity and unit, or its context,
// or the other entity's description.
func edgeText(e Edge) string {
	s := e.Other.Name
	if q, ok := e.Properties["quantity"]; ok {
		s += " " + value(q) + value(e.Properties["unit"])
		return s
	}
	if c, ok := e.Properties["context"].(string); ok && c != "" {
		return s + " — " + c
	}
	if d, ok := e.Other.Properties["description"].(string); ok && d != "" {
		return s + ": " + d
	}
	return s
}

// value shows a property value: numbers as written (no exponent), text as is.
func value(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// rowsText is the record rows as a markdown table: key, variant, then the other columns by their labels.
func rowsText(rows []RowHit) string {
	head, body := rowsTable(rows)
	var b strings.Builder
	b.WriteString("| " + strings.Join(head, " | ") + " |\n")
	b.WriteString(strings.Repeat("| --- ", len(head)) + "|\n")
	for _, cells := range body {
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// rowsTable is the record rows as a table's header and cells: key, variant, then the other columns by
// their labels, integers with thousands separators.
func rowsTable(rows []RowHit) (head []string, body [][]string) {
	t := rows[0].Table
	var cols []Column
	for _, c := range t.Columns {
		if c.Name != t.Key && c.Name != t.Variant {
			cols = append(cols, c)
		}
	}
	head = []string{label(t, t.Key)}
	if t.Variant != "" {
		head = append(head, label(t, t.Variant))
	}
	for _, c := range cols {
		head = append(head, orText(c.Label, c.Name))
	}
	for _, r := range rows {
		cells := []string{r.Record.Key}
		if t.Variant != "" {
			cells = append(cells, r.Record.Variant)
		}
		for _, c := range cols {
			cells = append(cells, cell(c, r.Record.Values[c.Name]))
		}
		body = append(body, cells)
	}
	return head, body
}

func label(t Table, name string) string {
	for _, c := range t.Columns {
		if c.Name == name {
			return orText(c.Label, c.Name)
		}
	}
	return name
}

// cell shows a table value; integers with thousands separators (as the seed's tables do).
func cell(c Column, v any) string {
	f, ok := v.(float64)
	if !ok || c.Type != TypeInteger {
		return value(v)
	}
	s := strconv.FormatInt(int64(f), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
