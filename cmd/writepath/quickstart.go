package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/mysqld"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/workload"
)

// quickstartOptions are the flags of `writepath quickstart`.
type quickstartOptions struct {
	dir   string
	out   string
	short bool
}

func (o *quickstartOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.dir, "dir", "writepath-quickstart", "directory for the store, the workers' files and the sandbox")
	cmd.Flags().StringVarP(&o.out, "output", "o", "report.html", "HTML report to write")
	cmd.Flags().BoolVar(&o.short, "short", false, "seconds instead of minutes (a smoke test)")
}

func newQuickstartCmd() *cobra.Command {
	o := &quickstartOptions{}
	cmd := &cobra.Command{
		Use:   "quickstart",
		Short: "Run a small local campaign that touches everything (fio job, OLTP on a sandbox server, crash recovery), then print the tables and write report.html",
		Long: "Runs on an embedded fabric in about two minutes: a fio random-write job with and without fsync,\n" +
			"sysbench-style OLTP write-only on a throw-away MariaDB/MySQL server (when one is installed), one\n" +
			"crash-recovery round (load, kill -9, timed recovery, durability ledger), with iostat -x telemetry.\n" +
			"Everything is stored in --dir; `writepath campaign list --db DIR/writepath.db` shows it afterwards.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// quickstartStep is one campaign of the quickstart.
type quickstartStep struct {
	title  string
	spec   string // YAML; %d is the seconds each run measures
	secs   [2]int // seconds: normal, --short
	server bool   // needs a server binary
}

var quickstartSteps = []quickstartStep{
	{title: "fio: 4 KiB random writes, buffered vs fsync after every write", secs: [2]int{20, 3}, spec: `name: quickstart-fio
workload: fio
options: [--name=quickstart, --rw=randwrite, --bs=4k, --size=64M, --ioengine=psync, --time_based, --runtime=%d]
matrix:
  --fsync: [0, 1]
groups:
  local: group=local
rounds: 1
window: 2s-end
baseline: fsync=0
columns: [w/s, wkB/s, wrqm/s, w_await, aqu-sz, "%%util"]
`},
	{title: "oltp: sysbench oltp_write_only on a sandbox server, 1 vs 8 threads", secs: [2]int{15, 4}, server: true, spec: `name: quickstart-oltp
workload: oltp
options: [--tables=4, --table-size=10000, --time=%d]
matrix:
  --threads: [1, 8]
groups:
  local: group=local
rounds: 1
window: 2s-end
columns: [w/s, w_await, "%%util", log_waits/s, dirty, ckpt_age]
`},
	{title: "crash: one load, kill -9, recovery round with the durability check", secs: [2]int{12, 4}, server: true, spec: `name: quickstart-crash
workload: crash
options: [--rounds=1, --tables=2, --table-size=10000, --threads=4, --load-time=%ds]
matrix:
  innodb_flush_log_at_trx_commit: [1]
groups:
  local: group=local
rounds: 1
window: 0s-end
columns: [w/s, w_await, dirty, ckpt_age]
`},
}

// plannedStep is a step whose campaign is planned (its sandbox, if any,
// already running): every plan is known before the fabric starts, so its
// workers' guard allows exactly what the steps name.
type plannedStep struct {
	quickstartStep
	spec *campaign.Spec
	plan *writepathv1.CampaignPlan
}

// run plans every step, runs them on one embedded fabric and writes the
// report.
func (o *quickstartOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	local := &localCampaignFlags{db: filepath.Join(o.dir, "writepath.db"), dataDir: filepath.Join(o.dir, "data")}
	if err := os.MkdirAll(local.dataDir, 0o755); err != nil {
		return fmt.Errorf("quickstart: %w", err)
	}
	_, binErr := mysqld.FindBinary()
	if binErr != nil {
		fmt.Fprintf(stderr, "quickstart: %v\n  OLTP and crash recovery are skipped; on Debian/Ubuntu `apt-get install mariadb-server` provides the server (it need not run: writepath starts its own sandbox).\n", binErr)
	}
	var steps []plannedStep
	var plans []*writepathv1.CampaignPlan
	for _, st := range quickstartSteps {
		if st.server && binErr != nil {
			continue
		}
		ps, cleanup, err := o.plan(ctx, local, st, stderr)
		if err != nil {
			return fmt.Errorf("quickstart %s: %w", st.title, err)
		}
		defer cleanup()
		steps, plans = append(steps, ps), append(plans, ps.plan)
	}
	c, closeFabric, err := local.start(steps[0].spec, plans, stderr)
	if err != nil {
		return err
	}
	defer closeFabric()
	var recs []*writepathv1.Campaign
	for i, st := range steps {
		fmt.Fprintf(stderr, "\n== %d/%d %s\n", i+1, len(steps), st.title)
		rec, err := o.step(ctx, c, st, stdout, stderr)
		if err != nil {
			return fmt.Errorf("quickstart %s: %w", st.title, err)
		}
		recs = append(recs, rec)
	}
	if err := o.writeReport(ctx, c, recs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nreport: %s (opens offline); stored runs: writepath campaign list --db %s\n", o.out, local.db)
	return nil
}

// plan parses a step's campaign, readies its sandbox and plans its runs;
// cleanup stops the sandbox.
func (o *quickstartOptions) plan(ctx context.Context, local *localCampaignFlags, st quickstartStep, stderr io.Writer) (plannedStep, func(), error) {
	secs := st.secs[0]
	if o.short {
		secs = st.secs[1]
	}
	text := []byte(fmt.Sprintf(st.spec, secs))
	spec, err := campaign.Parser{Workloads: kindNames()}.Parse("quickstart", text)
	if err != nil {
		return plannedStep{}, nil, err // a programmer error: the embedded specs are valid
	}
	extra, cleanup, err := local.setup(ctx, spec, stderr)
	if err != nil {
		return plannedStep{}, nil, err
	}
	plan, err := client.Plan(spec, buildKindSpec(spec.Workload), client.PlanOptions{File: spec.Name + ".yaml", Text: text, Extra: extra, Disk: diskSpec})
	if err != nil {
		cleanup()
		return plannedStep{}, nil, err
	}
	return plannedStep{quickstartStep: st, spec: spec, plan: plan}, cleanup, nil
}

// step runs one planned campaign and prints its table.
func (o *quickstartOptions) step(ctx context.Context, c *client.Client, st plannedStep, stdout, stderr io.Writer) (*writepathv1.Campaign, error) {
	sub, err := c.SubmitCampaign(ctx, st.plan)
	if err != nil {
		return nil, err
	}
	rec, err := c.WatchCampaign(ctx, sub.GetId(), (&client.CampaignPrinter{W: stderr}).Change)
	if err != nil {
		return nil, err
	}
	if rec.GetState() != writepathv1.CampaignState_CAMPAIGN_STATE_FINISHED {
		return nil, fmt.Errorf("campaign %s %s: %s", rec.GetId(), client.CampaignStateName(rec.GetState()), rec.GetReason())
	}
	fmt.Fprintln(stdout)
	if err := writeCampaignTable(ctx, stdout, c, rec, report.Text, nil); err != nil {
		return nil, err
	}
	return rec, writeKindTexts(ctx, stdout, c, rec, st.spec.Workload)
}

// writeKindTexts prints each run's own result in its kind's text (a crash
// run's recovery times and ledger verdict, which the throughput table
// cannot show), for kinds that have one (workload.Meta.Text).
func writeKindTexts(ctx context.Context, w io.Writer, src client.Source, rec *writepathv1.Campaign, kind string) error {
	m, ok := workload.ByName(kind)
	if !ok || m.Text == nil {
		return nil
	}
	for _, cr := range rec.GetRuns() {
		run, err := src.GetRun(ctx, cr.GetRunId())
		if err != nil {
			return err
		}
		for _, ph := range run.GetPhases() {
			if !ph.GetMeasured() {
				continue
			}
			for _, pw := range ph.GetWorkers() {
				if len(pw.GetSummary()) == 0 {
					continue // the worker failed first: the table says so
				}
				text, err := m.Text(pw.GetSummary())
				if err != nil {
					return fmt.Errorf("run %s on %s: %w", cr.GetRunId(), pw.GetWorker(), err)
				}
				fmt.Fprintf(w, "\nrun %s on %s:\n%s", cr.GetRunId(), pw.GetWorker(), text)
			}
		}
	}
	return nil
}

// writeReport draws every campaign (its charts and table, a crash
// campaign's recovery and restart timelines) and every campaign's runs.
func (o *quickstartOptions) writeReport(ctx context.Context, c *client.Client, recs []*writepathv1.Campaign) error {
	var all []report.Campaign
	var names []string
	for _, rec := range recs {
		rc, err := campaignReport(ctx, c, rec, nil)
		if err != nil {
			return err
		}
		all = append(all, rc)
		names = append(names, rec.GetPlan().GetName())
	}
	title := "quickstart (" + strings.Join(names, ", ") + ")"
	return writeHTMLFile(o.out, func(f *os.File) error { return report.WriteCampaignsHTML(f, title, all) })
}
