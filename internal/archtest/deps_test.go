// Package archtest holds tests about the shape of the code base itself.
package archtest

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/writepath/writepath/"

// rule constrains one package (or, with a trailing "/...", a package tree).
type rule struct {
	pkg string
	// ours lists the only packages of this module it may depend on,
	// transitively (prefixes; "/..." trees). nil means no constraint.
	ours []string
	// never lists packages (ours or not) that must not appear among its
	// transitive dependencies.
	never []string
}

// rules are DESIGN.md's import table. Kinds live under workload/<kind>.
// The general rule: a package imports only what its row lists, and a
// kind (kindOurs) only the seam, hist, beneath, mysqld, telemetry and its
// own spec. Each exception says why beside it; the packages with no row
// are in unruled, with why.
var rules = []rule{
	{pkg: "hist", ours: []string{}},
	// The seam between fabric and kinds knows neither: no wire format, no
	// SQL, no worker or coordinator (guard and local implement its
	// interfaces from above).
	{pkg: "workload", ours: []string{"hist", "beneath"},
		never: []string{"database/sql", mod + "proto/...", mod + "worker", mod + "coordinator/..."}},
	{pkg: "workload/fio/...", ours: kindOurs("fio"), never: kindNever},
	{pkg: "workload/oltp/...", ours: kindOurs("oltp"), never: kindNever},
	// Exception: crash's load is oltp's clients (oltp.StartLoad) and its
	// spec embeds oltp's, and a power cut runs through powerloss's FUSE
	// layer; no other kind imports a kind.
	{pkg: "workload/crash/...", ours: append(kindOurs("crash"), "workload/oltp/...", "proto/writepath/oltp/...", "powerloss"), never: kindNever},
	// crash's subjects below the harness stand alone: reading error logs
	// needs nothing of ours.
	{pkg: "workload/crash/errlog", ours: []string{"workload/crash/errlog"}},
	{pkg: "workload/crash/ledger", ours: []string{"workload/crash/ledger"}},
	{pkg: "workload/crash/innodbpage/...", ours: []string{"workload/crash/innodbpage/..."}},
	{pkg: "powerloss", ours: []string{"powerloss"}},
	// Exception beside the seam and the wire: a worker applies host knobs
	// and disk profiles (hostknob) and samples its disks (telemetry).
	{pkg: "worker/...", ours: []string{"worker/...", "proto/writepath/v1", "workload", "hist", "beneath", "telemetry/diskstats", "telemetry/blockdev", "hostknob"},
		never: []string{"database/sql", "go.etcd.io/bbolt"}},
	{pkg: "coordinator", ours: []string{"coordinator", "proto/writepath/v1", "hist", "coordinator/store", "results", "telemetry/diskstats", "labels", "internal/echo"},
		never: []string{"database/sql", mod + "workload/...", mod + "mysqld"}},
	// results: reading a run back, from a store or a ReadRun stream.
	{pkg: "results", ours: []string{"results", "proto/writepath/v1", "hist", "coordinator/store", "telemetry/diskstats", "internal/echo"},
		never: []string{"database/sql", mod + "coordinator", mod + "client", mod + "workload/...", mod + "mysqld"}},
	{pkg: "coordinator/store", ours: []string{"coordinator/store", "proto/writepath/v1", "internal/echo"}},
	{pkg: "mysqld", ours: []string{"mysqld"}},
	{pkg: "client", ours: []string{"client", "proto/writepath/v1", "hist", "results", "coordinator/store", "telemetry/diskstats", "telemetry/blocktrace/series", "campaign", "labels", "internal/echo"},
		never: []string{"database/sql", mod + "coordinator", mod + "workload/...", mod + "mysqld"}},
	// Exception: the embedded fabric is a coordinator and workers over
	// loopback gRPC, so it takes the fabric's transport and credentials,
	// but no kind: the command links those.
	{pkg: "local", ours: []string{"local", "coordinator", "coordinator/store", "results", "worker/...", "proto/writepath/v1", "hist", "workload", "beneath", "telemetry/diskstats", "telemetry/blockdev", "hostknob",
		"transport", "auth", "labels", "internal/echo"},
		never: []string{"database/sql", mod + "workload/fio", mod + "workload/oltp", mod + "workload/crash"}},
	// sysbench is the sysbench command over the oltp kind: it runs it in
	// process or reads a fabric's results through client, never a worker.
	// (What client itself may import is client's rule.)
	{pkg: "sysbench", never: []string{mod + "worker/...", mod + "local", mod + "workload/fio/...", mod + "workload/crash/..."}},
	{pkg: "campaign", ours: []string{"campaign", "hist", "internal/echo"}},
	{pkg: "report", ours: []string{"report", "campaign", "hist", "internal/echo"}},
	{pkg: "runview", ours: []string{"runview", "client", "report", "campaign", "hist", "proto/writepath/v1", "results", "coordinator/store", "telemetry/diskstats", "telemetry/blocktrace/series", "labels", "internal/echo"},
		never: []string{"database/sql", mod + "coordinator", mod + "workload/...", mod + "mysqld"}},
	{pkg: "auth", ours: []string{"auth"}},
	// transport: the fabric's one gRPC configuration; it knows credentials
	// (auth) and the fabric's service names, nothing of runs.
	{pkg: "transport", ours: []string{"transport", "auth", "proto/writepath/v1", "internal/echo"},
		never: []string{mod + "coordinator/...", mod + "worker/...", mod + "workload/..."}},
	{pkg: "labels", ours: []string{"labels", "internal/echo"}},
	{pkg: "internal/echo", ours: []string{"internal/echo"}},
	// Exception: guard implements workload.Guard, so it imports the seam.
	{pkg: "guard", ours: []string{"guard", "beneath", "workload", "hist"}},
	{pkg: "beneath", ours: []string{"beneath"}},
	{pkg: "internal/redact", ours: []string{"internal/redact"}},
	{pkg: "hostknob", ours: []string{"hostknob", "telemetry/diskstats", "telemetry/blockdev"}},
	{pkg: "internal/hosttest", ours: []string{"internal/hosttest"}},
	// diskprofile journals through hostknob (one restore journal per data
	// directory) and speaks the RunSpec's DiskSpec.
	{pkg: "diskprofile", ours: []string{"diskprofile", "hostknob", "telemetry/diskstats", "telemetry/blockdev", "proto/writepath/v1"},
		never: []string{"database/sql", mod + "worker/...", mod + "coordinator/..."}},
	{pkg: "metrics", ours: []string{"metrics", "coordinator", "coordinator/store", "results", "telemetry/diskstats", "proto/writepath/v1", "hist", "labels", "internal/echo"},
		never: []string{"database/sql", mod + "workload/...", mod + "mysqld"}},
	{pkg: "advise", ours: []string{"advise", "telemetry/..."}},
	// blocktrace builds hist histograms from its in-kernel buckets; its
	// series names are a package of their own so that readers need not
	// link the eBPF library.
	{pkg: "telemetry/blocktrace", ours: []string{"telemetry/blocktrace/...", "hist"}},
	{pkg: "telemetry/blocktrace/series", ours: []string{}},
	{pkg: "telemetry/...", ours: []string{"telemetry/...", "hist"}},
	// Generated code: the crash spec embeds oltp's options, nothing else.
	{pkg: "proto/...", ours: []string{"proto/..."}},
	{pkg: "internal/preempt", ours: []string{}},
}

