package campaign

import (
	"strings"
)

// Cell is one combination of settings and options.
type Cell struct {
	Label   string
	Set     []Setting // server settings: the base, then the cell's
	Options []string  // workload options: the base, then the cell's
	Host    []Setting // host knobs: the base, with the cell's replacing by name
	// Disk is the cell's disk profile in `run --disk` syntax; "" none.
	Disk string
}

// Expand returns the matrix product (the last variable varying fastest)
// followed by the explicit cells.
func (s *Spec) Expand() []Cell {
	var cells []Cell
	if len(s.Matrix) > 0 {
		idx := make([]int, len(s.Matrix))
		for {
			cells = append(cells, s.matrixCell(idx))
			if !next(idx, s.Matrix) {
				break
			}
		}
	}
	for _, e := range s.Cells {
		c := Cell{Label: e.Label, Host: withSettings(s.Host, e.Host...), Disk: s.Disk}
		if e.Disk != "" {
			c.Disk = e.Disk
		}
		if c.Disk == "none" {
			c.Disk = ""
		}
		c.Set = append(append(c.Set, s.Server.Settings...), e.Set...)
		c.Options = append(append(c.Options, s.Options...), e.Options...)
		cells = append(cells, c)
	}
	return cells
}

func (s *Spec) matrixCell(idx []int) Cell {
	c := Cell{Host: withSettings(s.Host), Disk: s.Disk}
	c.Set = append(c.Set, s.Server.Settings...)
	c.Options = append(c.Options, s.Options...)
	labels := make([]string, 0, len(idx))
	for i, v := range s.Matrix {
		val := v.Values[idx[i]]
		labels = append(labels, strings.TrimPrefix(v.Name, "--")+"="+val)
		switch {
		case v.Name == "disk":
			c.Disk = withDiskName(c.Disk, val)
		case v.IsDisk():
			c.Disk += "," + strings.TrimPrefix(v.Name, "disk.") + "=" + val
		case v.IsOption():
			c.Options = append(c.Options, v.Name+"="+val)
		case v.IsHost():
			c.Host = withSettings(c.Host, Setting{Key: strings.TrimPrefix(v.Name, HostPrefix), Value: val})
		default:
			c.Set = append(c.Set, Setting{Key: v.Name, Value: val})
		}
	}
	c.Label = strings.Join(labels, " ")
	if c.Disk == "none" || strings.HasPrefix(c.Disk, "none,") {
		c.Disk = ""
	}
	return c
}

// withSettings returns base with each of add replacing the setting of the
// same key, or appended.
func withSettings(base []Setting, add ...Setting) []Setting {
	out := append([]Setting(nil), base...)
	for _, a := range add {
		replaced := false
		for i := range out {
			if out[i].Key == a.Key {
				out[i], replaced = a, true
			}
		}
		if !replaced {
			out = append(out, a)
		}
	}
	return out
}

// withDiskName replaces the profile name of a disk text, keeping its keys.
func withDiskName(disk, name string) string {
	if _, keys, ok := strings.Cut(disk, ","); ok {
		return name + "," + keys
	}
	return name
}

// next advances idx like an odometer; false when it wrapped around.
func next(idx []int, m []Variable) bool {
	for i := len(idx) - 1; i >= 0; i-- {
		idx[i]++
		if idx[i] < len(m[i].Values) {
			return true
		}
		idx[i] = 0
	}
	return false
}

// Planned is one run of the campaign.
type Planned struct {
	Index    int // position in the plan, from 0
	Cell     int // index into Expand()
	Label    string
	Group    string
	Selector map[string]string
	Round    int // from 1
	// Args are the workload arguments in the kind's syntax: the cell's
	// options, then each server setting as --set key=value.
	Args []string
	// Host are the run's host knobs.
	Host []Setting
	// Disk is the cell's disk profile (`run --disk` syntax); "" none.
	Disk string
}

// Plan orders every cell x group x round. Rounds are the outer loop: round 1
// of every cell runs before round 2 of any, so that drift over the
// campaign (burst credits running out, a filling disk) spreads across all
// cells instead of penalising the last ones. Groups are innermost; runs of
// one cell and round on disjoint groups may run at the same time.
func (s *Spec) Plan() []Planned {
	cells := s.Expand()
	var out []Planned
	for r := 1; r <= s.Rounds; r++ {
		for ci, c := range cells {
			for _, g := range s.Groups {
				out = append(out, Planned{
					Index: len(out), Cell: ci, Label: c.Label, Group: g.Name,
					Selector: g.Selector, Round: r, Args: s.args(c), Host: c.Host, Disk: c.Disk,
				})
			}
		}
	}
	return out
}

func (s *Spec) args(c Cell) []string {
	args := append([]string(nil), c.Options...)
	if s.Server.Binary != "" {
		args = append(args, "--binary="+s.Server.Binary)
	}
	for _, set := range c.Set {
		args = append(args, "--set", set.Key+"="+set.Value)
	}
	return args
}

// BaselineLabel is the label of the baseline cell: the named one, or the
// first cell.
func (s *Spec) BaselineLabel() string {
	if s.Baseline != "" {
		return s.Baseline
	}
	if cells := s.Expand(); len(cells) > 0 {
		return cells[0].Label
	}
	return ""
}
