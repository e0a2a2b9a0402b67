package provider

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"google.golang.org/genai"
)

// ExplainGemini reads a google.golang.org/genai error: its status, message and the RetryInfo delay that
// the Gemini API puts in the details of a 429.
func ExplainGemini(err error) Failure {
	var ae genai.APIError
	var aep *genai.APIError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &aep) && aep != nil:
		ae = *aep
	default:
		return Failure{Reason: err.Error()}
	}
	f := Failure{Status: ae.Code, Reason: strings.TrimSpace(strings.TrimSpace(ae.Status) + ": " + ae.Message)}
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

// ExplainOpenAI reads a github.com/openai/openai-go/v3 error. OpenAI-compatible servers answer errors in
// several shapes ({"error": {...}}, {"error": "text"}, {"detail": ...}); the reason is taken from any.
func ExplainOpenAI(err error) Failure {
	var ae *openai.Error
	if !errors.As(err, &ae) || ae == nil {
		return Failure{Reason: err.Error()}
	}
	f := Failure{Status: ae.StatusCode}
	switch {
	case ae.Message != "":
		f.Reason = ae.Message
		if ae.Type != "" {
			f.Reason = ae.Type + ": " + ae.Message
		}
	default:
		f.Reason = ErrorBodyReason(ae.RawJSON())
	}
	return f
}

// ExplainAnthropic reads a github.com/anthropics/anthropic-sdk-go error ({"type": "error", "error":
// {"type": "rate_limit_error", "message": ...}}).
func ExplainAnthropic(err error) Failure {
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae == nil {
		return Failure{Reason: err.Error()}
	}
	return Failure{Status: ae.StatusCode, Reason: ErrorBodyReason(ae.RawJSON())}
}

// ErrorBodyReason extracts a readable reason from a JSON error body; the body itself when it is not JSON.
func ErrorBodyReason(body string) string {
	body = strings.TrimSpace(body)
	var v struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
		Msg    string          `json:"message"`
	}
	if json.Unmarshal([]byte(body), &v) != nil {
		return body
	}
	var inner struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Status  string `json:"status"`
	}
	if len(v.Error) > 0 && json.Unmarshal(v.Error, &inner) == nil && inner.Message != "" {
		t := inner.Type
		if t == "" {
			t = inner.Status
		}
		if t != "" {
			return t + ": " + inner.Message
		}
		return inner.Message
	}
	var s string
	if len(v.Error) > 0 && json.Unmarshal(v.Error, &s) == nil && s != "" {
		return s
	}
	if len(v.Detail) > 0 {
		if json.Unmarshal(v.Detail, &s) == nil && s != "" {
			return s
		}
		return string(v.Detail)
	}
	if v.Msg != "" {
		return v.Msg
	}
	return body
}
