// Package buildinfo tells which build of ragd is running: the version and commit that the release build
// stamps with -ldflags (see Makefile and .goreleaser.yaml), or, in a plain `go build` or `go install`, what
// the Go toolchain recorded (the module version, the VCS revision and whether the tree was modified).
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Set at build time: go build -ldflags "-X github.com/ragd/ragd/internal/buildinfo.version=v1.2.3
// -X github.com/ragd/ragd/internal/buildinfo.commit=abc1234".
var (
	version string
	commit  string
)

// Info describes the running build.
type Info struct {
	Version   string // "v1.2.3", or "dev" when neither -ldflags nor the module version says
	Commit    string // the VCS revision, "" when unknown; "+dirty" when the tree was modified
	GoVersion string
	Platform  string // GOOS/GOARCH
}

// Get returns the running build's Info.
func Get() Info {
	return get(version, commit, debug.ReadBuildInfo)
}

func get(ver, rev string, read func() (*debug.BuildInfo, bool)) Info {
	info := Info{Version: ver, Commit: rev, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := read(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		if info.Commit == "" {
			var modified bool
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					info.Commit = s.Value
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
			if len(info.Commit) > 12 {
				info.Commit = info.Commit[:12]
			}
			if info.Commit != "" && modified {
				info.Commit += "+dirty"
			}
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	return info
}

// String is "v1.2.3 (commit abc1234, go1.26.8, linux/amd64)".
func (i Info) String() string {
	s := i.Version + " ("
	if i.Commit != "" {
		s += "commit " + i.Commit + ", "
	}
	return s + i.GoVersion + ", " + i.Platform + ")"
}
