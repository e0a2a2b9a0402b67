package rag

import (
	"encoding/json"
)

// MetadataLimits bound a document's metadata, which is stored as JSON, copied into every search hit and
// listing, and read by every metadata filter. The zero value means the defaults.
type MetadataLimits struct {
	// MaxDepth bounds the nesting of objects and arrays (the metadata object itself is 1); default 8.
	// RAGD_MAX_METADATA_DEPTH.
	MaxDepth int
	// MaxKeys bounds the keys of all objects together; default 256. RAGD_MAX_METADATA_KEYS.
	MaxKeys int
	// MaxBytes bounds the metadata as JSON; default 32 KiB. RAGD_MAX_METADATA_BYTES.
	MaxBytes int
}

// Default metadata limits.
const (
	DefaultMetadataDepth = 8
	DefaultMetadataKeys  = 256
	DefaultMetadataBytes = 32 << 10
)

// WithDefaults returns l with zero (or negative) fields set to their defaults.
func (l MetadataLimits) WithDefaults() MetadataLimits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMetadataDepth
	}
	if l.MaxKeys <= 0 {
		l.MaxKeys = DefaultMetadataKeys
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMetadataBytes
	}
	return l
}

// Check returns CodeInvalid naming the limit when m is over one of l's limits (after defaults).
func (l MetadataLimits) Check(m map[string]any) error {
	if m == nil {
		return nil
	}
	l = l.WithDefaults()
	keys := 0
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		switch v := v.(type) {
		case map[string]any:
			if depth > l.MaxDepth {
				return Errorf(CodeInvalid, "metadata is nested more than %d levels deep (limit RAGD_MAX_METADATA_DEPTH)", l.MaxDepth)
			}
			keys += len(v)
			if keys > l.MaxKeys {
				return Errorf(CodeInvalid, "metadata has more than %d keys (limit RAGD_MAX_METADATA_KEYS)", l.MaxKeys)
			}
			for _, c := range v {
				if err := walk(c, depth+1); err != nil {
					return err
				}
			}
		case []any:
			if depth > l.MaxDepth {
				return Errorf(CodeInvalid, "metadata is nested more than %d levels deep (limit RAGD_MAX_METADATA_DEPTH)", l.MaxDepth)
			}
			for _, c := range v {
				if err := walk(c, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(m, 1); err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return WrapError(CodeInvalid, err, "metadata cannot be stored as JSON")
	}
	if len(b) > l.MaxBytes {
		return Errorf(CodeInvalid, "metadata is %d bytes as JSON, over the limit of %d (limit RAGD_MAX_METADATA_BYTES)", len(b), l.MaxBytes)
	}
	return nil
}

// MaxFilterValues bounds the values of one filter, all conditions together (collections, documents, tags,
// media types, metadata values). Stores bind each value as a parameter and SQLite takes at most 32,766 per
// statement; a filter over the bound is refused with invalid_request instead of failing in the store.
const MaxFilterValues = 10_000

// Check returns CodeInvalid when f has more than MaxFilterValues values.
func (f Filter) Check() error {
	n := len(f.Collections) + len(f.DocumentIDs) + len(f.Tags) + len(f.MediaTypes)
	for _, c := range f.Metadata {
		n += 1 + len(c.Values)
	}
	if n > MaxFilterValues {
		return Errorf(CodeInvalid, "filter has %d values, over the limit of %d", n, MaxFilterValues)
	}
	return nil
}
