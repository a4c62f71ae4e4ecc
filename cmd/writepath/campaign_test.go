package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/internal/testenv"
)

// runCLI runs the command table as the binary would, in dir.
func runCLI(t *testing.T, dir string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	t.Chdir(dir)
	var out, errOut bytes.Buffer
	cmd := newRootCmd()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

const fioCampaign = `name: fio-e2e
workload: fio
options: [--name=e2e, --rw=randwrite, --bs=4k, --size=4M, --runtime=2, --time_based, --ioengine=psync]
matrix:
  --fsync: [0, 4]
groups:
  a: disk=a
  b: disk=b
rounds: 2
window: 500ms-end
`

// TestCampaignFioEndToEnd runs a real campaign on the embedded fabric:
// 2 cells x 2 local groups x 2 rounds of a short fio job, then the stored
// table, then HTML reports of the campaign and of one of its runs rendered
// in headless Chromium with the network off.
func TestCampaignFioEndToEnd(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(fioCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runCLI(t, dir, "campaign", "run", "c.yaml", "--interval=250ms")
	if err != nil {
		t.Fatalf("campaign run: %v\n%s\n%s", err, out, errOut)
	}
	t.Logf("progress:\n%s\ntable:\n%s", errOut, out)
	for _, want := range []string{"fsync=0", "fsync=4", "a iops", "b iops", "base", "%"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "[8/8 runs, 2/2 cells] finished") || !strings.Contains(errOut, "ETA") {
		t.Errorf("progress lacks the final line or an ETA:\n%s", errOut)
	}
	f, err := client.OpenFile(filepath.Join(dir, "writepath.db"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.ListCampaigns(context.Background(), 0)
	f.Close()
	if err != nil || len(list) != 1 || len(list[0].GetRuns()) != 8 {
		t.Fatalf("stored campaigns: %v, %v", list, err)
	}
	id, runID := list[0].GetId(), list[0].GetRuns()[0].GetRunId()
	csv, _, err := runCLI(t, dir, "campaign", "show", id, "--format=csv")
	if err != nil || strings.Count(csv, "\n") != 5 || !strings.Contains(csv, "fsync=4,b,2,") {
		t.Errorf("campaign show --format=csv = %v:\n%s", err, csv)
	}
	chromium := testenv.Chromium(t)
	art := t.ArtifactDir()
	for _, tt := range []struct {
		id     string
		charts []string
	}{
		{id, []string{"campaign-bars", "r0-throughput", "r0-latency", "r0-distribution", "r0-workers"}},
		{runID, []string{"r0-throughput", "r0-latency", "r0-distribution", "r0-workers"}},
	} {
		html := filepath.Join(art, tt.id+".html")
		if _, errOut, err := runCLI(t, dir, "report", tt.id, "-o", html); err != nil {
			t.Fatalf("report %s: %v\n%s", tt.id, err, errOut)
		}
		checkRendered(t, chromium, html, tt.charts)
	}
}

// checkRendered loads html in headless Chromium with the network off,
// checks that every chart drew data, and saves a screenshot beside it.
func checkRendered(t *testing.T, chromium, html string, charts []string) {
	t.Helper()
	dom := headless(t, chromium, html, "--dump-dom")
	for _, id := range charts {
		m := regexp.MustCompile(`data-chart="` + id + `"[^>]*data-points="(\d+)"`).FindStringSubmatch(dom)
		if m == nil || m[1] == "0" {
			t.Errorf("%s: chart %s did not render with data (match %v)", filepath.Base(html), id, m)
		}
	}
	shot := strings.TrimSuffix(html, ".html") + ".png"
	headless(t, chromium, html, "--screenshot="+shot, "--window-size=1400,2400")
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("screenshot %s missing or blank: %v", shot, err)
	}
	t.Logf("screenshot: %s", shot)
}

func headless(t *testing.T, chromium, path string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
		"--virtual-time-budget=10000", "--hide-scrollbars",
	}, extra...)
	args = append(args, "file://"+path)
	out, err := exec.CommandContext(ctx, chromium, args...).Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", extra, err)
	}
	return string(out)
}
