package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/writepath/writepath/internal/testenv"
)

// TestQuickstartShort runs `writepath quickstart --short`: every step
// (fio, OLTP on a sandbox server, one crash round) with seconds-long runs,
// then checks the tables and that report.html renders in Chromium.
func TestQuickstartShort(t *testing.T) {
	testenv.MySQLServer(t)
	dir := t.TempDir()
	html := filepath.Join(t.ArtifactDir(), "quickstart.html")
	out, errOut, err := runCLI(t, dir, "quickstart", "--short", "-o", html)
	if err != nil {
		t.Fatalf("quickstart: %v\n%s\n%s", err, out, errOut)
	}
	t.Logf("stdout:\n%s", out)
	for _, want := range []string{"campaign quickstart-fio", "campaign quickstart-oltp", "campaign quickstart-crash",
		"fsync=1", "threads=8", "lost acknowledged commits: 0", "report: ",
		// the tables per kind (issue 21): fio's MB/s and fsync p99, oltp's
		// p95, the crash campaign's recovery columns, the telemetry columns
		"local MB/s", "local fsync p99", "local p95", "local recovery", "local start>query", "local kill>commit",
		"local lost", "local verdict", "local w_await ms", "local ckpt_age MiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("quickstart output lacks %q", want)
		}
	}
	if !strings.Contains(errOut, "[2/2 runs, 2/2 cells] finished") {
		t.Errorf("no progress lines on stderr:\n%s", errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "writepath-quickstart", "writepath.db")); err != nil {
		t.Errorf("store not kept: %v", err)
	}
	chromium := testenv.Chromium(t)
	// Every campaign charted (issue 21): fio's and oltp's medians, the crash
	// campaign's recovery bars, its run's restart timeline.
	checkRendered(t, chromium, html, []string{"campaign-bars", "campaign1-bars", "campaign2-recovery", "campaign-col0", "campaign2-col0",
		"r0-throughput", "r2-throughput", "r4-throughput", "r4-timeline", "r0-workers-p99", "r2-innodb-0"})
	dom := headless(t, chromium, html, "--dump-dom")
	if m := regexp.MustCompile(`data-errors="([^"]*)"`).FindStringSubmatch(dom); m != nil {
		t.Errorf("the report logged errors: %s", m[1])
	}
	for _, want := range []string{`data-campaign="quickstart-fio"`, `data-campaign="quickstart-oltp"`, `data-campaign="quickstart-crash"`,
		"local recovery</th>", "local kill&gt;commit</th>", "local verdict</th>"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
