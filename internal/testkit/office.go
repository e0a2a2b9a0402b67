package testkit

import (
	"fmt"
	"html"
	"strings"

	"github.com/ragd/ragd/internal/hostile"
)

// Sheet is a worksheet for XLSX: its name and rows of cells (a cell that parses as a number is stored as one,
// the others as shared strings).
type Sheet struct {
	Name string
	Rows [][]string
}

// Slide is a slide for PPTX: a title, body paragraphs, an optional table and speaker notes.
type Slide struct {
	Title string
	Body  []string
	Table [][]string
	Notes string
}

const xmlHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"

const relsNS = `http://schemas.openxmlformats.org/package/2006/relationships`
const relType = `http://schemas.openxmlformats.org/officeDocument/2006/relationships/`

func esc(s string) string { return html.EscapeString(s) }

// XLSX returns a minimal Office Open XML workbook (SpreadsheetML) with the given sheets, as Excel writes one:
// content types, package and workbook relationships, a shared string table.
func XLSX(sheets ...Sheet) []byte {
	var shared []string
	index := map[string]int{}
	var ct, wb, wbRels strings.Builder
	ct.WriteString(xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
		`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
		`<Default Extension="xml" ContentType="application/xml"/>` +
		`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
		`<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>`)
	wb.WriteString(xmlHead + `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>`)
	wbRels.WriteString(xmlHead + `<Relationships xmlns="` + relsNS + `">`)
	var members []string
	for i, s := range sheets {
		n := i + 1
		fmt.Fprintf(&ct, `<Override PartName="/xl/worksheets/sheet%d.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`, n)
		fmt.Fprintf(&wb, `<sheet name="%s" sheetId="%d" r:id="rId%d"/>`, esc(s.Name), n, n)
		fmt.Fprintf(&wbRels, `<Relationship Id="rId%d" Type="%sworksheet" Target="worksheets/sheet%d.xml"/>`, n, relType, n)
		var ws strings.Builder
		ws.WriteString(xmlHead + `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`)
		for r, row := range s.Rows {
			fmt.Fprintf(&ws, `<row r="%d">`, r+1)
			for c, v := range row {
				if v == "" {
					continue
				}
				ref := fmt.Sprintf("%c%d", 'A'+c, r+1)
				if isNumber(v) {
					fmt.Fprintf(&ws, `<c r="%s"><v>%s</v></c>`, ref, v)
					continue
				}
				k, ok := index[v]
				if !ok {
					k = len(shared)
					index[v] = k
					shared = append(shared, v)
				}
				fmt.Fprintf(&ws, `<c r="%s" t="s"><v>%d</v></c>`, ref, k)
			}
			ws.WriteString(`</row>`)
		}
		ws.WriteString(`</sheetData></worksheet>`)
		members = append(members, fmt.Sprintf("xl/worksheets/sheet%d.xml", n), ws.String())
	}
	fmt.Fprintf(&wbRels, `<Relationship Id="rId%d" Type="%ssharedStrings" Target="sharedStrings.xml"/></Relationships>`, len(sheets)+1, relType)
	var sst strings.Builder
	fmt.Fprintf(&sst, xmlHead+`<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="%d" uniqueCount="%d">`, len(shared), len(shared))
	for _, s := range shared {
		sst.WriteString(`<si><t xml:space="preserve">` + esc(s) + `</t></si>`)
	}
	sst.WriteString(`</sst>`)
	ct.WriteString(`</Types>`)
	wb.WriteString(`</sheets></workbook>`)
	return hostile.Zip(append([]string{
		"[Content_Types].xml", ct.String(),
		"_rels/.rels", xmlHead + `<Relationships xmlns="` + relsNS + `"><Relationship Id="rId1" Type="` + relType + `officeDocument" Target="xl/workbook.xml"/></Relationships>`,
		"xl/workbook.xml", wb.String(),
		"xl/_rels/workbook.xml.rels", wbRels.String(),
		"xl/sharedStrings.xml", sst.String(),
	}, members...)...)
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if (r < '0' || r > '9') && r != '.' && !(i == 0 && r == '-') {
			return false
		}
	}
	return true
}

