package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/client"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/workload"
)

// TestExamplesPlan parses every example campaign, expands it, and builds
// every planned run's spec with its kind's own parser, as `campaign run`
// does before submitting anything.
func TestExamplesPlan(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) < 8 {
		t.Fatalf("examples: %v, %v; want at least 8", files, err)
	}
	cells := map[string]int{"flush-method-doublewrite.yaml": 6, "log-write-ahead-size.yaml": 3, "fio-scheduler.yaml": 4,
		"linux-io-stack.yaml": 4, "nvme-write-cache.yaml": 5,
		"cloud-io-capacity.yaml": 4, "cloud-flush-method-doublewrite.yaml": 8, "cloud-crash-recovery.yaml": 4}
	// Host knobs the examples set, per file: every planned run carries them.
	knobs := map[string][]string{"fio-scheduler.yaml": {"scheduler"}, "linux-io-stack.yaml": {"scheduler", "nr_requests"},
		"nvme-write-cache.yaml": nil}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			spec, err := campaign.Parser{Workloads: kindNames()}.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if want, ok := cells[filepath.Base(f)]; ok && len(spec.Expand()) != want {
				t.Errorf("%d cells; want %d", len(spec.Expand()), want)
			}
			plan, err := client.Plan(spec, buildKindSpec(spec.Workload), client.PlanOptions{File: f, HostName: checkHostName, Disk: diskSpec})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range knobs[filepath.Base(f)] {
				for _, r := range plan.GetRuns() {
					if !slices.ContainsFunc(r.GetSpec().GetHost(), func(h *writepathv1.HostSetting) bool { return h.GetName() == want }) {
						t.Errorf("planned run %d (%s) does not set host knob %s", r.GetIndex(), r.GetCell(), want)
					}
				}
			}
			if want := len(spec.Expand()) * len(spec.Groups) * spec.Rounds; len(plan.GetRuns()) != want {
				t.Errorf("%d planned runs; want %d", len(plan.GetRuns()), want)
			}
			for _, r := range plan.GetRuns() {
				if strings.HasPrefix(filepath.Base(f), "cloud-") && strings.Contains(r.GetCell(), "disk=capacity-mini") &&
					r.GetSpec().GetDisk().GetBaselineIops() != 100 {
					t.Errorf("run %q: disk %v; want capacity-mini's caps", r.GetCell(), r.GetSpec().GetDisk())
				}
			}
		})
	}
}

// TestExamplesGuardedEmbedded (issue 13, point 3): on the embedded
// fabric the examples' specs pass their workers' guard, which allows what
// the campaign names (server dir, snapshot, binary, --drop-caches); the
// doublewrite example's innodb_doublewrite_dir=/mnt/dw, a directory a
// server setting names, needs an explicit --allow-path /mnt/dw.
func TestExamplesGuardedEmbedded(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			spec, err := campaign.Parser{Workloads: kindNames()}.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if spec.Workload == "fio" {
				// No server settings; its 4 x 4 GiB would only test
				// this machine's free space.
				t.Skip("fio example: nothing beyond the data dir to allow")
			}
			plan, err := client.Plan(spec, buildKindSpec(spec.Workload), client.PlanOptions{File: f, Disk: diskSpec})
			if err != nil {
				t.Fatal(err)
			}
			dw := filepath.Base(f) == "flush-method-doublewrite.yaml"
			err = checkPlanEmbedded(t, plan, embeddedGuardFlags{})
			if dw != (err != nil) || dw && !strings.Contains(err.Error(), "innodb_doublewrite_dir=/mnt/dw") {
				t.Fatalf("guarded without --allow-path: %v; want a refusal only for innodb_doublewrite_dir", err)
			}
			if dw {
				t.Logf("refused as expected: %v", err)
				if err := checkPlanEmbedded(t, plan, embeddedGuardFlags{paths: []string{"/mnt/dw"}}); err != nil {
					t.Errorf("with --allow-path /mnt/dw: %v", err)
				}
			}
		})
	}
}

// checkPlanEmbedded checks every planned run's spec against the guard an
// embedded campaign would give its workers.
func checkPlanEmbedded(t *testing.T, plan *writepathv1.CampaignPlan, flags embeddedGuardFlags) error {
	var specs []*anypb.Any
	for _, r := range plan.GetRuns() {
		specs = append(specs, r.GetSpec().GetSpec())
	}
	data := t.TempDir()
	g, err := embeddedGuard(data, flags, specs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		m, _ := workload.Lookup(s.GetTypeUrl())
		wl, err := m.New(s.GetValue())
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := wl.(workload.Checker); ok {
			if err := c.Check(workload.Env{DataDir: data, Guard: g}); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestCampaignSettingsChecked (issue 13, point 3): a campaign's
// server.settings and matrix settings go through the same check as --set,
// so a control character or a directive cannot reach my.cnf from YAML.
func TestCampaignSettingsChecked(t *testing.T) {
	for _, text := range []string{
		"name: x\nworkload: oltp\noptions: [--mysqld-dir=db]\nserver:\n  settings:\n    innodb_flush_method: \"O_DIRECT\\v!include /etc/passwd\"\nmatrix:\n  --threads: [1]\ngroups: {g: a=b}\n",
		"name: x\nworkload: crash\noptions: [--rounds=1]\nmatrix:\n  \"!include\": [/etc/passwd]\ngroups: {g: a=b}\n",
		"name: x\nworkload: crash\noptions: [--rounds=1]\nmatrix:\n  \"log_error\": [\"/tmp/x\\r\"]\ngroups: {g: a=b}\n",
	} {
		spec, err := campaign.Parse("x.yaml", []byte(text))
		if err != nil {
			t.Fatalf("campaign.Parse(%q): %v", text, err)
		}
		if _, err := client.Plan(spec, buildKindSpec(spec.Workload), client.PlanOptions{File: "x.yaml"}); err == nil {
			t.Errorf("campaign %q planned; want its setting refused", text)
		} else {
			t.Logf("refused: %v", err)
		}
	}
}
