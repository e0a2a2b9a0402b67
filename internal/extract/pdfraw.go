package extract

import (
	"context"
	"math"
	"reflect"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/tetratelabs/wazero/api"
)

// Reading a page's characters is most of a PDF's extraction time, and most of that was go-pdfium's cost
// per call, not PDFium's work: each of its WebAssembly calls looks the function up again (wazero builds a
// new call engine with a fresh stack for it), watches the call's context in a new goroutine, and the
// character box allocates and frees its output struct inside the module — 6 module calls and ~10 KB of
// Go allocation for every character (docs/performance.md, "Ingestion"). charReader makes the same four
// PDFium calls per character (FPDFText_GetUnicode, _IsGenerated, _GetLooseCharBox, _GetCharAngle)
// through function handles looked up once per instance, with one reused argument stack and one rectangle
// allocated in the module per page.
//
// It needs go-pdfium's WebAssembly implementation (the pinned v1.19.8): the module and its exported
// functions are public fields, the text page's native pointer is read from its handle table by
// reflection. When any of that is not there (another go-pdfium, another backend), charReaderFor returns
// nil and the page is read through go-pdfium's own calls, with the same result.
// slowCharReads makes readPageText use go-pdfium's calls (BenchmarkPDFPages compares the two).
var slowCharReads = false

type charReader struct {
	mod                            api.Module
	unicode, generated, box, angle api.Function
	free                           api.Function
	stack                          []uint64
	textPage, rect                 uint64
}

// charReaderFor returns a reader of the text page tp of inst, or nil. Its rectangle must be released with
// close.
func charReaderFor(inst pdfium.Pdfium, tp references.FPDF_TEXTPAGE) *charReader {
	gi, ok := inst.(interface{ GetImplementation() any })
	if !ok {
		return nil
	}
	impl := reflect.ValueOf(gi.GetImplementation())
	if impl.Kind() != reflect.Pointer || impl.Elem().Kind() != reflect.Struct {
		return nil
	}
	v := impl.Elem()
	modField, refs := v.FieldByName("Module"), v.FieldByName("textPageRefs")
	if !modField.IsValid() || !modField.CanInterface() || refs.Kind() != reflect.Map {
		return nil
	}
	mod, ok := modField.Interface().(api.Module)
	if !ok || mod == nil {
		return nil
	}
	key := reflect.ValueOf(tp)
	if !key.Type().AssignableTo(refs.Type().Key()) {
		return nil
	}
	h := refs.MapIndex(key)
	if !h.IsValid() || h.Kind() != reflect.Pointer || h.IsNil() || h.Elem().Kind() != reflect.Struct {
		return nil
	}
	ptr := h.Elem().FieldByName("handle")
	if ptr.Kind() != reflect.Pointer || ptr.IsNil() || ptr.Elem().Kind() != reflect.Uint64 {
		return nil
	}
	r := &charReader{mod: mod, unicode: mod.ExportedFunction("FPDFText_GetUnicode"),
		generated: mod.ExportedFunction("FPDFText_IsGenerated"), box: mod.ExportedFunction("FPDFText_GetLooseCharBox"),
		angle: mod.ExportedFunction("FPDFText_GetCharAngle"), free: mod.ExportedFunction("free"),
		stack: make([]uint64, 3), textPage: ptr.Elem().Uint()}
	malloc := mod.ExportedFunction("malloc")
	if r.unicode == nil || r.generated == nil || r.box == nil || r.angle == nil || r.free == nil || malloc == nil {
		return nil
	}
	if r.call(malloc, 16) != nil || r.stack[0] == 0 { // FS_RECTF: four float32
		return nil
	}
	r.rect = r.stack[0]
	return r
}

func (r *charReader) call(f api.Function, args ...uint64) error {
	copy(r.stack, args)
	return f.CallWithStack(context.Background(), r.stack)
}

func (r *charReader) close() { _ = r.call(r.free, r.rect) }

func (r *charReader) unicodeAt(i int) (rune, error) {
	err := r.call(r.unicode, r.textPage, uint64(i))
	return rune(uint32(r.stack[0])), err
}

func (r *charReader) generatedAt(i int) bool {
	return r.call(r.generated, r.textPage, uint64(i)) == nil && int32(uint32(r.stack[0])) == 1
}

// boxAt is the character's loose box as left, top, right, bottom; ok is false when PDFium has none.
func (r *charReader) boxAt(i int) (box [4]float32, ok bool) {
	if r.call(r.box, r.textPage, uint64(i), r.rect) != nil || int32(uint32(r.stack[0])) == 0 {
		return box, false
	}
	mem := r.mod.Memory()
	for j := range box {
		bits, ok := mem.ReadUint32Le(uint32(r.rect) + uint32(4*j))
		if !ok {
			return box, false
		}
		box[j] = math.Float32frombits(bits)
	}
	return box, true
}

// angleAt is the character's angle, ok false when PDFium reports none.
func (r *charReader) angleAt(i int) (float64, bool) {
	if r.call(r.angle, r.textPage, uint64(i)) != nil {
		return 0, false
	}
	a := math.Float32frombits(uint32(r.stack[0]))
	return float64(a), a != -1
}

// pdfiumChars reads characters through go-pdfium's own calls (any backend).
type pdfiumChars struct {
	inst pdfium.Pdfium
	tp   references.FPDF_TEXTPAGE
}

func (p pdfiumChars) unicodeAt(i int) (rune, error) {
	u, err := p.inst.FPDFText_GetUnicode(&requests.FPDFText_GetUnicode{TextPage: p.tp, Index: i})
	if err != nil {
		return 0, err
	}
	return rune(u.Unicode), nil
}

func (p pdfiumChars) generatedAt(i int) bool {
	g, err := p.inst.FPDFText_IsGenerated(&requests.FPDFText_IsGenerated{TextPage: p.tp, Index: i})
	return err == nil && g.IsGenerated
}

func (p pdfiumChars) boxAt(i int) ([4]float32, bool) {
	b, err := p.inst.FPDFText_GetLooseCharBox(&requests.FPDFText_GetLooseCharBox{TextPage: p.tp, Index: i})
	if err != nil {
		return [4]float32{}, false
	}
	return [4]float32{b.Rect.Left, b.Rect.Top, b.Rect.Right, b.Rect.Bottom}, true
}

func (p pdfiumChars) angleAt(i int) (float64, bool) {
	a, err := p.inst.FPDFText_GetCharAngle(&requests.FPDFText_GetCharAngle{TextPage: p.tp, Index: i})
	if err != nil {
		return 0, false
	}
	return float64(a.CharAngle), true
}

// charSource is what readPageText asks of a text page.
type charSource interface {
	unicodeAt(i int) (rune, error)
	generatedAt(i int) bool
	boxAt(i int) ([4]float32, bool)
	angleAt(i int) (float64, bool)
}