const pNS = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`

func pptxShape(id int, ph string, paras []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<p:sp><p:nvSpPr><p:cNvPr id="%d" name="Shape %d"/><p:cNvSpPr/><p:nvPr>%s</p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/>`, id, id, ph)
	for _, p := range paras {
		b.WriteString(`<a:p><a:r><a:rPr lang="ko-KR"/><a:t>` + esc(p) + `</a:t></a:r></a:p>`)
	}
	b.WriteString(`</p:txBody></p:sp>`)
	return b.String()
}

// PPTX returns a minimal Office Open XML presentation (PresentationML) with the given slides: title and body
// placeholders, a table as a graphic frame, notes slides.
func PPTX(slides ...Slide) []byte {
	var ct, pres, presRels strings.Builder
	ct.WriteString(xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
		`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
		`<Default Extension="xml" ContentType="application/xml"/>` +
		`<Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/>`)
	pres.WriteString(xmlHead + `<p:presentation ` + pNS + `><p:sldIdLst>`)
	presRels.WriteString(xmlHead + `<Relationships xmlns="` + relsNS + `">`)
	var members []string
	for i, s := range slides {
		n := i + 1
		fmt.Fprintf(&ct, `<Override PartName="/ppt/slides/slide%d.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slide+xml"/>`, n)
		fmt.Fprintf(&pres, `<p:sldId id="%d" r:id="rId%d"/>`, 255+n, n)
		fmt.Fprintf(&presRels, `<Relationship Id="rId%d" Type="%sslide" Target="slides/slide%d.xml"/>`, n, relType, n)
		var sl strings.Builder
		sl.WriteString(xmlHead + `<p:sld ` + pNS + `><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>`)
		if s.Title != "" {
			sl.WriteString(pptxShape(2, `<p:ph type="title"/>`, []string{s.Title}))
		}
		if len(s.Body) > 0 {
			sl.WriteString(pptxShape(3, `<p:ph idx="1"/>`, s.Body))
		}
		if len(s.Table) > 0 {
			sl.WriteString(`<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="4" name="Table"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl>`)
			for _, row := range s.Table {
				sl.WriteString(`<a:tr h="370840">`)
				for _, c := range row {
					sl.WriteString(`<a:tc><a:txBody><a:bodyPr/><a:p><a:r><a:t>` + esc(c) + `</a:t></a:r></a:p></a:txBody></a:tc>`)
				}
				sl.WriteString(`</a:tr>`)
			}
			sl.WriteString(`</a:tbl></a:graphicData></a:graphic></p:graphicFrame>`)
		}
		sl.WriteString(`</p:spTree></p:cSld></p:sld>`)
		members = append(members, fmt.Sprintf("ppt/slides/slide%d.xml", n), sl.String())
		if s.Notes != "" {
			fmt.Fprintf(&ct, `<Override PartName="/ppt/notesSlides/notesSlide%d.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.notesSlide+xml"/>`, n)
			members = append(members,
				fmt.Sprintf("ppt/slides/_rels/slide%d.xml.rels", n), xmlHead+`<Relationships xmlns="`+relsNS+`">`+
					fmt.Sprintf(`<Relationship Id="rId1" Type="%snotesSlide" Target="../notesSlides/notesSlide%d.xml"/>`, relType, n)+`</Relationships>`,
				fmt.Sprintf("ppt/notesSlides/notesSlide%d.xml", n), xmlHead+`<p:notes `+pNS+`><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>`+
					pptxShape(2, `<p:ph type="sldImg"/>`, nil)+pptxShape(3, `<p:ph type="body" idx="1"/>`, []string{s.Notes})+
					pptxShape(4, `<p:ph type="sldNum" idx="5"/>`, []string{fmt.Sprint(n)})+`</p:spTree></p:cSld></p:notes>`)
		}
	}
	ct.WriteString(`</Types>`)
	pres.WriteString(`</p:sldIdLst></p:presentation>`)
	presRels.WriteString(`</Relationships>`)
	return hostile.Zip(append([]string{
		"[Content_Types].xml", ct.String(),
		"_rels/.rels", xmlHead + `<Relationships xmlns="` + relsNS + `"><Relationship Id="rId1" Type="` + relType + `officeDocument" Target="ppt/presentation.xml"/></Relationships>`,
		"ppt/presentation.xml", pres.String(),
		"ppt/_rels/presentation.xml.rels", presRels.String(),
	}, members...)...)
}
