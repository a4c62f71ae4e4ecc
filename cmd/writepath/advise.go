package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/writepath/writepath/advise"
	"github.com/writepath/writepath/mysqld"
	"github.com/writepath/writepath/workload"
)

// adviseOptions are the flags of `writepath advise`.
type adviseOptions struct {
	mysqlDSN    string
	mysqldDir   string
	dataDir     string
	json        bool
	measure     bool
	measureTime time.Duration
	campaigns   string
}

func (o *adviseOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.mysqlDSN, "mysql", "", "server to check, as a Go MySQL DSN (root@tcp(127.0.0.1:3306)/)")
	fs.StringVar(&o.mysqldDir, "mysqld-dir", "", "managed server directory (my.cnf, data/); a running one is asked, a stopped one read from my.cnf")
	fs.StringVar(&o.dataDir, "datadir", "", "data directory to probe (default: the server's datadir)")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	fs.BoolVar(&o.measure, "measure", false, "measure the data disk's 4 KiB random-write IOPS with a short fio-equivalent job in the datadir")
	fs.DurationVar(&o.measureTime, "measure-time", 10*time.Second, "length of the --measure job")
	fs.StringVar(&o.campaigns, "campaigns", "", "write each finding's campaign file (which measures the suggestion against what is in force) into this directory")
}

func (o *adviseOptions) Validate() error {
	switch {
	case (o.mysqlDSN == "") == (o.mysqldDir == ""):
		return errors.New("advise: give exactly one of --mysql DSN and --mysqld-dir DIR")
	case o.measureTime < time.Second:
		return fmt.Errorf("advise: --measure-time %v is too short; give at least 1s", o.measureTime)
	}
	return nil
}

func newAdviseCmd() *cobra.Command {
	o := &adviseOptions{}
	cmd := &cobra.Command{
		Use:   "advise (--mysql DSN | --mysqld-dir DIR) [--datadir DIR] [--json] [--measure]",
		Short: "Check InnoDB write-path settings against this machine's disks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return runAdvise(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// runAdvise gathers the facts, optionally measures the disk, and prints
// the report.
func runAdvise(ctx context.Context, o *adviseOptions, out io.Writer) error {
	opts, closeDB, err := adviseSource(ctx, o)
	if err != nil {
		return err
	}
	defer closeDB()
	f, err := advise.Gather(ctx, opts)
	if err != nil {
		return err
	}
	if o.measure {
		if err := measureInto(ctx, f, o.measureTime); err != nil {
			return err
		}
	}
	r := advise.NewReport(f)
	if o.campaigns != "" {
		if err := writeAdviseCampaigns(o.campaigns, r.Campaigns()); err != nil {
			return err
		}
	}
	if o.json {
		return r.WriteJSON(out)
	}
	if err := r.WriteText(out); err != nil {
		return err
	}
	if cs := r.Campaigns(); len(cs) > 0 && o.campaigns == "" {
		fmt.Fprintf(out, "\n%d campaign file(s) measure the suggestions (--campaigns DIR writes them):\n", len(cs))
		for _, c := range cs {
			fmt.Fprintf(out, "\n--- %s\n%s", c.File, c.Spec)
		}
	}
	return nil
}

// writeAdviseCampaigns writes the campaign files into dir, never over an
// existing file.
func writeAdviseCampaigns(dir string, cs []advise.Campaign) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("advise: --campaigns: %w", err)
	}
	for _, c := range cs {
		path := filepath.Join(dir, c.File)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("advise: --campaigns: %w (remove it or choose another directory)", err)
		}
		_, err = f.WriteString(c.Spec)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("advise: --campaigns: %w", err)
		}
	}
	return nil
}

