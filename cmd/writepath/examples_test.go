package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/client"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestExamplesPlan parses every example campaign, expands it, and builds
// every planned run's spec with its kind's own parser, as `campaign run`
// does before submitting anything.
func TestExamplesPlan(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v, %v; want at least 5", files, err)
	}
	cells := map[string]int{"flush-method-doublewrite.yaml": 6, "log-write-ahead-size.yaml": 3, "fio-scheduler.yaml": 4,
		"linux-io-stack.yaml": 4, "nvme-write-cache.yaml": 5}
	// Host knobs the examples set, per file: every planned run carries them.
	knobs := map[string][]string{"fio-scheduler.yaml": {"scheduler"}, "linux-io-stack.yaml": {"scheduler", "nr_requests"},
		"nvme-write-cache.yaml": nil}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			spec, err := campaign.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if want, ok := cells[filepath.Base(f)]; ok && len(spec.Expand()) != want {
				t.Errorf("%d cells; want %d", len(spec.Expand()), want)
			}
			plan, err := client.Plan(spec, buildKindSpec(spec.Workload), client.PlanOptions{File: f, HostName: checkHostName})
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
		})
	}
}
