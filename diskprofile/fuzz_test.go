package diskprofile

import (
	"strings"
	"testing"
)

// FuzzParseSpec: no input panics, refusals are one line, and every
// accepted spec survives the trip through the RunSpec's DiskSpec.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"capacity", "custom,baseline_iops=3000,burst_iops=6000,bucket=9000", "gp3,device=/dev/sdb", "bare,size=1G,mount=noatime"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSpec(in)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseSpec(%q): a refusal of several lines: %v", in, err)
			}
			return
		}
		if _, err := FromProto(ToProto(s.WithDefaults())); err != nil {
			t.Fatalf("ParseSpec(%q) accepted, FromProto refused: %v", in, err)
		}
	})
}
