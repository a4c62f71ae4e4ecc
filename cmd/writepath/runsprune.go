package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/coordinator/store"
)

// newRunsPruneCmd is `writepath runs prune --db FILE --keep-worker-intervals N
// [--compact]`: the coordinator's retention, run on a store file that no
// coordinator holds.
func newRunsPruneCmd() *cobra.Command {
	var (
		db      string
		keep    int
		compact bool
	)
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Drop per-worker interval snapshots of all but the newest runs (merged intervals stay); --compact shrinks the file",
		Long: `Drops the per-worker interval snapshots of every ended run but the
--keep-worker-intervals newest, keeping merged intervals, totals and run
records (a coordinator does the same after each run with its own
--keep-worker-intervals). bbolt reuses freed pages but never shrinks its file:
--compact then rewrites the file compactly. The file must not be in use.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keep < 0 {
				return fmt.Errorf("--keep-worker-intervals=%d: want 0 or more", keep)
			}
			before, err := os.Stat(db)
			if err != nil {
				return fmt.Errorf("store %s: %w", db, err)
			}
			st, err := store.Open(db)
			if err != nil {
				return fmt.Errorf("%w (stop the coordinator using it, or use its --keep-worker-intervals)", err)
			}
			ids, err := st.PruneWorkerIntervals(keep, time.Now())
			if cerr := st.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "pruned per-worker intervals of %d run(s)", len(ids))
			if len(ids) > 0 {
				fmt.Fprintf(out, " (%s .. %s)", ids[0], ids[len(ids)-1])
			}
			fmt.Fprintln(out)
			if !compact {
				return nil
			}
			tmp := db + ".compact"
			_ = os.Remove(tmp)
			if err := store.Compact(tmp, db); err != nil {
				_ = os.Remove(tmp)
				return err
			}
			if err := os.Rename(tmp, db); err != nil {
				_ = os.Remove(tmp)
				return fmt.Errorf("replace %s with its compacted copy: %w", db, err)
			}
			after, err := os.Stat(db)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "compacted %s: %d -> %d bytes\n", db, before.Size(), after.Size())
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "writepath.db", "store file")
	cmd.Flags().IntVar(&keep, "keep-worker-intervals", coordinator.DefaultKeepWorkerIntervals, "newest ended runs that keep their per-worker snapshots")
	cmd.Flags().BoolVar(&compact, "compact", false, "then rewrite the file without the freed pages")
	return cmd
}