// unruled are the packages no rule constrains, and why: what wires
// everything together.
var unruled = map[string]string{
	"cmd/writepath":                   "the command: wires every package into subcommands",
	"workload/all":                    "blank-imports every kind; only commands and tests import it",
	"bench/oltpbench":                 "a benchmark driver links the kind it times",
	"bench/tracetoggle":               "a benchmark driver links the tracer and the kind it times",
	"internal/archtest":               "tests only",
	"internal/fabrictest":             "a whole fabric in process for tests",
	"internal/fabrictest/fleetsim":    "simulates workers against a real coordinator",
	"internal/fabrictest/streamflood": "floods a real coordinator over the real transport",
	"internal/fabrictest/testkind":    "a test kind: the seam plus the fabric test's own spec",
	"internal/testenv":                "finds the tests' servers through mysqld",
}

// direct lists external packages that exactly one of ours may import.
var direct = map[string]string{
	"github.com/HdrHistogram/hdrhistogram-go": "hist",
	"go.etcd.io/bbolt":                        "coordinator/store",
	// The coordinator knows no metrics library; metrics reads its Stats.
	"github.com/prometheus/client_golang/prometheus":          "metrics",
	"github.com/prometheus/client_golang/prometheus/promhttp": "metrics",
}

// treeOnly lists external module trees that exactly one of ours may
// import (any package of the tree).
var treeOnly = map[string]string{
	"github.com/cilium/ebpf": "telemetry/blocktrace",
}

