package diskstats

// Column is one column of `iostat -x`, for printing Stats as iostat does.
type Column struct {
	// Name is iostat's header ("w/s", "aqu-sz", "%util").
	Name string
	// Value reads the column from s.
	Value func(s *Stats) float64
	// Needs says which kernel counters the column needs: "" (always),
	// "discard" or "flush".
	Needs string
}

// Columns returns the columns of `iostat -x` (sysstat 12.x) in its order.
func Columns() []Column {
	return []Column{
		{Name: "r/s", Value: func(s *Stats) float64 { return s.ReadsPerSec }},
		{Name: "rkB/s", Value: func(s *Stats) float64 { return s.ReadKBPerSec }},
		{Name: "rrqm/s", Value: func(s *Stats) float64 { return s.ReadMergesPerSec }},
		{Name: "%rrqm", Value: func(s *Stats) float64 { return s.ReadMergePct }},
		{Name: "r_await", Value: func(s *Stats) float64 { return s.ReadAwaitMs }},
		{Name: "rareq-sz", Value: func(s *Stats) float64 { return s.ReadReqKB }},
		{Name: "w/s", Value: func(s *Stats) float64 { return s.WritesPerSec }},
		{Name: "wkB/s", Value: func(s *Stats) float64 { return s.WriteKBPerSec }},
		{Name: "wrqm/s", Value: func(s *Stats) float64 { return s.WriteMergesPerSec }},
		{Name: "%wrqm", Value: func(s *Stats) float64 { return s.WriteMergePct }},
		{Name: "w_await", Value: func(s *Stats) float64 { return s.WriteAwaitMs }},
		{Name: "wareq-sz", Value: func(s *Stats) float64 { return s.WriteReqKB }},
		{Name: "d/s", Value: func(s *Stats) float64 { return s.DiscardsPerSec }, Needs: "discard"},
		{Name: "dkB/s", Value: func(s *Stats) float64 { return s.DiscardKBPerSec }, Needs: "discard"},
		{Name: "drqm/s", Value: func(s *Stats) float64 { return s.DiscardMergesPerSec }, Needs: "discard"},
		{Name: "%drqm", Value: func(s *Stats) float64 { return s.DiscardMergePct }, Needs: "discard"},
		{Name: "d_await", Value: func(s *Stats) float64 { return s.DiscardAwaitMs }, Needs: "discard"},
		{Name: "dareq-sz", Value: func(s *Stats) float64 { return s.DiscardReqKB }, Needs: "discard"},
		{Name: "f/s", Value: func(s *Stats) float64 { return s.FlushesPerSec }, Needs: "flush"},
		{Name: "f_await", Value: func(s *Stats) float64 { return s.FlushAwaitMs }, Needs: "flush"},
		{Name: "aqu-sz", Value: func(s *Stats) float64 { return s.QueueSize }},
		{Name: "%util", Value: func(s *Stats) float64 { return s.UtilPct }},
	}
}
