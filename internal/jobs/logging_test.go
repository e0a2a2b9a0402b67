package jobs

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestRiverLogger: River's routine Info lines (its start-up line, the producers' counts every minute) show
// only at debug level; its warnings and errors show at info level.
func TestRiverLogger(t *testing.T) {
	for _, tc := range []struct {
		level      slog.Level
		info, warn bool
	}{{slog.LevelInfo, false, true}, {slog.LevelDebug, true, true}, {slog.LevelError, false, false}} {
		var buf bytes.Buffer
		l := riverLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level})).With("component", "river"))
		l.Info("River client started", "client_id", "x")
		l.Warn("jobs: something odd")
		out := buf.String()
		if strings.Contains(out, "River client started") != tc.info || strings.Contains(out, "something odd") != tc.warn {
			t.Fatalf("level %s: %q", tc.level, out)
		}
		if tc.info && (!strings.Contains(out, "level=DEBUG") || !strings.Contains(out, "component=river")) {
			t.Fatalf("level %s: %q", tc.level, out)
		}
	}
}
