package server

import (
	"slices"
	"testing"
)

func TestDefaultAllowedHosts(t *testing.T) {
	for addr, want := range map[string][]string{
		"127.0.0.1:8080":   {"127.0.0.1", "localhost", "::1"},
		"localhost:8080":   {"localhost", "127.0.0.1", "::1"},
		"[::1]:8080":       {"::1", "localhost", "127.0.0.1"},
		"127.0.0.2:9":      {"127.0.0.2", "localhost", "127.0.0.1", "::1"},
		"192.168.1.5:8080": {"192.168.1.5"},
		"ragd.lan:80":      {"ragd.lan"},
		"0.0.0.0:8080":     nil,
		"[::]:8080":        nil,
		":8080":            nil,
	} {
		if got := DefaultAllowedHosts(addr); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", addr, got, want)
		}
	}
}

func TestHostPolicy(t *testing.T) {
	p := newHostPolicy(DefaultAllowedHosts("127.0.0.1:8080"))
	for host, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:8080": true, "LOCALHOST": true, "localhost.:8080": true,
		"[::1]:8080": true, "::1": true, "127.0.0.1": true,
		"attacker.example": false, "attacker.example:8080": false, "": false, "127.0.0.2:8080": false,
		"localhost.attacker.example": false,
	} {
		if got := p.allows(host); got != want {
			t.Errorf("Host %q: allowed %v, want %v", host, got, want)
		}
	}
	if !newHostPolicy(nil).allows("anything.example") || !newHostPolicy([]string{"*"}).allows("x") {
		t.Error("no list, or *, must allow every host")
	}
}
