//go:build ragd_offline

package telemetry

import (
	"context"
	"errors"
)

// installOTLP refuses: the offline build links no OTLP exporter, which would add a third to its size.
func installOTLP(context.Context, func(string) string, string) (func(context.Context) error, error) {
	return nil, errors.New("OTEL_EXPORTER_OTLP_ENDPOINT is set, but this offline build of ragd (-tags ragd_offline) has no trace exporter: " +
		"use a release binary or `make build`, or unset the OTEL_EXPORTER_OTLP_* variables")
}
