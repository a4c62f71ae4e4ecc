package oltp

import (
	"errors"
	"fmt"
	"unsafe"

	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload"
)

// maxStatements bounds --index-updates, --non-index-updates and
// --delete-inserts, as the command line does: each is a statement (and
// its buffers) in every connection's transaction.
const maxStatements = 1_000_000

// perConnection is what one connection holds beside its transaction's
// statements: socket buffers, the goroutine's stack, prepared-statement
// ids per table.
const perConnection = 16 << 10

// checkLimits reports what a raw spec could ask beyond the command line's
// bounds (Resolve checks the rest, for both).
func checkLimits(s *oltpv1.Spec) error {
	errs := []error{workload.CheckSpec(s)}
	for _, f := range []struct {
		name string
		v    *uint32
	}{{"--index-updates", s.IndexUpdates}, {"--non-index-updates", s.NonIndexUpdates}, {"--delete-inserts", s.DeleteInserts}} {
		if f.v != nil && *f.v > maxStatements {
			errs = append(errs, fmt.Errorf("%s=%d: at most %d", f.name, *f.v, maxStatements))
		}
	}
	return errors.Join(errs...)
}

// Memory is what the run phase's connections hold on a worker: per
// connection its transaction's statements with their c and pad buffers,
// the prepared ids of every table and fixed buffers.
func Memory(o Options) int64 {
	step := int64(unsafe.Sizeof(step{}))
	perTrx := int64(o.IndexUpdates)*step + int64(o.NonIndexUpdates)*(step+int64(len(cTemplate))) +
		int64(o.DeleteInserts)*(2*step+int64(len(cTemplate)+len(padTemplate)))
	return int64(o.Threads) * (perConnection + perTrx + int64(o.Tables)*24)
}
