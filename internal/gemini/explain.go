package gemini

import (
	"errors"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/ragd/ragd/internal/provider"
)

// Explain reads a google.golang.org/genai error: its status, message and the RetryInfo delay that
// the Gemini API puts in the details of a 429.
func Explain(err error) provider.Failure {
	var ae genai.APIError
	var aep *genai.APIError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &aep) && aep != nil:
		ae = *aep
	default:
		return provider.Failure{Reason: err.Error()}
	}
	f := provider.Failure{Status: ae.Code, Reason: strings.TrimSpace(strings.TrimSpace(ae.Status) + ": " + ae.Message)}
	f.Reason = strings.TrimPrefix(f.Reason, ": ")
	for _, d := range ae.Details {
		if t, _ := d["@type"].(string); strings.HasSuffix(t, "google.rpc.RetryInfo") {
			if s, ok := d["retryDelay"].(string); ok {
				if dur, err := time.ParseDuration(s); err == nil {
					f.RetryAfter = dur
				}
			}
		}
	}
	return f
}
