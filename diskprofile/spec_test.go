package diskprofile

import (
	"strings"
	"testing"
	"time"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want func(Spec) bool
	}{
		{"capacity", func(s Spec) bool { return s.BaselineIOPS == 5000 && s.BaselineBPS == 140e6 && s.BurstSeconds() == 40 }},
		{"gp2-100g", func(s Spec) bool { return s.BurstSeconds() == 2000 }},
		{"gp3,device=/dev/sdb", func(s Spec) bool { return s.Device == "/dev/sdb" && !s.Bursts() }},
		{"capacity,bucket=50000,fs=xfs,size=8G,dir=cloud,mount=noatime+commit=60", func(s Spec) bool {
			return s.Bucket == 50000 && s.FS.Type == "xfs" && s.FS.Size == 8<<30 && s.FS.Dir == "cloud" &&
				strings.Join(s.FS.MountOptions, ",") == "noatime,commit=60"
		}},
		{"custom,baseline_iops=3000,baseline_mbps=125,burst_iops=6000,burst_mbps=250,bucket=300000,refill=1000,credits=0", func(s Spec) bool {
			return s.BaselineBPS == 125e6 && s.Refill == 1000 && s.Credits == 0 && s.BurstSeconds() == 100
		}},
		{"bare", func(s Spec) bool { return !s.Capped() }},
		{"custom,baseline_iops=100,latency=2ms", func(s Spec) bool { return s.Latency == 2*time.Millisecond }},
	} {
		s, err := ParseSpec(tc.in)
		if err != nil || !tc.want(s) {
			t.Errorf("ParseSpec(%q) = %+v, %v", tc.in, s, err)
		}
	}
}

func TestParseSpecRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"nvme-ultra", "not a built-in"},
		{"custom,baseline_iops=-5", "baseline_iops -5 is negative"},
		{"custom,baseline_iops=1000,burst_iops=500,bucket=10", "burst_iops 500 is below baseline_iops 1000"},
		{"custom,baseline_iops=1000,baseline_mbps=100,burst_mbps=50", "burst_mbps 50 is below baseline_mbps 100"},
		{"custom,baseline_iops=1000,burst_iops=2000", "needs a credit bucket"},
		{"custom,baseline_iops=1000,bucket=10", "needs burst_iops above baseline_iops"},
		{"capacity,credits=-1", "credits -1 is negative"},
		{"capacity,credits=900000", "exceed the bucket"},
		{"capacity,dir=../etc", "plain relative path"},
		{"capacity,dir=/mnt", "plain relative path"},
		{"capacity,fs=vfat", "not one of ext4, xfs"},
		{"capacity,size=1M", "outside 64 MiB"},
		{"capacity,mount=remount", "not a filesystem option"},
		{"capacity,mount=a;b", "not a filesystem option"},
		{"capacity,device=sdb", "absolute path"},
		{"capacity,nope=1", "unknown key"},
		{"capacity,bucket", "want key=value"},
		{"custom,latency=-1s", "latency -1s is outside"},
		{"custom,baseline_iops=1e3", "want a whole number"},
	} {
		_, err := ParseSpec(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseSpec(%q) = %v; want one line with %q", tc.in, err, tc.want)
		}
	}
}

func TestAllow(t *testing.T) {
	a, err := ParseAllow([]string{"loop,/dev/sdb", "/dev/nvme1n1"})
	if err != nil || !a.Loop() || len(a.Devices()) != 2 || a.String() != "loop,/dev/sdb,/dev/nvme1n1" {
		t.Errorf("ParseAllow = %+v, %v", a, err)
	}
	if _, err := ParseAllow([]string{"sdb"}); err == nil {
		t.Error("ParseAllow(sdb): want an error, a device is a path")
	}
	if !(Allow{}).Empty() {
		t.Error("the zero Allow allows something")
	}
}
