package fabrictest

import (
	"context"
	"errors"
	"io"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// Stored is everything a run stored, read whole through ReadRun (tests
// compare it against what the workers recorded; readers reduce the stream
// instead, see package results).
type Stored struct {
	Run             *writepathv1.Run
	Intervals       []*writepathv1.MergedInterval
	WorkerIntervals []*writepathv1.WorkerInterval
	WorkerTotals    []*writepathv1.WorkerTotal
}

// GetRun is the record.
func (s *Stored) GetRun() *writepathv1.Run { return s.Run }

// GetIntervals are the merged intervals, telemetry reassembled.
func (s *Stored) GetIntervals() []*writepathv1.MergedInterval { return s.Intervals }

// GetWorkerIntervals are the worker snapshots.
func (s *Stored) GetWorkerIntervals() []*writepathv1.WorkerInterval { return s.WorkerIntervals }

// ReadStored reads run id whole: its merged intervals and, with workers,
// every worker snapshot and stored total.
func ReadStored(ctx context.Context, ctl writepathv1.ControlServiceClient, id string, workers bool) (*Stored, error) {
	req := &writepathv1.ReadRunRequest{RunId: id, Intervals: true}
	if workers {
		req.Workers = writepathv1.WorkerDetail_WORKER_DETAIL_INTERVALS
	}
	stream, err := ctl.ReadRun(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &Stored{}
	for {
		item, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		out.add(item)
	}
	if workers {
		req.Workers = writepathv1.WorkerDetail_WORKER_DETAIL_TOTALS
		req.Intervals = false
		if err := out.readTotals(ctx, ctl, req); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Stored) add(item *writepathv1.ReadRunResponse) {
	switch {
	case item.GetRun() != nil:
		s.Run = item.GetRun()
	case item.GetInterval() != nil:
		s.Intervals = append(s.Intervals, item.GetInterval())
	case item.GetTelemetry() != nil && len(s.Intervals) > 0:
		last := s.Intervals[len(s.Intervals)-1]
		last.Telemetry = append(last.Telemetry, item.GetTelemetry().GetTelemetry()...)
	case item.GetWorkerInterval() != nil:
		s.WorkerIntervals = append(s.WorkerIntervals, item.GetWorkerInterval())
	}
}

// readTotals adds the stored worker totals (the TOTALS stream's, without
// the snapshots it sends for phases that have none).
func (s *Stored) readTotals(ctx context.Context, ctl writepathv1.ControlServiceClient, req *writepathv1.ReadRunRequest) error {
	stream, err := ctl.ReadRun(ctx, req)
	if err != nil {
		return err
	}
	for {
		item, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if t := item.GetWorkerTotal(); t != nil {
			s.WorkerTotals = append(s.WorkerTotals, t)
		}
	}
}
