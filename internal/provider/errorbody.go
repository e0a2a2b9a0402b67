package provider

import (
	"encoding/json"
	"strings"
)

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
