package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	stamped := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Main: debug.Module{Version: "v0.9.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	devel := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	for _, tc := range []struct {
		name, ver, rev      string
		read                func() (*debug.BuildInfo, bool)
		wantVer, wantCommit string
	}{
		{"LdflagsWin", "v1.2.3", "abc1234", stamped, "v1.2.3", "abc1234"},
		{"BuildInfoFallback", "", "", stamped, "v0.9.0", "0123456789ab+dirty"},
		{"Devel", "", "", devel, "dev", ""},
		{"NoBuildInfo", "", "", none, "dev", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := get(tc.ver, tc.rev, tc.read)
			if got.Version != tc.wantVer || got.Commit != tc.wantCommit {
				t.Fatalf("got %+v", got)
			}
			if s := got.String(); !strings.HasPrefix(s, tc.wantVer+" (") || (tc.wantCommit != "") != strings.Contains(s, "commit "+tc.wantCommit) {
				t.Fatalf("String() = %q", s)
			}
		})
	}
}
