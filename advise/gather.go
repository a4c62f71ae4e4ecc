package advise

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/writepath/writepath/telemetry/blockdev"
	"github.com/writepath/writepath/telemetry/diskstats"
	"github.com/writepath/writepath/telemetry/mysqlstatus"
)

// Options say where Gather finds the facts. Exactly one of DB and
// OptionFile is set.
type Options struct {
	// DB is a connection to the server; Source names it for the report
	// (without a password).
	DB     *sql.DB
	Source string
	// OptionFile is a my.cnf to read settings from when no server is
	// reachable (a stopped managed instance); unset variables are unknown.
	OptionFile string
	// DataDir overrides the datadir the settings name (needed with an
	// option file that sets none).
	DataDir string
	// WriteIOPS is a measured 4 KiB random-write IOPS of the data disk, and
	// WriteIOPSSource how it was measured; 0 when not measured.
	WriteIOPS       float64
	WriteIOPSSource string
	// CheckpointAge is the highest checkpoint age of the last run (bytes),
	// if known; Gather also samples the server's current age.
	CheckpointAge uint64
	// Resolver and Prober default to the running system's.
	Resolver *diskstats.Resolver
	Prober   *blockdev.Prober
}

// Gather collects the Facts the rules check.
func Gather(ctx context.Context, o Options) (*Facts, error) {
	f := &Facts{Source: o.Source, WriteIOPS: o.WriteIOPS, WriteIOPSSource: o.WriteIOPSSource}
	if o.CheckpointAge > 0 {
		f.CheckpointAge, f.CheckpointAgeSource = o.CheckpointAge, "during the last run"
	}
	if err := gatherSettings(ctx, o, f); err != nil {
		return nil, err
	}
	r, p := o.resolver(), o.prober()
	f.DataDir = o.DataDir
	if f.DataDir == "" {
		f.DataDir, _ = f.Vars.Str("datadir")
	}
	if f.DataDir == "" {
		f.Notes = append(f.Notes, "no datadir known (give --datadir): device checks skipped")
		return f, nil
	}
	f.DataDir = filepath.Clean(f.DataDir)
	f.Data = probeDir(r, p, f.DataDir, f)
	f.Redo = probeDir(r, p, underData(f.DataDir, strOr(f.Vars, "innodb_log_group_home_dir", "")), f)
	f.Doublewrite = probeDir(r, p, doublewriteDir(f), f)
	f.SharedWith = sharedWith(r, f.Data)
	return f, nil
}

// gatherSettings reads the variables, and from a live server the redo rate
// and the current checkpoint age.
func gatherSettings(ctx context.Context, o Options, f *Facts) error {
	switch {
	case o.DB != nil:
		return gatherServer(ctx, o.DB, f)
	case o.OptionFile != "":
		m, err := ReadOptionFile(o.OptionFile)
		if err != nil {
			return err
		}
		f.Vars = mysqlstatus.NewVariables(m)
		if f.Source == "" {
			f.Source = "option file " + o.OptionFile
		}
		f.Notes = append(f.Notes, "settings from "+o.OptionFile+" only: server defaults for unset variables are not known, and no redo rate or checkpoint age was sampled")
		return nil
	}
	return errors.New("advise: no server and no option file given")
}

// gatherServer reads variables and one status sample.
func gatherServer(ctx context.Context, db *sql.DB, f *Facts) error {
	vars, err := mysqlstatus.ReadVariables(ctx, db)
	if err != nil {
		return fmt.Errorf("advise: %s: %w", f.Source, err)
	}
	f.Vars = vars
	s, err := mysqlstatus.NewSampler(db).Sample(ctx)
	if err != nil {
		return fmt.Errorf("advise: %s: %w", f.Source, err)
	}
	if age := s.Log.CheckpointAge(); age > f.CheckpointAge {
		f.CheckpointAge, f.CheckpointAgeSource = age, "sampled now"
	}
	st, err := mysqlstatus.ReadStatus(ctx, db, "uptime")
	if err != nil {
		return fmt.Errorf("advise: %s: %w", f.Source, err)
	}
	if up, err := strconv.ParseFloat(st["uptime"], 64); err == nil {
		// Uptime counts whole seconds: a server younger than one still has
		// a rate, over at most a second.
		f.RedoBytesPerSec = float64(s.Total.OSLogWritten) / max(up, 1)
	}
	return nil
}

// probeDir finds the disk behind dir and probes it; failures become notes.
func probeDir(r diskstats.Resolver, p blockdev.Prober, dir string, f *Facts) Disk {
	d := Disk{Dir: dir}
	if _, err := os.Stat(dir); err != nil {
		f.Notes = appendOnce(f.Notes, fmt.Sprintf("%s: %v: its device is not checked (run advise on the server's host)", dir, err))
		return d
	}
	devs, err := r.Paths(dir)
	if err != nil || len(devs) != 1 {
		f.Notes = appendOnce(f.Notes, fmt.Sprintf("device of %s: %v", dir, err))
		return d
	}
	info, err := p.Probe(devs[0].Name)
	if err != nil {
		f.Notes = appendOnce(f.Notes, fmt.Sprintf("probe %s: %v", devs[0].Name, err))
		return d
	}
	d.Device, d.Info = devs[0].Name, info
	if fs, err := blockdev.FilesystemWith(r, dir); err == nil {
		d.FS = fs
	}
	return d
}

// doublewriteDir is where the doublewrite pages go: MySQL >= 8.0.20's
// innodb_doublewrite_dir, else innodb_data_home_dir (the system tablespace,
// which is where MariaDB always keeps them), else the datadir.
func doublewriteDir(f *Facts) string {
	for _, name := range []string{"innodb_doublewrite_dir", "innodb_data_home_dir"} {
		if v := strOr(f.Vars, name, ""); v != "" {
			return underData(f.DataDir, v)
		}
	}
	return f.DataDir
}

// sharedWith lists the other mounted filesystems on data's disk: mounts
// of other filesystems whose device is the same disk, and "/" when the data
// itself is on the root filesystem. Bind mounts of the data's own
// filesystem do not count.
func sharedWith(r diskstats.Resolver, data Disk) []string {
	if !data.Known() {
		return nil
	}
	own, err := r.MountOf(data.Dir)
	mounts, err2 := r.Mounts()
	if err != nil || err2 != nil {
		return nil
	}
	var out []string
	if own.MountPoint == "/" {
		out = append(out, "/")
	}
	for _, m := range mounts {
		if m.Major == 0 || (m.Major == own.Major && m.Minor == own.Minor) {
			continue
		}
		if dev, err := r.Number(m.Major, m.Minor); err == nil && dev.Name == data.Device {
			out = appendOnce(out, m.MountPoint)
		}
	}
	return out
}

// underData resolves a server path relative to the datadir ("./" is it).
func underData(dataDir, p string) string {
	if p == "" {
		return dataDir
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dataDir, p)
}

func strOr(v mysqlstatus.Variables, name, def string) string {
	if s, ok := v.Str(name); ok {
		return s
	}
	return def
}

func appendOnce(list []string, s string) []string {
	for _, l := range list {
		if l == s {
			return list
		}
	}
	return append(list, s)
}

func (o Options) resolver() diskstats.Resolver {
	if o.Resolver != nil {
		return *o.Resolver
	}
	return diskstats.DefaultResolver()
}

func (o Options) prober() blockdev.Prober {
	if o.Prober != nil {
		return *o.Prober
	}
	return blockdev.Prober{SysDir: "/sys"}
}
