package openai

import (
	"errors"

	"github.com/openai/openai-go/v3"

	"github.com/ragd/ragd/internal/provider"
)

// Explain reads a github.com/openai/openai-go/v3 error. OpenAI-compatible servers answer errors in
// several shapes ({"error": {...}}, {"error": "text"}, {"detail": ...}); the reason is taken from any.
func Explain(err error) provider.Failure {
	var ae *openai.Error
	if !errors.As(err, &ae) || ae == nil {
		return provider.Failure{Reason: err.Error()}
	}
	f := provider.Failure{Status: ae.StatusCode}
	switch {
	case ae.Message != "":
		f.Reason = ae.Message
		if ae.Type != "" {
			f.Reason = ae.Type + ": " + ae.Message
		}
	default:
		f.Reason = provider.ErrorBodyReason(ae.RawJSON())
	}
	return f
}
