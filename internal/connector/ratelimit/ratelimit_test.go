package ratelimit

import (
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"0.5":                           500 * time.Millisecond,
		"-1":                            0,
		"soon":                          0,
		"Thu, 01 Jan 2026 00:00:10 GMT": 10 * time.Second,
		"Wed, 31 Dec 2025 23:00:00 GMT": 0,
	}
	for h, want := range cases {
		if got := RetryAfter(h, now); got != want {
			t.Errorf("RetryAfter(%q) = %v, want %v", h, got, want)
		}
	}
}
