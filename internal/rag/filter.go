package rag

import "time"

// Filter restricts retrieval and listings to documents. Every condition is document-level and stores apply
// all of them (and the principal's visibility) inside their candidate queries, never afterwards.
// Conditions are ANDed; the values inside one condition are ORed.
type Filter struct {
	// Collections are collection IDs or names.
	Collections []string `json:"collections,omitempty"`
	// DocumentIDs restricts to these documents.
	DocumentIDs []string `json:"document_ids,omitempty"`
	// Tags: the document has at least one of them.
	Tags []string `json:"tags,omitempty"`
	// MediaTypes: the document's media type is one of them.
	MediaTypes []string `json:"media_types,omitempty"`
	// CreatedAfter/CreatedBefore/UpdatedAfter/UpdatedBefore bound the document's timestamps (inclusive).
	CreatedAfter  *time.Time `json:"created_after,omitempty"`
	CreatedBefore *time.Time `json:"created_before,omitempty"`
	UpdatedAfter  *time.Time `json:"updated_after,omitempty"`
	UpdatedBefore *time.Time `json:"updated_before,omitempty"`
	// Metadata conditions on fields of the document's metadata JSON.
	Metadata []MetaCond `json:"metadata,omitempty"`
}

// IsZero reports whether f has no condition.
func (f Filter) IsZero() bool {
	return len(f.Collections) == 0 && len(f.DocumentIDs) == 0 && len(f.Tags) == 0 && len(f.MediaTypes) == 0 &&
		f.CreatedAfter == nil && f.CreatedBefore == nil && f.UpdatedAfter == nil && f.UpdatedBefore == nil &&
		len(f.Metadata) == 0
}

// MetaOp is a metadata comparison.
type MetaOp string

// Metadata operators. Range operators compare numbers numerically and strings lexically (so ISO dates work).
const (
	OpEq  MetaOp = "eq"
	OpNe  MetaOp = "ne"
	OpIn  MetaOp = "in"
	OpGt  MetaOp = "gt"
	OpGte MetaOp = "gte"
	OpLt  MetaOp = "lt"
	OpLte MetaOp = "lte"
)

// MetaCond is one condition on a top-level metadata field. Values holds one value for eq/ne/gt/gte/lt/lte
// and one or more for in. Values are strings, float64 or bool (as decoded from JSON).
type MetaCond struct {
	Key    string `json:"key"`
	Op     MetaOp `json:"op"`
	Values []any  `json:"values"`
}

// Number returns a metadata value as a float64 when it is a number (float64 as decoded from JSON, or an int
// or int64 set by Go code).
func Number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// DocumentQuery selects documents for listings.
type DocumentQuery struct {
	Filter
	// TitleContains matches a case-insensitive substring of the title.
	TitleContains string
	Statuses      []Status
	// Deleted lists the documents marked deleted and waiting to be purged (Store.TrashDocument) instead of
	// the live ones.
	Deleted bool
	// Limit (default 50, max 500) and Offset page the result, newest first.
	Limit  int
	Offset int
}

// DocumentPage is one page of a listing.
type DocumentPage struct {
	Documents []*Document `json:"documents"`
	Total     int         `json:"total"`
}
