package client

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/writepath/writepath/campaign"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// SpecBuilder builds a kind's packed spec from its arguments; the CLI, which
// links every kind, provides it (workload.Meta.FromArgs).
type SpecBuilder func(args []string) (*anypb.Any, error)

// PlanOptions complete a plan.
type PlanOptions struct {
	File     string        // the spec's file name, for positions in messages
	Text     []byte        // the spec as written, stored with the campaign
	Interval time.Duration // reporting interval; zero: the coordinator's
	// Extra are arguments appended to every run's (local mode's sandbox
	// server connection, for instance).
	Extra []string
	// HostName, if set, checks each host knob's name (hostknob.Canonical),
	// so a misspelt knob fails the plan, naming the cell.
	HostName func(name string) error
	// Disk builds a cell's disk profile from its `run --disk` text; nil
	// refuses a campaign with disk profiles.
	Disk func(text string) (*writepathv1.DiskSpec, error)
	// Kind is what the campaign's kind declares: its unit is stored
	// with the plan.
	Kind Kind
}

// Plan expands a campaign into the ordered run list the coordinator
// executes. Runs of one cell and round on different groups share a batch,
// so they run at the same time when the groups' workers are disjoint.
// Every cell's arguments are built here, so a bad option fails before
// anything runs, naming the cell.
func Plan(spec *campaign.Spec, build SpecBuilder, o PlanOptions) (*writepathv1.CampaignPlan, error) {
	if err := CheckColumns(spec.Columns); err != nil {
		return nil, fmt.Errorf("%s: columns: %w", o.File, err)
	}
	cells := len(spec.Expand())
	plan := &writepathv1.CampaignPlan{Name: spec.Name, SpecText: string(o.Text), SpecFile: o.File,
		Aggregation: &writepathv1.Aggregation{WindowFrom: durationpb.New(spec.Window.From), WindowTo: durationpb.New(spec.Window.To),
			Aggregate: spec.Aggregate, Baseline: spec.BaselineLabel(), Unit: o.Kind.unit()}}
	built := map[string]*anypb.Any{}
	checked := map[int]bool{} // cells whose host knob names were checked
	disks := map[string]*writepathv1.DiskSpec{}
	var errs []error
	for _, p := range spec.Plan() {
		args := append(append([]string(nil), p.Args...), o.Extra...)
		key := strings.Join(args, "\x00")
		a, ok := built[key]
		if !ok {
			var err error
			if a, err = build(args); err != nil {
				errs = append(errs, fmt.Errorf("%s: cell %q: %w", o.File, p.Label, err))
			}
			built[key] = a
		}
		rs := &writepathv1.RunSpec{Spec: a, Selector: p.Selector, Host: hostSettings(p.Host),
			Name: fmt.Sprintf("%s [%s] %s r%d", spec.Name, p.Group, p.Label, p.Round)}
		if o.HostName != nil && !checked[p.Cell] {
			checked[p.Cell] = true
			for _, h := range p.Host {
				if err := o.HostName(h.Key); err != nil {
					errs = append(errs, fmt.Errorf("%s: cell %q: %w", o.File, p.Label, err))
				}
			}
		}
		if p.Disk != "" {
			d, seen := disks[p.Disk]
			if !seen {
				var err error
				if o.Disk == nil {
					err = errors.New("disk profiles are not available to this planner")
				} else {
					d, err = o.Disk(p.Disk)
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: cell %q: disk: %w", o.File, p.Label, err))
				}
				disks[p.Disk] = d
			}
			rs.Disk = d
		}
		if o.Interval > 0 {
			rs.Interval = durationpb.New(o.Interval)
		}
		plan.Runs = append(plan.Runs, &writepathv1.PlannedRun{Index: uint32(p.Index), Batch: uint32((p.Round-1)*cells + p.Cell),
			Cell: p.Label, Group: p.Group, Round: uint32(p.Round), Spec: rs})
	}
	return plan, errors.Join(errs...)
}

func hostSettings(ss []campaign.Setting) []*writepathv1.HostSetting {
	var out []*writepathv1.HostSetting
	for _, s := range ss {
		out = append(out, &writepathv1.HostSetting{Name: s.Key, Value: s.Value})
	}
	return out
}
