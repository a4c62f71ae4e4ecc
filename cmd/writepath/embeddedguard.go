package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/writepath/writepath/guard"
	"github.com/writepath/writepath/workload"
)

// embeddedGuardFlags are what an embedded fabric's command allows beyond
// what its specs name themselves: directories that server settings point
// to (innodb_doublewrite_dir=/mnt/dw) and settings that need an opt-in
// (plugin_load_add, user, ...).
type embeddedGuardFlags struct {
	paths, settings []string
}

func (f *embeddedGuardFlags) addFlagSet(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.paths, "allow-path", nil, "embedded fabric: another directory jobs may use, e.g. one a server setting names (repeatable)")
	fs.StringArrayVar(&f.settings, "allow-setting", nil, "embedded fabric: a server setting that needs an opt-in (plugin_load_add, init_file, user, ...; repeatable)")
}

// embeddedGuard is the guard of an embedded fabric's workers, built from
// what the command names: its data dir, its --allow-path/--allow-setting,
// and what the specs it built need (their paths, server binaries,
// privileged actions, database endpoints), nothing else. Its memory budget
// is the host's: the command's own jobs are the user's to size.
func embeddedGuard(dataDir string, f embeddedGuardFlags, specs []*anypb.Any) (*guard.Policy, error) {
	cfg := guard.Config{DataDir: dataDir, AllowPaths: append([]string(nil), f.paths...),
		AllowSettings: f.settings, MaxJobMemory: hostMemory()}
	env := workload.Env{DataDir: dataDir}
	seen := map[string]bool{}
	add := func(list *[]string, kind, v string) {
		if !seen[kind+v] {
			seen[kind+v] = true
			*list = append(*list, v)
		}
	}
	for _, s := range specs {
		m, ok := workload.Lookup(s.GetTypeUrl())
		if !ok {
			return nil, fmt.Errorf("embedded guard: unknown kind %s", s.GetTypeUrl())
		}
		wl, err := m.New(s.GetValue())
		if err != nil {
			return nil, fmt.Errorf("embedded guard: %s spec: %w", m.Name, err)
		}
		n, ok := wl.(workload.Needer)
		if !ok {
			continue
		}
		needs := n.Needs(env)
		for _, p := range needs.Paths {
			add(&cfg.AllowPaths, "p", p)
		}
		for _, b := range needs.Binaries {
			add(&cfg.AllowBinaries, "b", b)
		}
		for _, p := range needs.Privileged {
			add(&cfg.AllowPrivileged, "x", p)
		}
		for _, e := range needs.Endpoints {
			add(&cfg.AllowMySQL, "e", e)
		}
	}
	g, err := guard.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("embedded guard: %w", err)
	}
	return g, nil
}

// hostMemory is MemTotal from /proc/meminfo (1 TiB when unreadable).
func hostMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 1 << 40
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 1 << 40
}
