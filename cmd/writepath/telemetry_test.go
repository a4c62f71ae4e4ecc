package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/writepath/writepath/workload/fio"
)

// TestRunFioShowIOStat is `writepath run fio --show iostat` on the embedded
// fabric (a real direct-IO job in a temporary directory), then `runs show`
// and `runs show --json` on its store: the live lines carry the device
// columns with writes, and the stored run prints its device table.
func TestRunFioShowIOStat(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "writepath.db")
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := runKind(ctx, []string{"fio", "--show", "iostat", "--data-dir", dir, "--db", db, "--interval", "500ms",
		"--name=t", "--rw=randwrite", "--bs=4k", "--size=16M", "--runtime=2", "--time_based", "--direct=1",
		"--ioengine=libaio", "--iodepth=8"}, &out, &errOut)
	if err != nil {
		t.Fatalf("run fio: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	if !regexp.MustCompile(`\| \S+ w/s [1-9]\d* wkB/s`).MatchString(out.String()) {
		t.Errorf("no live line with device writes:\n%s", out.String())
	}
	m := regexp.MustCompile(`run (\S+): finished`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no finished run in:\n%s", out.String())
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"show", m[1], "--db", db}, "devices (iostat -x"},
		{[]string{"show", m[1], "--db", db, "--json"}, `"wkB/s"`},
	} {
		cmd := newRunsCmd()
		var shown bytes.Buffer
		cmd.SetOut(&shown)
		cmd.SetArgs(tt.args)
		if err := cmd.ExecuteContext(ctx); err != nil || !strings.Contains(shown.String(), tt.want) {
			t.Errorf("runs %v = %v; output lacks %q:\n%s", tt.args, err, tt.want, shown.String())
		}
	}
}

// TestTelemetryDirs: the disks sampled are the data directory's and those
// of every file the fio spec's jobs use, from the parsed spec (job files
// included), not from the command's words.
func TestTelemetryDirs(t *testing.T) {
	jobFile := filepath.Join(t.TempDir(), "j.fio")
	if err := os.WriteFile(jobFile, []byte("[a]\nsize=1m\ndirectory=/jf\n[b]\nsize=1m\nfilename=/mnt/g\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--name=x", "--size=1m"}, []string{"/d"}},
		{[]string{"--directory=sub", "--name=x", "--size=1m"}, []string{"/d", "/d/sub"}},
		{[]string{"--directory=/x", "--name=x", "--size=1m", "--numjobs=2"}, []string{"/d", "/x"}},
		{[]string{"--name=a", "--size=1m", "--filename=/mnt/f", "--name=b", "--size=1m", "--filename=rel"}, []string{"/d", "/mnt"}},
		{[]string{jobFile}, []string{"/d", "/jf", "/mnt"}},
	} {
		spec, err := fio.ParseArgs(tt.args)
		if err != nil {
			t.Fatalf("ParseArgs(%q): %v", tt.args, err)
		}
		a, err := anypb.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := telemetryDirs("/d", a); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("telemetryDirs(/d, %q) = %q; want %q", tt.args, got, tt.want)
		}
	}
	if got := telemetryDirs("/d", nil); len(got) != 1 {
		t.Errorf("no spec: %q; want the data dir", got)
	}
}
