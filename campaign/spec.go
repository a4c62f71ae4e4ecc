package campaign

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/writepath/writepath/internal/echo"
	"go.yaml.in/yaml/v3"
)

// Spec is a parsed campaign file.
type Spec struct {
	Name     string
	Workload string   // kind name: oltp, fio, crash
	Options  []string // base workload options in the kind's syntax
	Server   Server
	// Host are host knobs every run sets on its workers (hostknob names:
	// scheduler, nr_requests, dirty_ratio, mount, ...); a cell's own
	// replace them by name.
	Host   []Setting
	Matrix []Variable // in file order; the product varies the last fastest
	Cells  []ExplicitCell
	Groups []Group // in file order
	Rounds int
	Window Window
	// Aggregate is how rounds combine; only "median" is defined (with min
	// and max always reported beside it).
	Aggregate string
	Baseline  string // label of the baseline cell; empty: the first cell
	// Disk is the cloud-disk profile of every run, in `run --disk`
	// syntax ("capacity,size=4G"); empty: none. Matrix variables "disk"
	// (the profile's name, or none) and "disk.<key>" vary it per cell.
	Disk string
	// Columns are telemetry figures the result table adds per cell and
	// group ("w/s", "w_await", "log_waits/s", "dirty", "ckpt_age"),
	// computed over the window; the names are client's (checked there).
	Columns []string
}

// Server describes the managed server the workload starts, if any.
type Server struct {
	Binary   string
	Settings []Setting // base settings, applied before a cell's
}

// Setting is one server variable.
type Setting struct{ Key, Value string }

// Variable is one matrix axis: a server setting, a workload option when
// its name starts with "--", or a host knob when it starts with "host.".
type Variable struct {
	Name   string
	Values []string
}

// HostPrefix starts the name of a matrix axis that is a host knob
// ("host.scheduler").
const HostPrefix = "host."

// IsOption reports whether the variable is a workload option.
func (v Variable) IsOption() bool { return strings.HasPrefix(v.Name, "--") }

// IsHost reports whether the variable is a host knob.
func (v Variable) IsHost() bool { return strings.HasPrefix(v.Name, HostPrefix) }

// UsesDisk reports whether any cell has a disk profile.
func (s *Spec) UsesDisk() bool {
	for _, c := range s.Expand() {
		if c.Disk != "" {
			return true
		}
	}
	return false
}

// IsDisk reports whether the variable varies the disk profile: "disk"
// (its name) or "disk.<key>" (one of its keys).
func (v Variable) IsDisk() bool { return v.Name == "disk" || strings.HasPrefix(v.Name, "disk.") }

// ExplicitCell is a cell named in the spec rather than produced by the
// matrix, such as "fsync + dw on separate disk".
type ExplicitCell struct {
	Label   string
	Set     []Setting
	Options []string
	Host    []Setting
	Disk    string // replaces the spec's disk profile; "none" for none
}

// Group is a named worker selector; every cell runs on every group.
type Group struct {
	Name     string
	Selector map[string]string // label key -> value
}

// Window selects the intervals that count: [From, To) seconds from the run's
// start. To == 0 means the end of the run.
type Window struct{ From, To time.Duration }

func (w Window) String() string {
	if w.To == 0 {
		return fmt.Sprintf("%s-end", w.From)
	}
	return fmt.Sprintf("%s-%s", w.From, w.To)
}

// Limits on a campaign spec, checked before anything is expanded.
const (
	// MaxRuns bounds the runs one campaign plans: cells x groups x rounds
	// (the coordinator refuses a larger plan, coordinator.MaxCampaignRuns).
	MaxRuns = 10_000
	// MaxSpecBytes bounds a spec file.
	MaxSpecBytes = 1 << 20
)

// Parser parses campaign specs that run one of Workloads: the kinds the
// binary links, by name, as the command passes them (campaign links no
// kind). Without Workloads any named workload is accepted: a spec
// stored with a campaign, checked when it was planned.
type Parser struct {
	Workloads []string
}

