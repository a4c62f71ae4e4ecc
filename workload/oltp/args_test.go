package oltp

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args  []string
		check func(o Options) bool
	}{
		{nil, func(o Options) bool {
			return o.Tables == 1 && o.TableSize == 10000 && o.Threads == 1 && o.Time == 10*time.Second &&
				o.Rand.Type == oltpv1.RandType_RAND_TYPE_SPECIAL && o.Rand.Pct == 1 && o.Rand.Res == 75 &&
				o.Percentile == 95 && o.AutoInc && o.CreateSecondary && !o.SkipTrx && o.Conn.User == "sbtest" &&
				o.Conn.DB == "sbtest" && o.Conn.Port == 3306 && len(o.Conn.Ignore) == 3 && o.IndexUpdates == 1
		}},
		{[]string{"--tables=8", "--threads", "16", "--table_size=100000"}, func(o Options) bool {
			return o.Tables == 8 && o.Threads == 16 && o.TableSize == 100000
		}},
		{[]string{"oltp_write_only", "--rand-type=uniform", "--rand-seed=7"}, func(o Options) bool {
			return o.Rand.Type == oltpv1.RandType_RAND_TYPE_UNIFORM && o.Rand.Seed == 7
		}},
		{[]string{"--skip-trx", "--auto_inc=off", "--create-secondary=off"}, func(o Options) bool {
			return o.SkipTrx && !o.AutoInc && !o.CreateSecondary
		}},
		{[]string{"--rate=100", "--warmup-time=2", "--time=30", "--report-interval=1", "--percentile=99"}, func(o Options) bool {
			return o.Rate == 100 && o.Warmup == 2*time.Second && o.Time == 30*time.Second && o.ReportInterval == time.Second && o.Percentile == 99
		}},
		{[]string{"--mysql-ignore-errors=all"}, func(o Options) bool { return o.Conn.IgnoreAll && o.Conn.Ignored(1062) }},
		{[]string{"--mysql-ignore-errors=none"}, func(o Options) bool { return !o.Conn.Ignored(1213) }},
		{[]string{"--mysql-ignore-errors=1213,1062"}, func(o Options) bool { return o.Conn.Ignored(1062) && !o.Conn.Ignored(1205) }},
		{[]string{"--mysql-socket=/tmp/s.sock", "--mysql-user=root", "--mysql-password=", "--mysql-db=x", "--mysql-port=3307", "--mysql-host=db1"},
			func(o Options) bool {
				return o.Conn.Socket == "/tmp/s.sock" && o.Conn.User == "root" && o.Conn.DB == "x" && o.Conn.Port == 3307 && o.Conn.Host == "db1"
			}},
		{[]string{"--index-updates=2", "--non-index-updates=0", "--delete-inserts=3", "--db-ps-mode=disable"}, func(o Options) bool {
			return o.IndexUpdates == 2 && o.NonIndexUpdates == 0 && o.DeleteInserts == 3 && o.TextProtocol
		}},
		{[]string{"--time=0", "--events=100"}, func(o Options) bool { return o.Time == 0 && o.Events == 100 }},
	}
	for _, tt := range tests {
		spec, err := ParseArgs(tt.args)
		if err != nil {
			t.Errorf("ParseArgs(%q) = %v", tt.args, err)
			continue
		}
		o, err := Resolve(spec)
		if err != nil || !tt.check(o) {
			t.Errorf("ParseArgs(%q) resolves to %+v, %v", tt.args, o, err)
		}
	}
}

// TestParseArgsSeed: like sysbench, a run without --rand-seed (or with 0)
// draws a fresh seed; unlike sysbench it is written into the spec, so the
// spec alone reproduces the run.
func TestParseArgsSeed(t *testing.T) {
	a, _ := ParseArgs(nil)
	b, _ := ParseArgs([]string{"--rand-seed=0"})
	c, _ := ParseArgs([]string{"--rand-seed=7"})
	if a.RandSeed == 0 || b.RandSeed == 0 || a.RandSeed == b.RandSeed {
		t.Errorf("fresh seeds %d and %d; want two different non-zero seeds", a.RandSeed, b.RandSeed)
	}
	if c.RandSeed != 7 {
		t.Errorf("--rand-seed=7 gave seed %d", c.RandSeed)
	}
}

func TestParseArgsReportsEveryProblem(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--tabels=8"}, []string{"invalid option: --tabels=8 (did you mean --tables?)"}},
		{[]string{"--tables=x", "--rand-type=zipf", "--threads"}, []string{"--tables: 'x'", "distribution: zipf", "--threads needs a value"}},
		{[]string{"tables=8"}, []string{`argument "tables=8"`}},
		{[]string{"--tables=0", "--rand-spec-res=100"}, []string{"--tables=0", "--rand-spec-res=100"}},
		{[]string{"--time=0"}, []string{"never end"}},
		{[]string{"--mysql-ignore-errors=deadlock"}, []string{"not an error number"}},
		{[]string{"--mysql-db=a;b"}, []string{"--mysql-db"}},
		{[]string{"--db-driver=pgsql"}, []string{"MySQL protocol only"}},
		{[]string{"--histogram"}, []string{"writepath sysbench"}},
		{[]string{"--mysql-compression=yes"}, []string{"--mysql-compression=yes (want on or off)"}},
		{[]string{"--mysql-host=a,b"}, []string{"one server"}},
	}
	for _, tt := range tests {
		_, err := ParseArgs(tt.args)
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("ParseArgs(%q) = %v; want an error mentioning %q", tt.args, err, w)
			}
		}
	}
}

