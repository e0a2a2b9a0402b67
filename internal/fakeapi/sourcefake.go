package fakeapi

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// sourceFake is what the fakes of source APIs (Notion, Drive) share: their lock, list page size, injected
// 429 bursts, call counts and the requests the real API would reject.
type sourceFake struct {
	mu         sync.Mutex
	pageSize   int
	burst      int
	retryAfter time.Duration
	calls      map[string]int
	violations []string
}

func newSourceFake() sourceFake { return sourceFake{pageSize: 100, calls: map[string]int{}} }

// SetPageSize caps the page size of list answers (to exercise pagination).
func (f *sourceFake) SetPageSize(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pageSize = n
}

// Throttle answers the next n API requests with the API's 429 (with Retry-After when retryAfter > 0).
func (f *sourceFake) Throttle(n int, retryAfter time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.burst, f.retryAfter = n, retryAfter
}

// throttled takes one request of the burst, if any is left, and returns its Retry-After.
func (f *sourceFake) throttled() (bool, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.burst == 0 {
		return false, 0
	}
	f.burst--
	return true, f.retryAfter
}

// Calls counts the requests answered successfully by endpoint.
func (f *sourceFake) Calls(endpoint string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[endpoint]
}

func (f *sourceFake) count(endpoint string) {
	f.mu.Lock()
	f.calls[endpoint]++
	f.mu.Unlock()
}

// Violations lists requests the real API would reject for their form.
func (f *sourceFake) Violations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.violations)
}

func (f *sourceFake) violate(format string, args ...any) {
	f.mu.Lock()
	f.violations = append(f.violations, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}
