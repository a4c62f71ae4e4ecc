package crash

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/mysqld"
	crashv1 "github.com/writepath/writepath/proto/writepath/crash/v1"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
)

// TestRawSpecLimits (issue 13, point 8): a raw crash spec is held to the
// command line's bounds by New, durations included (milliseconds that
// overflowed a time.Duration read as the default before).
func TestRawSpecLimits(t *testing.T) {
	for name, s := range map[string]*crashv1.Spec{
		"rounds 1e6":         {Rounds: 1_000_000},
		"load time 2^63 ms":  {LoadTimeMs: 1 << 63},
		"start timeout 1 yr": {StartTimeoutMs: 365 * 24 * 3600 * 1000},
		"setting with \\v":   {Server: &oltpv1.Server{Settings: []*oltpv1.Setting{{Key: "max_connections", Value: "1\v!include /etc/passwd"}}}},
		"setting key with =": {Server: &oltpv1.Server{Settings: []*oltpv1.Setting{{Key: "a=b", Value: "c"}}}},
		"load threads 1e5":   {Load: &oltpv1.Spec{Threads: proto.Uint32(100000)}},
		"NUL in dir":         {Server: &oltpv1.Server{Dir: "a\x00b"}},
	} {
		b, _ := proto.Marshal(s)
		if _, err := New(b); err == nil {
			t.Errorf("%s: New accepted the spec", name)
		}
	}
}

// FuzzParseArgs: `writepath crash` arguments never panic the parser, and
// a spec it builds is one a worker accepts, with every setting checked.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{"--rounds=3 --load-time=20s --set innodb_flush_method=fsync",
		"--power-loss --torn-writes --torn-seed=7 --kill-at 5s-15s", "--set !include=/etc/passwd", "--rounds 9999999",
		"--dir=db --snapshot=s --tables=2 --threads=4", "--kill-at=1h --load-time=10s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		spec, err := parseArgs(strings.Fields(in))
		if err != nil {
			return
		}
		b, err := proto.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(b); err != nil {
			t.Fatalf("parseArgs(%q) built a spec New refuses: %v", in, err)
		}
		for _, s := range spec.GetServer().GetSettings() {
			if err := (mysqld.Setting{Key: s.GetKey(), Value: s.GetValue()}).Check(); err != nil {
				t.Fatalf("parseArgs(%q) let setting %q through: %v", in, s, err)
			}
		}
	})
}

// FuzzSpecValidation: arbitrary bytes never panic New, and an accepted
// spec resolves within the bounds.
func FuzzSpecValidation(f *testing.F) {
	spec, err := parseArgs([]string{"--rounds=2", "--load-time=5s", "--set", "innodb_flush_method=fsync"})
	if err != nil {
		f.Fatal(err)
	}
	b, _ := proto.Marshal(spec)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		wl, err := New(b)
		if err != nil {
			return
		}
		c, err := resolve(wl.(*Workload).spec)
		if err != nil || c.rounds > maxRounds || c.loadTime > maxDuration || c.startTimeout > maxDuration || c.loadTime <= 0 {
			t.Fatalf("accepted spec resolves to %+v, %v", c, err)
		}
	})
}
