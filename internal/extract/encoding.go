package extract

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/unicode"

	"github.com/ragd/ragd/internal/rag"
)

// decodeText returns the text of a text or Markdown file as UTF-8, without a byte-order mark. It reads
// UTF-8; UTF-16 with a byte-order mark; and, for bytes that are neither, the legacy Korean encoding CP949
// (a superset of EUC-KR, which Windows and older Korean software still write). Text that none of them
// decodes cleanly is refused with invalid_request rather than stored with replacement characters.
func decodeText(name string, data []byte) (string, error) {
	if enc := utf16BOM(data); enc != nil {
		s, ok := decodeStrict(enc, data[2:], utf16Replacements(data))
		if !ok {
			return "", rag.Errorf(rag.CodeInvalid, "%s: text starts with a UTF-16 byte-order mark but is not valid UTF-16", name)
		}
		return s, nil
	}
	data = trimBOM(data)
	if utf8.Valid(data) {
		return string(data), nil
	}
	if bytes.IndexByte(data, 0) < 0 {
		if s, ok := decodeStrict(korean.EUCKR, data, 0); ok {
			return s, nil
		}
	}
	return "", rag.Errorf(rag.CodeInvalid, "%s: text is not UTF-8, UTF-16 (with a byte-order mark) or EUC-KR/CP949", name)
}

// utf16BOM returns the UTF-16 decoder (without BOM handling: the caller cuts it) that data's byte-order mark
// names, or nil.
func utf16BOM(data []byte) encoding.Encoding {
	switch {
	case len(data) >= 2 && data[0] == 0xFF && data[1] == 0xFE:
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	case len(data) >= 2 && data[0] == 0xFE && data[1] == 0xFF:
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	}
	return nil
}

// decodeStrict decodes data with enc and reports whether every byte decoded: the decoders of x/text put
// U+FFFD in place of what they cannot decode, so the output must hold no more of them than the input
// encoded (own; always 0 for EUC-KR, which cannot encode U+FFFD).
func decodeStrict(enc encoding.Encoding, data []byte, own int) (string, bool) {
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil || bytes.Count(out, []byte("\uFFFD")) != own || !utf8.Valid(out) {
		return "", false
	}
	return string(out), true
}

// utf16Replacements counts the U+FFFD characters a UTF-16 file (BOM first) encodes itself; an odd length
// is never valid, so it returns -1, which no decoding matches.
func utf16Replacements(data []byte) int {
	if len(data)%2 != 0 {
		return -1
	}
	n := 0
	le := data[0] == 0xFF
	for i := 2; i+1 < len(data); i += 2 {
		if (le && data[i] == 0xFD && data[i+1] == 0xFF) || (!le && data[i] == 0xFF && data[i+1] == 0xFD) {
			n++
		}
	}
	return n
}
