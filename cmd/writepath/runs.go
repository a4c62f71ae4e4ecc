package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/internal/redact"
	"github.com/writepath/writepath/results"
)

// sourceFlags choose where stored runs are read: through a coordinator, or
// from the store file directly.
type sourceFlags struct {
	conn connFlags
	db   string
}

func (o *sourceFlags) AddFlags(cmd *cobra.Command) {
	o.conn.AddFlags(cmd, "read through this coordinator instead of the file")
	cmd.Flags().StringVar(&o.db, "db", "writepath.db", "store file to read when no --coordinator is given")
}

func (o *sourceFlags) open() (client.Source, error) {
	if o.conn.coordinator == "" {
		return client.OpenFile(o.db)
	}
	return o.conn.dial("--coordinator is required")
}

// newRunsCmd is `writepath runs list|show|hgrm`.
func newRunsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "runs", Short: "List and show stored runs"}
	cmd.AddCommand(newRunsListCmd(), newRunsShowCmd(), newRunsHgrmCmd(), newRunsCompareCmd(), newRunsPruneCmd())
	return cmd
}

func newRunsListCmd() *cobra.Command {
	o := &sourceFlags{}
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			src, err := o.open()
			if err != nil {
				return err
			}
			defer src.Close()
			runs, err := src.ListRuns(cmd.Context(), limit)
			if err != nil {
				return err
			}
			return client.WriteRuns(cmd.OutOrStdout(), runs)
		},
	}
	o.AddFlags(cmd)
	cmd.Flags().IntVar(&limit, "limit", 20, "how many runs (0: all)")
	return cmd
}

type runsShowOptions struct {
	sourceFlags
	json bool
}

func newRunsShowCmd() *cobra.Command {
	o := &runsShowOptions{}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a run: merged totals per phase and each worker's",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := o.open()
			if err != nil {
				return err
			}
			defer src.Close()
			detail, err := results.Read(cmd.Context(), src, args[0], results.PerWorker)
			if err != nil {
				return err
			}
			s, err := client.Summarize(detail, kindOf(detail.Record.GetKindName()))
			if err != nil {
				return err
			}
			if o.json {
				return writeShowJSON(cmd.OutOrStdout(), detail, s)
			}
			return client.WriteSummary(cmd.OutOrStdout(), s)
		},
	}
	o.AddFlags(cmd)
	cmd.Flags().BoolVar(&o.json, "json", false, "print the run record, its merged intervals' stats and the summary as JSON")
	return cmd
}

// writeShowJSON prints {"run": record, "intervals": [merged intervals
// without their histogram bytes], "summary": summary}.
func writeShowJSON(w io.Writer, detail *results.Run, s *client.Summary) error {
	// Specs stored by older clients may carry a MySQL password.
	run, err := protojson.MarshalOptions{Resolver: redact.Resolver}.Marshal(redact.Message(detail.Record))
	if err != nil {
		return fmt.Errorf("run as JSON: %w", err)
	}
	out := struct {
		Run       json.RawMessage   `json:"run"`
		Intervals []json.RawMessage `json:"intervals"`
		Summary   *client.Summary   `json:"summary"`
	}{Run: run, Summary: s, Intervals: []json.RawMessage{}}
	for _, mi := range detail.Intervals {
		mi = proto.CloneOf(mi)
		mi.Ops = nil // the stats say it in text; `runs hgrm` gives the distribution
		b, err := protojson.Marshal(mi)
		if err != nil {
			return fmt.Errorf("interval as JSON: %w", err)
		}
		out.Intervals = append(out.Intervals, b)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

type runsHgrmOptions struct {
	sourceFlags
	op, phase, worker string
}

func newRunsHgrmCmd() *cobra.Command {
	o := &runsHgrmOptions{}
	cmd := &cobra.Command{
		Use:   "hgrm ID",
		Short: "Print a run's latency distribution in HdrHistogram's .hgrm format (ms), as wrk2 does",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := o.open()
			if err != nil {
				return err
			}
			defer src.Close()
			d := results.MergedOnly
			if o.worker != "" {
				d = results.PerWorker
			}
			detail, err := results.Read(cmd.Context(), src, args[0], d)
			if err != nil {
				return err
			}
			h, err := client.Cumulative(detail, o.phase, o.worker, o.op)
			if err != nil {
				return err
			}
			return h.WriteHgrm(cmd.OutOrStdout(), client.HgrmScale(o.op))
		},
	}
	o.AddFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.op, "op", "write", "operation (write, read, sync, trx, ...) or kernel series (block.vda.write.d2c, sys.fsync, sys.write.bytes in bytes, ...)")
	f.StringVar(&o.phase, "phase", "", "phase (default: every measured phase)")
	f.StringVar(&o.worker, "worker", "", "one worker's own distribution (default: merged)")
	return cmd
}
