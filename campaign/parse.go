package campaign

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/writepath/writepath/internal/echo"
	"go.yaml.in/yaml/v3"
)

// parser walks the YAML tree by hand so that every error names the line and
// column of the offending key or value.
type parser struct {
	file      string
	workloads []string // nil: any
	errs      []error
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s:%d:%d: %s", p.file, n.Line, n.Column, fmt.Sprintf(format, args...)))
}

// fields calls handle for every key of a mapping, refusing unknown keys.
func (p *parser) fields(n *yaml.Node, known []string, handle func(key string, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "expected a mapping, found %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case known != nil && !contains(known, k.Value):
			p.errorf(k, "unknown key %s (known: %s)", echo.Quote(k.Value), strings.Join(known, ", "))
		case seen[k.Value]:
			p.errorf(k, "duplicate key %s", echo.Quote(k.Value))
		default:
			seen[k.Value] = true
			handle(k.Value, v)
		}
	}
}

func (p *parser) spec(n *yaml.Node, s *Spec) {
	known := []string{"name", "workload", "options", "server", "host", "matrix", "cells", "groups", "rounds", "window", "aggregate", "baseline", "disk", "columns"}
	p.fields(n, known, func(key string, v *yaml.Node) {
		switch key {
		case "name":
			s.Name = p.str(v)
		case "workload":
			s.Workload = p.str(v)
			if p.workloads != nil && !contains(p.workloads, s.Workload) {
				p.errorf(v, "unknown workload %s (known: %s)", echo.Quote(s.Workload), strings.Join(p.workloads, ", "))
			}
		case "options":
			s.Options = p.strs(v)
		case "server":
			p.server(v, &s.Server)
		case "host":
			s.Host = p.settings(v)
		case "matrix":
			s.Matrix = p.matrix(v)
		case "cells":
			s.Cells = p.cells(v)
		case "groups":
			s.Groups = p.groups(v)
		case "rounds":
			s.Rounds = p.positive(v)
		case "window":
			s.Window = p.window(v)
		case "aggregate":
			if s.Aggregate = p.str(v); s.Aggregate != "median" {
				p.errorf(v, "aggregate %s is not supported (use median)", echo.Quote(s.Aggregate))
			}
		case "baseline":
			s.Baseline = p.str(v)
		case "disk":
			s.Disk = p.disk(v)
		case "columns":
			s.Columns = p.strs(v)
		}
	})
}

// disk reads a disk profile: `run --disk` syntax as one value, or a
// mapping with profile: NAME and the profile's keys (mount: a list or a
// +-joined value).
func (p *parser) disk(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	name := ""
	var kvs []string
	p.fields(n, nil, func(key string, v *yaml.Node) {
		switch {
		case key == "profile":
			name = p.str(v)
		case key == "mount" && v.Kind == yaml.SequenceNode:
			kvs = append(kvs, "mount="+strings.Join(p.strs(v), "+"))
		default:
			kvs = append(kvs, key+"="+p.str(v))
		}
	})
	if name == "" {
		p.errorf(n, "disk: profile is required (a built-in name or custom)")
	}
	return strings.Join(append([]string{name}, kvs...), ",")
}

func (p *parser) server(n *yaml.Node, s *Server) {
	p.fields(n, []string{"binary", "settings"}, func(key string, v *yaml.Node) {
		switch key {
		case "binary":
			s.Binary = p.str(v)
		case "settings":
			s.Settings = p.settings(v)
		}
	})
}

func (p *parser) settings(n *yaml.Node) []Setting {
	var out []Setting
	p.fields(n, nil, func(key string, v *yaml.Node) {
		out = append(out, Setting{Key: key, Value: p.str(v)})
	})
	return out
}

func (p *parser) matrix(n *yaml.Node) []Variable {
	var out []Variable
	p.fields(n, nil, func(key string, v *yaml.Node) {
		vals := p.strs(v)
		if len(vals) == 0 {
			p.errorf(v, "matrix variable %s has no values", echo.Quote(key))
		}
		if key == strings.TrimSuffix(HostPrefix, ".") || key == HostPrefix {
			p.errorf(v, "matrix variable %s: name the knob, as host.scheduler", echo.Quote(key))
		}
		out = append(out, Variable{Name: key, Values: vals})
	})
	return out
}

func (p *parser) cells(n *yaml.Node) []ExplicitCell {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "cells must be a list, found %s", kindName(n))
		return nil
	}
	var out []ExplicitCell
	for _, item := range n.Content {
		var c ExplicitCell
		p.fields(item, []string{"label", "set", "options", "host", "disk"}, func(key string, v *yaml.Node) {
			switch key {
			case "disk":
				c.Disk = p.disk(v)
			case "label":
				c.Label = p.str(v)
			case "set":
				c.Set = p.settings(v)
			case "options":
				c.Options = p.strs(v)
			case "host":
				c.Host = p.settings(v)
			}
		})
		if c.Label == "" {
			p.errorf(item, "a cell needs a label")
		}
		out = append(out, c)
	}
	return out
}

func (p *parser) groups(n *yaml.Node) []Group {
	var out []Group
	p.fields(n, nil, func(key string, v *yaml.Node) {
		g := Group{Name: key, Selector: map[string]string{}}
		for _, sel := range strings.Split(p.str(v), ",") {
			k, val, ok := strings.Cut(strings.TrimSpace(sel), "=")
			if !ok || k == "" {
				p.errorf(v, "group %s: selector %s is not key=value", echo.Quote(key), echo.Quote(sel))
				continue
			}
			g.Selector[k] = val
		}
		out = append(out, g)
	})
	return out
}

func (p *parser) window(n *yaml.Node) Window {
	s := p.str(n)
	from, to, ok := strings.Cut(s, "-")
	var w Window
	var err error
	if w.From, err = parseSeconds(from); !ok || err != nil {
		p.errorf(n, "window %s: want FROM-TO such as 60s-300s (or 60s-end)", echo.Quote(s))
		return w
	}
	if to != "end" {
		if w.To, err = parseSeconds(to); err != nil || w.To <= w.From {
			p.errorf(n, "window %s: the end must be a duration after the start, or \"end\"", echo.Quote(s))
		}
	}
	return w
}

func parseSeconds(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if d < 0 {
		return 0, fmt.Errorf("negative")
	}
	return d, err
}

func (p *parser) str(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, "expected a value, found %s", kindName(n))
		return ""
	}
	return n.Value
}

func (p *parser) strs(n *yaml.Node) []string {
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "expected a list, found %s", kindName(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		out = append(out, p.str(c))
	}
	return out
}

func (p *parser) positive(n *yaml.Node) int {
	v, err := strconv.Atoi(p.str(n))
	if err != nil || v < 1 {
		p.errorf(n, "expected a whole number >= 1, found %s", echo.Quote(n.Value))
		return 1
	}
	return v
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "the value " + echo.Quote(n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// sortedKeys is used where map order must not leak into output.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
