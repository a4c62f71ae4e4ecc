package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/internal/hosttest"
	"github.com/writepath/writepath/internal/testenv"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

const hostCampaign = `name: host-e2e
workload: fio
options: [--name=h, --rw=randwrite, --bs=4k, --size=8M, --runtime=500ms, --time_based, --ioengine=psync, --direct=1]
matrix:
  host.scheduler: [mq-deadline, none]
  host.nr_requests: [2, 100]
rounds: 1
window: 0s-end
`

// TestHostKnobCampaign runs a campaign whose axes are the I/O scheduler
// and nr_requests of a loop device the test made, with a filesystem on it
// as the data directory: every run records each knob read back
// (nr_requests=2 clamped to 4 by the kernel, shown in the cell label),
// `runs show`, `runs compare` and the HTML report show them, and the host
// is as before at the end.
func TestHostKnobCampaign(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{SizeMiB: 128})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(hostCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, dir, "campaign", "run", "c.yaml", "--data-dir", fs.Dir); err == nil ||
		!strings.Contains(err.Error(), "add --allow-host scheduler,nr_requests (or all)") {
		t.Errorf("campaign with host knobs and no --allow-host: %v; want it refused, naming the flag", err)
	}
	out, errOut, err := runCLI(t, dir, "campaign", "run", "c.yaml", "--data-dir", fs.Dir,
		"--allow-host", "scheduler,nr_requests", "--interval=250ms")
	if err != nil {
		t.Fatalf("campaign run: %v\n%s\n%s", err, out, errOut)
	}
	saved.Check(t, "after the campaign")
	t.Logf("table:\n%s", out)
	for _, want := range []string{"host.scheduler=mq-deadline host.nr_requests=2 [nr_requests read 4]",
		"host.scheduler=none host.nr_requests=100", "all iops"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	ids := campaignRunIDs(t, filepath.Join(dir, "writepath.db"), fs.Loop)
	show, _, err := runCLI(t, dir, "runs", "show", ids[0])
	row := regexp.MustCompile(`worker-1\s+nr_requests\s+` + fs.Loop + `\s+128\s+2\s+4  \(the kernel's, not the value set\)`)
	if err != nil || !strings.Contains(show, "host knobs") || !row.MatchString(show) {
		t.Errorf("runs show %s = %v:\n%s", ids[0], err, show)
	}
	cmp, _, err := runCLI(t, dir, "runs", "compare", ids[0], ids[3])
	if err != nil || !strings.Contains(cmp, "host knobs (read back)") || !strings.Contains(cmp, "mq-deadline") || !strings.Contains(cmp, "4 (set 2)") {
		t.Errorf("runs compare = %v:\n%s", err, cmp)
	}
	html := filepath.Join(t.ArtifactDir(), "host-run.html")
	if _, errOut, err := runCLI(t, dir, "report", ids[0], "-o", html); err != nil {
		t.Fatalf("report: %v\n%s", err, errOut)
	}
	chromium := testenv.Chromium(t)
	dom := headless(t, chromium, html, "--dump-dom")
	if !strings.Contains(dom, "Host knobs") || !strings.Contains(dom, "<td>mq-deadline</td>") || !strings.Contains(dom, `class="differs"`) {
		t.Errorf("report of %s: no host knob table rendered", ids[0])
	}
}

// campaignRunIDs returns the campaign's run ids in plan order and checks
// that each run recorded both knobs read back on dev.
func campaignRunIDs(t *testing.T, db, dev string) []string {
	t.Helper()
	f, err := client.OpenFile(db)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	list, err := f.ListCampaigns(ctx, 0)
	if err != nil || len(list) != 1 || len(list[0].GetRuns()) != 4 {
		t.Fatalf("stored campaigns: %v, %v", list, err)
	}
	wantRead := []string{"mq-deadline 4", "mq-deadline 100", "none 4", "none 100"}
	var ids []string
	for i, cr := range list[0].GetRuns() {
		r, err := f.GetRun(ctx, cr.GetRunId())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, k := range client.HostKnobs(r) {
			got[k.Knob+"@"+k.Target] = k.Read
		}
		if read := got["scheduler@"+dev] + " " + got["nr_requests@"+dev]; read != wantRead[i] {
			t.Errorf("run %d (%s) read back %q; want %q", i, list[0].GetPlan().GetRuns()[i].GetCell(), read, wantRead[i])
		}
		ids = append(ids, cr.GetRunId())
	}
	return ids
}

