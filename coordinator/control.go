package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/internal/echo"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// controlService serves the CLI's ControlService. Its handlers translate
// domain errors to status codes and do nothing else.
type controlService struct {
	writepathv1.UnimplementedControlServiceServer
	c *Coordinator
}

var _ writepathv1.ControlServiceServer = (*controlService)(nil)

// toStatus maps a domain error to a gRPC status with the same message.
func toStatus(err error) error {
	code := codes.Internal
	switch {
	case errors.Is(err, ErrUnknownKind), errors.Is(err, ErrBadRequest), errors.Is(err, ErrRejected):
		code = codes.InvalidArgument
	case errors.Is(err, ErrNoWorkers):
		code = codes.FailedPrecondition
	case errors.Is(err, ErrRunNotFound), errors.Is(err, ErrCampaignNotFound):
		code = codes.NotFound
	case errors.Is(err, ErrClosed):
		code = codes.Unavailable
	case errors.Is(err, ErrLimit):
		code = codes.ResourceExhausted
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	return status.Error(code, err.Error())
}

func (cs *controlService) SubmitRun(ctx context.Context, req *writepathv1.SubmitRunRequest) (*writepathv1.SubmitRunResponse, error) {
	r, err := cs.c.Submit(ctx, req.GetSpec())
	if err != nil {
		return nil, toStatus(err)
	}
	return &writepathv1.SubmitRunResponse{Run: r}, nil
}

func (cs *controlService) CancelRun(_ context.Context, req *writepathv1.CancelRunRequest) (*writepathv1.CancelRunResponse, error) {
	r, err := cs.c.Cancel(req.GetRunId(), req.GetReason())
	if err != nil {
		return nil, toStatus(err)
	}
	return &writepathv1.CancelRunResponse{Run: r}, nil
}

func (cs *controlService) ListRuns(_ context.Context, req *writepathv1.ListRunsRequest) (*writepathv1.ListRunsResponse, error) {
	runs, err := cs.c.store.ListRuns(int(req.GetLimit()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &writepathv1.ListRunsResponse{Runs: runs}, nil
}

func (cs *controlService) GetRun(_ context.Context, req *writepathv1.GetRunRequest) (*writepathv1.GetRunResponse, error) {
	resp, err := cs.c.RunDetail(req)
	if err != nil {
		return nil, toStatus(err)
	}
	return resp, nil
}

func (cs *controlService) ListWorkers(context.Context, *writepathv1.ListWorkersRequest) (*writepathv1.ListWorkersResponse, error) {
	ws, err := cs.c.Workers()
	if err != nil {
		return nil, toStatus(err)
	}
	return &writepathv1.ListWorkersResponse{Workers: ws}, nil
}

// WatchRun replays the stored intervals, then streams live events until
// the run ends, then sends the final record.
func (cs *controlService) WatchRun(req *writepathv1.WatchRunRequest, stream writepathv1.ControlService_WatchRunServer) error {
	if err := cs.c.Watch(stream.Context(), req.GetRunId(), stream.Send); err != nil {
		return toStatus(err)
	}
	return nil
}

// RunDetail reads a run and, as asked, its intervals from the store.
func (c *Coordinator) RunDetail(req *writepathv1.GetRunRequest) (*writepathv1.GetRunResponse, error) {
	return ReadRun(c.store, req)
}

// ReadRun answers a GetRun from a store directly; the CLI uses it to read a
// file without a coordinator.
func ReadRun(st *store.Store, req *writepathv1.GetRunRequest) (*writepathv1.GetRunResponse, error) {
	rec, err := st.GetRun(req.GetRunId())
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s", ErrRunNotFound, echo.Clip(req.GetRunId()))
		}
		return nil, err
	}
	resp := &writepathv1.GetRunResponse{Run: rec}
	if req.GetIntervals() {
		if resp.Intervals, err = st.Intervals(rec.GetId()); err != nil {
			return nil, err
		}
	}
	if req.GetWorkerIntervals() {
		snaps, err := st.WorkerIntervals(rec.GetId())
		if err != nil {
			return nil, err
		}
		for _, s := range snaps {
			resp.WorkerIntervals = append(resp.WorkerIntervals, &writepathv1.WorkerInterval{Worker: s.Worker, Interval: s.Interval})
		}
	}
	return resp, nil
}

// Workers lists connected workers, then those only known from the store.
func (c *Coordinator) Workers() ([]*writepathv1.WorkerInfo, error) {
	c.mu.Lock()
	var out []*writepathv1.WorkerInfo
	seen := map[string]bool{}
	for _, s := range c.mu.sessions {
		out = append(out, s.info(true))
		seen[s.name] = true
	}
	c.mu.Unlock()
	stored, err := c.store.Workers()
	if err != nil {
		return nil, err
	}
	out = append(out, offline(stored, seen, c.cfg.MaxWorkers)...)
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out, nil
}

// offline returns the stored workers not connected: the max most recently
// seen, each within the Hello bounds (a record stored before they existed
// keeps its name and loses what is over), so the list always fits a reply.
func offline(stored []*writepathv1.WorkerInfo, connected map[string]bool, max int) []*writepathv1.WorkerInfo {
	var out []*writepathv1.WorkerInfo
	for _, w := range stored {
		if connected[w.GetName()] {
			continue
		}
		w.Connected = false
		if proto.Size(w) > 2*MaxHelloBytes || checkHello(&writepathv1.Hello{Name: w.GetName(), Labels: w.GetLabels()}) != nil {
			w = &writepathv1.WorkerInfo{Name: echo.Clip(w.GetName()), LastSeen: w.GetLastSeen()}
		}
		out = append(out, w)
	}
	if len(out) > max {
		sort.Slice(out, func(i, j int) bool { return out[i].GetLastSeen().AsTime().After(out[j].GetLastSeen().AsTime()) })
		out = out[:max]
	}
	return out
}
