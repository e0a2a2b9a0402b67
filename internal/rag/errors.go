package rag

import (
	"errors"
	"fmt"
)

// Code is an application error code. Each code maps to exactly one HTTP status (see HTTPStatus) and is what
// API clients see in {"error": "<code>", "message": "..."}.
type Code string

// The error codes of SPEC.md "Errors", and the two that documents fail with when over a budget.
const (
	CodeQuestionRequired     Code = "question_required"      // 400
	CodeInvalid              Code = "invalid_request"        // 400
	CodeUnauthorized         Code = "unauthorized"           // 401
	CodeForbidden            Code = "forbidden"              // 403
	CodeNotFound             Code = "not_found"              // 404
	CodeConflict             Code = "conflict"               // 409
	CodePayloadTooLarge      Code = "payload_too_large"      // 413
	CodeUnsupportedMediaType Code = "unsupported_media_type" // 415
	// CodeTooLarge: a document whose content is over a budget of its extraction (bytes inflated from an
	// archive, characters, pages, chunks, memory); the message names the limit. Never retried.
	CodeTooLarge Code = "too_large" // 413
	// CodeTooComplex: a document whose structure is over a budget (XML depth or element count, time to
	// extract); the message names the limit. Never retried.
	CodeTooComplex      Code = "too_complex"      // 422
	CodeRateLimited     Code = "rate_limited"     // 429
	CodeDBError         Code = "db_error"         // 500
	CodeInternal        Code = "internal"         // 500
	CodeEmbeddingFailed Code = "embedding_failed" // 502
	CodeLLMFailed       Code = "llm_failed"       // 502
)

var httpStatus = map[Code]int{
	CodeQuestionRequired:     400,
	CodeInvalid:              400,
	CodeUnauthorized:         401,
	CodeForbidden:            403,
	CodeNotFound:             404,
	CodeConflict:             409,
	CodePayloadTooLarge:      413,
	CodeUnsupportedMediaType: 415,
	CodeTooLarge:             413,
	CodeTooComplex:           422,
	CodeRateLimited:          429,
	CodeDBError:              500,
	CodeInternal:             500,
	CodeEmbeddingFailed:      502,
	CodeLLMFailed:            502,
}

// HTTPStatus returns the HTTP status for code; unknown codes are 500.
func HTTPStatus(code Code) int {
	if s, ok := httpStatus[code]; ok {
		return s
	}
	return 500
}

// Error is ragd's application error: a code, a message that is safe to show to the user, and an optional
// wrapped cause that is only logged.
type Error struct {
	Code    Code
	Message string
	Err     error
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted, user-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WrapError returns an *Error with code and message that wraps cause (cause is logged, never shown).
func WrapError(code Code, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: cause}
}

// Sentinel errors returned by stores. Callers test them with errors.Is.
var (
	// ErrNotFound means the requested object does not exist or is not visible to the principal.
	ErrNotFound = errors.New("not found")
	// ErrConflict means a unique constraint would be violated (e.g. a collection name that exists).
	ErrConflict = errors.New("conflict")
)

// ErrorCode returns the code of err: the code of the first *Error in its chain, not_found / conflict for the
// sentinels, internal for everything else (and "" for nil).
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return CodeNotFound
	case errors.Is(err, ErrConflict):
		return CodeConflict
	}
	return CodeInternal
}

// ErrorMessage returns the user-safe message of err. Errors that are not *Error (or sentinels) say only
// "internal error": their text may contain paths, SQL or keys.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return "not found"
	case errors.Is(err, ErrConflict):
		return "already exists"
	}
	return "internal error"
}