// adviseSource opens the server named by the flags, or the option file of
// a stopped managed instance.
func adviseSource(ctx context.Context, o *adviseOptions) (advise.Options, func(), error) {
	opts := advise.Options{DataDir: o.dataDir}
	dsn := o.mysqlDSN
	if o.mysqldDir != "" {
		dsn = runningInstanceDSN(ctx, o.mysqldDir)
		if dsn == "" {
			opts.OptionFile = filepath.Join(o.mysqldDir, "my.cnf")
			if opts.DataDir == "" {
				opts.DataDir = filepath.Join(o.mysqldDir, "data")
			}
			return opts, func() {}, nil
		}
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return opts, nil, fmt.Errorf("--mysql %q: %w", dsn, err)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return opts, nil, fmt.Errorf("--mysql: %w", err)
	}
	cfg.Passwd = ""
	opts.DB, opts.Source = db, "server "+cfg.FormatDSN()
	return opts, func() { db.Close() }, nil
}

// runningInstanceDSN returns the socket DSN of a running managed instance
// in dir, or "" when none is recorded or it is stopped.
func runningInstanceDSN(ctx context.Context, dir string) string {
	if _, err := os.Stat(filepath.Join(dir, "instance.json")); err != nil {
		return ""
	}
	// Detach: adopting the instance must never stop it.
	in, err := mysqld.Open(ctx, mysqld.Options{Dir: dir, Detach: true})
	if err != nil || !in.Running() {
		return ""
	}
	pw, err := in.Password()
	if err != nil {
		return ""
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = in.User(), pw, "unix", in.Socket()
	return cfg.FormatDSN()
}

// measureInto runs the fio kind's 4 KiB random-write job in the data
// directory and stores the IOPS in f.
func measureInto(ctx context.Context, f *advise.Facts, d time.Duration) error {
	meta, ok := workload.ByName("fio")
	if !ok {
		return errors.New("advise: --measure needs the fio workload kind, which this binary does not link")
	}
	if !f.Data.Known() {
		return fmt.Errorf("advise: --measure: the datadir %q is not on a disk of this host", f.DataDir)
	}
	file := filepath.Join(f.Data.Dir, "writepath-advise-measure.tmp")
	defer os.Remove(file)
	args := []string{"--name=writepath-advise", "--filename=" + file, "--rw=randwrite", "--bs=4k", "--direct=1",
		"--ioengine=libaio", "--iodepth=32", "--size=256M", "--time_based", fmt.Sprintf("--runtime=%d", int(d.Seconds()))}
	iops, err := runMeasure(ctx, meta, args)
	if err != nil {
		return fmt.Errorf("advise: --measure: %w", err)
	}
	f.WriteIOPS = iops
	f.WriteIOPSSource = fmt.Sprintf("fio-equivalent 4k randwrite, direct, libaio iodepth 32, %v on %s", d, f.Data.Device)
	return nil
}

// runMeasure runs one fio job through the registry, closing an interval
// each second, and returns the writes per second over the seconds that
// had writes (file layout before the timed part is excluded).
func runMeasure(ctx context.Context, meta workload.Meta, args []string) (float64, error) {
	spec, err := meta.FromArgs(args)
	if err != nil {
		return 0, err
	}
	w, err := meta.New(spec)
	if err != nil {
		return 0, err
	}
	env := workload.Env{Shard: workload.Shard{Count: 1}, DataDir: os.TempDir(), Start: time.Now(), Log: slog.New(slog.DiscardHandler)}
	var all []workload.Snapshot
	if err := workload.Drive(ctx, w, meta.Phases[0].Name, env, time.Second, func(s workload.Snapshot) { all = append(all, s) }); err != nil {
		return 0, err
	}
	return writesPerSecond(all), nil
}

// writesPerSecond is the "write" operations over the intervals that had
// any, dropping the first and last (partial) ones when there are enough.
func writesPerSecond(snaps []workload.Snapshot) float64 {
	var busy []workload.Snapshot
	for _, s := range snaps {
		if h, ok := s.Ops["write"]; ok && h.Count() > 0 {
			busy = append(busy, s)
		}
	}
	if len(busy) >= 4 {
		busy = busy[1 : len(busy)-1]
	}
	var n int64
	var secs float64
	for _, s := range busy {
		n += s.Ops["write"].Count()
		secs += s.End.Sub(s.Start).Seconds()
	}
	if secs == 0 {
		return 0
	}
	return float64(n) / secs
}