var kindNever = []string{mod + "proto/writepath/v1", mod + "worker/...", mod + "coordinator/..."}

// kindOurs is what a kind may import: the seam, histograms, confined
// files, managed servers (mysqld), telemetry (InnoDB's counters) and its
// own spec.
func kindOurs(kind string) []string {
	return []string{"workload/" + kind + "/...", "workload", "hist", "beneath", "mysqld", "telemetry/...", "proto/writepath/" + kind + "/..."}
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}|{{join .Deps \",\"}}", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(string(bytes.TrimSpace(out)), "\n") {
		f := strings.SplitN(line, "|", 3)
		pkg := strings.TrimPrefix(f[0], mod)
		imports, deps := split(f[1]), split(f[2])
		for ext, only := range direct {
			if pkg != only && contains(imports, ext) {
				t.Errorf("%s imports %s; only %s may", pkg, ext, only)
			}
		}
		for tree, only := range treeOnly {
			for _, imp := range imports {
				if pkg != only && match(tree+"/...", imp) {
					t.Errorf("%s imports %s; only %s may", pkg, imp, only)
				}
			}
		}
		for _, r := range rules {
			if !match(r.pkg, pkg) {
				continue
			}
			for _, d := range deps {
				for _, n := range r.never {
					if match(n, d) {
						t.Errorf("forbidden edge: %s -> %s", pkg, d)
					}
				}
				if r.ours == nil || !strings.HasPrefix(d, mod) {
					continue
				}
				if !anyMatch(r.ours, strings.TrimPrefix(d, mod)) {
					t.Errorf("forbidden edge: %s -> %s (allowed: %v)", pkg, strings.TrimPrefix(d, mod), r.ours)
				}
			}
		}
	}
}

// TestEveryPackageHasARule: a package is constrained by a rule or listed
// in unruled with why, so a new package cannot slip past the table.
func TestEveryPackageHasARule(t *testing.T) {
	out, err := exec.Command("go", "list", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		p = strings.TrimPrefix(p, mod)
		pkgs[p] = true
		ruled := false
		for _, r := range rules {
			ruled = ruled || match(r.pkg, p)
		}
		_, listed := unruled[p]
		switch {
		case !ruled && !listed:
			t.Errorf("package %s has no import rule: add one to rules, or to unruled with why", p)
		case ruled && listed:
			t.Errorf("package %s has a rule and is in unruled: remove it from unruled", p)
		}
	}
	for p := range unruled {
		if !pkgs[p] {
			t.Errorf("unruled names %s, which go list does not print", p)
		}
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func anyMatch(patterns []string, s string) bool {
	for _, p := range patterns {
		if match(p, s) {
			return true
		}
	}
	return false
}

// match reports whether s is pattern, or lies in the tree pattern names
// with a trailing "/...".
func match(pattern, s string) bool {
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return s == tree || strings.HasPrefix(s, tree+"/")
	}
	return s == pattern
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"workload", "workload", true},
		{"workload", "workload/fio", false},
		{"workload/...", "workload/fio", true},
		{"workload/...", "workloadx", false},
		{"workload/...", "workload", true},
	}
	for _, tt := range tests {
		if got := match(tt.pattern, tt.s); got != tt.want {
			t.Errorf("match(%q, %q) = %v; want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}