// TestRunHostRefusals: `run --host` with a misspelt knob fails before
// anything is submitted, and one whose value the kernel refuses fails the
// submit naming it; neither changes the host.
func TestRunHostRefusals(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	dir := t.TempDir()
	fio := []string{"run", "fio", "--name=r", "--rw=randwrite", "--bs=4k", "--size=1M", "--runtime=1", "--data-dir", fs.Dir}
	for _, c := range []struct{ host, want string }{
		{"shceduler=none", `--host: host knob "shceduler": unknown host knob`},
		{"scheduler=noop", `host knob scheduler=noop: bad value: ` + fs.Loop + ` does not offer "noop"`},
		{"nr_requests=5000", `refuses nr_requests above`},
		{"mount=data=journal,bogus", `mount option bogus: refused by the kernel: ext4: Unknown parameter 'bogus'`},
	} {
		_, _, err := runCLI(t, dir, append(fio, "--host", c.host)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("run --host %s = %v; want one line with %q", c.host, err, c.want)
		}
		saved.Check(t, "after run --host "+c.host)
	}
	if _, err := os.Stat(filepath.Join(dir, "writepath.db")); err == nil {
		if f, err := client.OpenFile(filepath.Join(dir, "writepath.db")); err == nil {
			runs, _ := f.ListRuns(context.Background(), 0)
			f.Close()
			if len(runs) != 0 {
				t.Errorf("%d runs stored after refusals", len(runs))
			}
		}
	}
}

// TestHostKnobsAfterWorkerKilled: a worker process killed with -9 while
// its run's knobs are in force leaves them changed (and journaled); the
// worker started again on the same data directory restores every one
// before it connects.
func TestHostKnobsAfterWorkerKilled(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{SizeMiB: 128})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	addr := serveCoordinator(t, serveFlags{}).addr
	conn := connFlags{coordinator: addr}
	c, err := conn.dial("")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	args := []string{"worker", "--coordinator", addr, "--name", "kw", "--data-dir", fs.Dir,
		"--allow-host", "scheduler,nr_requests,read_ahead_kb,mount"}
	w := startChild(t, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	connected := func() bool {
		ws, err := c.Workers(ctx)
		return err == nil && len(ws) == 1 && ws[0].GetConnected()
	}
	waitFor(t, ctx, "the worker to connect", connected)
	spec, err := buildKindSpec("fio")([]string{"--name=k", "--rw=randwrite", "--bs=4k", "--size=8M", "--runtime=120",
		"--time_based", "--ioengine=psync", "--direct=1"})
	if err != nil {
		t.Fatal(err)
	}
	host := []*writepathv1.HostSetting{{Name: "scheduler", Value: "mq-deadline"}, {Name: "nr_requests", Value: "1000"},
		{Name: "read_ahead_kb", Value: "64"}, {Name: "mount", Value: "noatime,commit=20"}}
	if _, err := c.Control().SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: &writepathv1.RunSpec{Spec: spec, Host: host}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the knobs in force mid-run", func() bool {
		return strings.Contains(hosttest.QueueAttr(t, fs.Loop, "scheduler"), "[mq-deadline]") &&
			strings.Contains(hosttest.MountOptions(t, fs.Dir), "commit=20")
	})
	time.Sleep(500 * time.Millisecond) // the fio job is writing
	w.Process.Kill()
	w.Wait()
	if len(saved.Diff()) != 4 {
		t.Fatalf("after kill -9: %v; want the 4 knobs still changed (nothing restored them)", saved.Diff())
	}
	if st, err := os.Stat(filepath.Join(fs.Dir, ".writepath-host.journal")); err != nil || st.Size() == 0 {
		t.Fatalf("journal after kill -9: %v, %v; want the open set", st, err)
	}
	startChild(t, args...)
	waitFor(t, ctx, "the restarted worker to restore every knob", func() bool { return len(saved.Diff()) == 0 })
	waitFor(t, ctx, "the restarted worker to connect", connected)
}

func waitFor(t *testing.T, ctx context.Context, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// startChild runs the test binary as `writepath ARGS...` (see TestMain),
// killed at the end of the test.
func startChild(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), cliChildEnv+"="+strings.Join(args, "\x1f"))
	c.Stderr = &prefixWriter{t: t}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.ProcessState == nil {
			c.Process.Kill()
			c.Wait()
		}
	})
	return c
}

// prefixWriter logs a child's stderr through the test.
type prefixWriter struct{ t *testing.T }

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.t.Logf("child: %s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
