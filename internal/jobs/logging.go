package jobs

import (
	"context"
	"log/slog"
)

// riverLogger is the logger River gets: its Info lines (client started and stopped, the producers' job counts
// every minute, maintenance runs, migrations) are routine and become Debug; its warnings and errors stay as
// they are. ragd logs what an operator needs (start-up, reconciliation, failed attempts) itself.
func riverLogger(l *slog.Logger) *slog.Logger {
	return slog.New(demoteInfo{l.Handler()})
}

type demoteInfo struct{ h slog.Handler }

func (d demoteInfo) Enabled(ctx context.Context, level slog.Level) bool {
	return d.h.Enabled(ctx, demote(level))
}

func (d demoteInfo) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return d.h.Handle(ctx, r)
}

func (d demoteInfo) WithAttrs(attrs []slog.Attr) slog.Handler {
	return demoteInfo{d.h.WithAttrs(attrs)}
}
func (d demoteInfo) WithGroup(name string) slog.Handler { return demoteInfo{d.h.WithGroup(name)} }

func demote(l slog.Level) slog.Level {
	if l >= slog.LevelInfo && l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}
