package results

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/internal/echo"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// Source is where stored runs are read from: a store file (FromStore) or a
// coordinator's ReadRun stream (client.Client). ReadRun calls fn with each
// item of the run, the record first, in the order Scan documents.
type Source interface {
	ReadRun(ctx context.Context, req *writepathv1.ReadRunRequest, fn func(*writepathv1.ReadRunResponse) error) error
}

// ErrRunNotFound reports a run id the store does not have.
var ErrRunNotFound = errors.New("run not found")

// MaxTelemetryChunk bounds the telemetry carried in one item: a merged
// interval whose telemetry is larger travels without it, followed by
// IntervalTelemetry items of at most this many bytes (a single worker's
// telemetry, bounded by the coordinator's interval checks to well under
// it, is never split). Every other item holds one stored value, whose size
// does not grow with the run: a merged interval without its telemetry
// (ops, and the names of the reporting workers: ~15 KB at 1,000 workers),
// one worker's snapshot or one worker's total.
const MaxTelemetryChunk = 512 << 10

// storeSource reads a store file.
type storeSource struct{ st *store.Store }

// FromStore reads runs straight from a store.
func FromStore(st *store.Store) Source { return storeSource{st} }

func (s storeSource) ReadRun(ctx context.Context, req *writepathv1.ReadRunRequest, fn func(*writepathv1.ReadRunResponse) error) error {
	return Scan(ctx, s.st, req, fn)
}

// Scan reads the run req names from st and calls fn with its items: the
// record; with req.intervals, each merged interval in phase, then seq,
// order (its telemetry inline, or in following IntervalTelemetry chunks
// when larger than MaxTelemetryChunk); then per worker as req.workers
// asks: every snapshot (phase, seq, worker order), or each phase's stored
// totals (phase, worker order), and for a phase without totals its
// snapshots. The store is read in batches, so fn may block (a slow client)
// without holding the store.
func Scan(ctx context.Context, st *store.Store, req *writepathv1.ReadRunRequest, fn func(*writepathv1.ReadRunResponse) error) error {
	id := req.GetRunId()
	rec, err := st.GetRun(id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrRunNotFound, echo.Clip(id))
	}
	if err != nil {
		return err
	}
	send := func(item *writepathv1.ReadRunResponse) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(item)
	}
	if err := send(&writepathv1.ReadRunResponse{Item: &writepathv1.ReadRunResponse_Run{Run: rec}}); err != nil {
		return err
	}
	if req.GetIntervals() {
		if err := st.Intervals(id, func(_ int, mi *writepathv1.MergedInterval) error { return sendInterval(mi, send) }); err != nil {
			return err
		}
	}
	switch req.GetWorkers() {
	case writepathv1.WorkerDetail_WORKER_DETAIL_INTERVALS:
		return st.WorkerIntervals(id, -1, func(_ int, sn store.WorkerSnapshot) error { return sendSnapshot(sn, send) })
	case writepathv1.WorkerDetail_WORKER_DETAIL_TOTALS:
		return scanTotals(st, rec, send)
	}
	return nil
}

// scanTotals sends the stored totals, then the snapshots of each phase that
// has none (a run the coordinator did not see end, or an older store).
func scanTotals(st *store.Store, rec *writepathv1.Run, send func(*writepathv1.ReadRunResponse) error) error {
	has := map[int]bool{}
	err := st.WorkerTotals(rec.GetId(), func(phase int, t *writepathv1.WorkerTotal) error {
		has[phase] = true
		return send(&writepathv1.ReadRunResponse{Item: &writepathv1.ReadRunResponse_WorkerTotal{WorkerTotal: t}})
	})
	if err != nil {
		return err
	}
	for i := range rec.GetPhases() {
		if has[i] {
			continue
		}
		if err := st.WorkerIntervals(rec.GetId(), i, func(_ int, sn store.WorkerSnapshot) error { return sendSnapshot(sn, send) }); err != nil {
			return err
		}
	}
	return nil
}

func sendSnapshot(sn store.WorkerSnapshot, send func(*writepathv1.ReadRunResponse) error) error {
	return send(&writepathv1.ReadRunResponse{Item: &writepathv1.ReadRunResponse_WorkerInterval{
		WorkerInterval: &writepathv1.WorkerInterval{Worker: sn.Worker, Interval: sn.Interval}}})
}

// sendInterval sends a merged interval, its telemetry in chunks when big.
func sendInterval(mi *writepathv1.MergedInterval, send func(*writepathv1.ReadRunResponse) error) error {
	tel := mi.GetTelemetry()
	sizes := make([]int, len(tel))
	total := 0
	for i, wt := range tel {
		// As a repeated field: tag, length, message.
		sizes[i] = 1 + protowire.SizeBytes(proto.Size(wt))
		total += sizes[i]
	}
	if total <= MaxTelemetryChunk {
		return send(&writepathv1.ReadRunResponse{Item: &writepathv1.ReadRunResponse_Interval{Interval: mi}})
	}
	mi.Telemetry = nil // mi is this scan's own copy
	if err := send(&writepathv1.ReadRunResponse{Item: &writepathv1.ReadRunResponse_Interval{Interval: mi}}); err != nil {
		return err
	}
	for len(tel) > 0 {
		n, size := 0, 0
		for n < len(tel) && (n == 0 || size+sizes[n] <= MaxTelemetryChunk) {
			size += sizes[n]
			n++
		}
		chunk := &writepathv1.IntervalTelemetry{Phase: mi.GetPhase(), Seq: mi.GetSeq(), Telemetry: tel[:n]}
		if err := send(&writepathv1.ReadRunResponse{Item: &writepathv1.ReadRunResponse_Telemetry{Telemetry: chunk}}); err != nil {
			return err
		}
		tel, sizes = tel[n:], sizes[n:]
	}
	return nil
}

// Items is a Source over items already in memory, replayed as they are
// for any request (a run received another way; tests).
type Items []*writepathv1.ReadRunResponse

// ReadRun calls fn with each item.
func (it Items) ReadRun(_ context.Context, _ *writepathv1.ReadRunRequest, fn func(*writepathv1.ReadRunResponse) error) error {
	for _, item := range it {
		if err := fn(item); err != nil {
			return err
		}
	}
	return nil
}

// NewItems lists a run as a ReadRun stream would: the record, the merged
// intervals, the worker snapshots.
func NewItems(rec *writepathv1.Run, ivs []*writepathv1.MergedInterval, snaps []*writepathv1.WorkerInterval) Items {
	it := Items{{Item: &writepathv1.ReadRunResponse_Run{Run: rec}}}
	for _, mi := range ivs {
		it = append(it, &writepathv1.ReadRunResponse{Item: &writepathv1.ReadRunResponse_Interval{Interval: mi}})
	}
	for _, wi := range snaps {
		it = append(it, &writepathv1.ReadRunResponse{Item: &writepathv1.ReadRunResponse_WorkerInterval{WorkerInterval: wi}})
	}
	return it
}
