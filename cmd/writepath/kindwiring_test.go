package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/client"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/crash"
)

// crashRun is a stored crash run whose measured phase has one worker's
// summary (two rounds) and one worker that sent none.
func crashRun(t *testing.T, kind string) *writepathv1.Run {
	t.Helper()
	kill := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b, err := json.Marshal(crash.Result{Server: "mariadbd", Mode: "kill", Rounds: []crash.RoundResult{
		{Round: 1, Timeline: crash.Timeline{Kill: kill, Spawn: kill.Add(5 * time.Millisecond), Ready: kill.Add(time.Second)}},
		{Round: 2, Timeline: crash.Timeline{Kill: kill, ProcessStart: kill.Add(7 * time.Millisecond)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return &writepathv1.Run{Id: "r1", KindName: kind, Phases: []*writepathv1.PhaseRecord{{Name: crash.PhaseRounds, Measured: true,
		Workers: []*writepathv1.PhaseWorker{{Worker: "worker-1", Summary: b}, {Worker: "worker-2", Error: "lost"}}}}}
}

// TestRunTimelineAsksTheKind: the report's timelines are what the run's
// kind's Meta.Timeline reads from its workers' summaries; a kind without
// one has none (the command knows no kind's summary).
func TestRunTimelineAsksTheKind(t *testing.T) {
	got := runTimeline(crashRun(t, "crash"))
	want := []report.TimelineRound{
		{Round: 1, Points: []report.TimelinePoint{{Name: "kill", Ms: 0}, {Name: "process start", Ms: 5}, {Name: "ready", Ms: 1000}}},
		{Round: 2, Points: []report.TimelinePoint{{Name: "kill", Ms: 0}, {Name: "process start", Ms: 7}}},
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("runTimeline = %s\nwant %s", g, w)
	}
	for _, kind := range []string{"fio", "oltp", "nosuchkind"} {
		if got := runTimeline(crashRun(t, kind)); got != nil {
			t.Errorf("a %s run has timelines %v; want none", kind, got)
		}
	}
}

// runSource is a client.Source holding one run record.
type runSource struct {
	client.Source
	run *writepathv1.Run
}

func (s runSource) GetRun(context.Context, string) (*writepathv1.Run, error) { return s.run, nil }

// TestKindTextsAskTheKind: the quickstart prints each run's result in its
// kind's text (Meta.Text) for the workers that sent a summary, and nothing
// for a kind without one.
func TestKindTextsAskTheKind(t *testing.T) {
	rec := &writepathv1.Campaign{Runs: []*writepathv1.CampaignRun{{RunId: "r1"}}}
	var out bytes.Buffer
	if err := writeKindTexts(context.Background(), &out, runSource{run: crashRun(t, "crash")}, rec, "crash"); err != nil {
		t.Fatal(err)
	}
	m, _ := workload.ByName("crash")
	text, err := m.Text(crashRun(t, "crash").GetPhases()[0].GetWorkers()[0].GetSummary())
	if err != nil {
		t.Fatal(err)
	}
	if want := "\nrun r1 on worker-1:\n" + text; out.String() != want {
		t.Errorf("writeKindTexts printed %q; want %q", out.String(), want)
	}
	out.Reset()
	if err := writeKindTexts(context.Background(), &out, runSource{run: crashRun(t, "fio")}, rec, "fio"); err != nil || out.Len() != 0 {
		t.Errorf("a fio campaign: %q, %v; want nothing", out.String(), err)
	}
}

// TestFrontEndOrder: `run oltp` with sysbench's test name among its
// arguments is sysbench's command line (the kind's Meta.FrontEnd), help
// included; in writepath's order --help is the kind's; a front end this
// binary has no command for is refused, naming it.
func TestFrontEndOrder(t *testing.T) {
	dir := t.TempDir()
	viaRun, _, err := runCLI(t, dir, "run", "oltp", "oltp_write_only", "help")
	if err != nil {
		t.Fatalf("run oltp oltp_write_only help: %v", err)
	}
	direct, _, err := runCLI(t, dir, "sysbench", "oltp_write_only", "help")
	if err != nil {
		t.Fatalf("sysbench oltp_write_only help: %v", err)
	}
	if viaRun != direct || !strings.Contains(direct, "oltp_write_only options:") {
		t.Errorf("run oltp oltp_write_only help printed %q; want sysbench's %q", viaRun, direct)
	}
	oltp, _ := workload.ByName("oltp")
	if !wantsHelp(oltp, []string{"--help"}) || wantsHelp(oltp, []string{"oltp_write_only", "--help"}) {
		t.Error("--help is the kind's in writepath's order and sysbench's in sysbench's")
	}
	fio, _ := workload.ByName("fio")
	if frontEndOrder(fio, []string{"oltp_write_only"}) {
		t.Error("fio arguments taken for a front end's")
	}
	odd := workload.Meta{Name: "odd", FrontEnd: &workload.FrontEnd{Name: "nosuchtool", Takes: func([]string) bool { return true }}}
	err = (&runOptions{}).runFrontEnd(context.Background(), odd, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"nosuchtool"`) {
		t.Errorf("an unknown front end: %v; want an error naming it", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSecretsAreTheKinds: the options refused towards a store are those
// the kind declares (Meta.Secrets), crash's load included, with the
// message that names the option and its file twin.
func TestSecretsAreTheKinds(t *testing.T) {
	const msg = "campaign: --mysql-password would be stored with the run in the coordinator's file and shown by `runs show --json`; " +
		"put the password in a file (mode 0600) on each worker, inside its allowed paths, and give --mysql-password-file PATH"
	for _, kind := range []string{"oltp", "crash"} {
		_, err := buildKindSpec(kind)([]string{"--mysql-password=x"})
		if err == nil || err.Error() != msg {
			t.Errorf("%s campaign cell with --mysql-password: %v; want %q", kind, err, msg)
		}
	}
	fio, _ := workload.ByName("fio")
	if out, _, err := sealSecrets(fio.Secrets, []string{"--mysql-password=x"}, false); err != nil || len(out) != 1 {
		t.Errorf("fio declares no secret, yet --mysql-password was taken for one: %q, %v", out, err)
	}
}