// ParseFile reads and parses a campaign spec file, of any workload.
func ParseFile(path string) (*Spec, error) { return Parser{}.ParseFile(path) }

// Parse parses a campaign spec of any workload (Parser.Parse).
func Parse(name string, b []byte) (*Spec, error) { return Parser{}.Parse(name, b) }

// ParseFile reads and parses a campaign spec file.
func (ps Parser) ParseFile(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("campaign spec: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("campaign spec: %w", err)
	}
	return ps.Parse(path, b)
}

// Parse parses a campaign spec. name is used in error positions
// ("spec.yaml:12:3: ..."). Every problem found is reported (errors.Join).
func (ps Parser) Parse(name string, b []byte) (*Spec, error) {
	if len(b) > MaxSpecBytes {
		return nil, fmt.Errorf("%s: more than %d bytes, the limit for a campaign spec", name, MaxSpecBytes)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &parser{file: name, workloads: ps.Workloads}
	s := &Spec{Rounds: 3, Aggregate: "median"}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty campaign spec", name)
	}
	p.spec(doc.Content[0], s)
	p.check(s)
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return s, nil
}

func (p *parser) check(s *Spec) {
	if s.Name == "" {
		p.errs = append(p.errs, fmt.Errorf("%s: name is required", p.file))
	}
	switch {
	case p.workloads != nil && !contains(p.workloads, s.Workload):
		p.errs = append(p.errs, fmt.Errorf("%s: workload must be one of %s", p.file, strings.Join(p.workloads, ", ")))
	case s.Workload == "":
		p.errs = append(p.errs, fmt.Errorf("%s: workload is required", p.file))
	}
	if len(s.Matrix) == 0 && len(s.Cells) == 0 {
		p.errs = append(p.errs, fmt.Errorf("%s: a campaign needs a matrix or cells", p.file))
	}
	if len(s.Groups) == 0 {
		s.Groups = []Group{{Name: "all", Selector: map[string]string{}}}
	}
	for _, v := range s.Matrix {
		if strings.HasPrefix(v.Name, "disk.") && s.Disk == "" && !slices.ContainsFunc(s.Matrix, func(v Variable) bool { return v.Name == "disk" }) {
			p.errs = append(p.errs, fmt.Errorf("%s: matrix variable %s needs a disk profile (disk: NAME, or a disk variable)", p.file, v.Name))
		}
	}
	if err := s.checkSize(); err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s: %w", p.file, err))
		return // nothing may be expanded
	}
	if s.Baseline != "" && len(p.errs) == 0 {
		found := false
		for _, c := range s.Expand() {
			found = found || c.Label == s.Baseline
		}
		if !found {
			p.errs = append(p.errs, fmt.Errorf("%s: baseline %s names no cell", p.file, echo.Quote(s.Baseline)))
		}
	}
}

// checkSize counts the runs the spec plans without expanding it, with
// every product saturating past MaxRuns (a 20-variable matrix or
// rounds: 1000000000 must not be allocated to be refused).
func (s *Spec) checkSize() error {
	cells := 0
	if len(s.Matrix) > 0 {
		cells = 1
		for _, v := range s.Matrix {
			cells = mulSat(cells, len(v.Values))
		}
	}
	cells = min(cells+len(s.Cells), MaxRuns+1)
	runs := mulSat(mulSat(cells, len(s.Groups)), s.Rounds)
	if runs > MaxRuns {
		return fmt.Errorf("%s cells x %d groups x %d rounds plans more than %d runs, the limit per campaign (MaxRuns)",
			countText(cells), len(s.Groups), s.Rounds, MaxRuns)
	}
	return nil
}

// mulSat is a*b, or MaxRuns+1 when that is larger.
func mulSat(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > (MaxRuns+1)/b {
		return MaxRuns + 1
	}
	return min(a*b, MaxRuns+1)
}

func countText(n int) string {
	if n > MaxRuns {
		return fmt.Sprintf("more than %d", MaxRuns)
	}
	return fmt.Sprint(n)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