func TestRegisteredKind(t *testing.T) {
	m, ok := workload.ByName("oltp")
	if !ok || m.Kind != Kind || len(m.Phases) != 4 || m.Help == nil {
		t.Fatalf("ByName(oltp) = %+v, %v", m, ok)
	}
	if p, _ := m.Phase("prewarm"); p.Placement != workload.One || !p.OnRequest {
		t.Errorf("prewarm phase = %+v; want One, on request", p)
	}
	if p, _ := m.Phase("run"); p.Placement != workload.All || !p.Measured {
		t.Errorf("run phase = %+v; want All, measured", p)
	}
	if p, _ := m.Phase("prepare"); p.Placement != workload.One || p.Measured {
		t.Errorf("prepare phase = %+v; want One, not measured", p)
	}
	b, err := m.FromArgs([]string{"--tables=3", "--rand-seed=9"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.New(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.(*Workload).Options; got.Tables != 3 || got.Rand.Seed != 9 {
		t.Errorf("New(FromArgs) options = %+v", got)
	}
	b2, _ := m.FromArgs([]string{"--tables=3", "--rand-seed=9"})
	if !proto.Equal(mustSpec(t, b), mustSpec(t, b2)) || string(b) != string(b2) {
		t.Error("FromArgs is not deterministic")
	}
}

func mustSpec(t *testing.T, b []byte) *oltpv1.Spec {
	s := &oltpv1.Spec{}
	if err := proto.Unmarshal(b, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// FuzzParseArgs: any argument list either parses into a spec that
// resolves and round-trips through proto, or fails with an error.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{"--tables=8 --threads 16", "--rand-type=pareto --rand-pareto-h=0.3",
		"--mysql-ignore-errors=all --skip-trx", "--rate=10.5 --time=0 --events=5", "--mysqld-set=a=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		spec, err := ParseArgs(args)
		if err != nil {
			return
		}
		if _, err := Resolve(spec); err != nil {
			t.Fatalf("ParseArgs(%q) accepted a spec Resolve rejects: %v", args, err)
		}
		b, err := FromArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(b); err != nil {
			t.Fatalf("New(FromArgs(%q)) = %v", args, err)
		}
	})
}

func TestServerOptions(t *testing.T) {
	spec, err := ParseArgs([]string{"--mysqld-dir=/srv/db1", "--mysqld-binary=/usr/sbin/mysqld",
		"--mysqld-set=innodb_flush_method=O_DIRECT", "--mysqld-set", "skip-log-bin"})
	if err != nil {
		t.Fatal(err)
	}
	o, err := ServerOptions(spec.GetServer())
	if err != nil || o.Dir != "/srv/db1" || o.Binary != "/usr/sbin/mysqld" || len(o.Settings) != 2 ||
		o.Settings[0].String() != "innodb_flush_method=O_DIRECT" || o.Settings[1].String() != "skip-log-bin" {
		t.Errorf("ServerOptions = %+v, %v", o, err)
	}
	if _, err := ServerOptions(nil); err == nil {
		t.Error("ServerOptions(nil) succeeded")
	}
}

// TestCompressionValues: --mysql-compression takes sysbench 1.0.20's
// booleans (bare, on/off, true/false, 1/0), on either command line.
func TestCompressionValues(t *testing.T) {
	for _, tt := range []struct {
		arg  string
		want bool
	}{
		{"--mysql-compression", true}, {"--mysql-compression=on", true}, {"--mysql-compression=true", true},
		{"--mysql-compression=1", true}, {"--mysql-compression=off", false}, {"--mysql-compression=0", false},
		{"--mysql-compression=false", false},
	} {
		spec, err := ParseArgs([]string{tt.arg})
		if err != nil {
			t.Errorf("ParseArgs(%s): %v", tt.arg, err)
			continue
		}
		if spec.GetMysqlCompression() != tt.want {
			t.Errorf("ParseArgs(%s): compression %v; want %v", tt.arg, spec.GetMysqlCompression(), tt.want)
		}
		cl, ex := ParseCommandLine([]string{"oltp_write_only", tt.arg, "run"})
		if ex != nil {
			t.Errorf("ParseCommandLine(%s): %+v", tt.arg, ex)
			continue
		}
		if got := cl.Spec.GetMysqlCompression(); got != tt.want {
			t.Errorf("ParseCommandLine(%s): compression %v; want %v", tt.arg, got, tt.want)
		}
		o, err := Resolve(spec)
		if err == nil && o.Conn.Compress != tt.want {
			t.Errorf("Resolve(%s): Conn.Compress %v; want %v", tt.arg, o.Conn.Compress, tt.want)
		}
	}
}
