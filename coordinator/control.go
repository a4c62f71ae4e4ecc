package coordinator

import (
	"context"
	"errors"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/internal/echo"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
)

// controlService serves the CLI's ControlService. Its handlers translate
// domain errors to status codes and do nothing else.
type controlService struct {
	writepathv1.UnimplementedControlServiceServer
	c *Coordinator
}

var _ writepathv1.ControlServiceServer = (*controlService)(nil)

// toStatus maps a domain error to a gRPC status with the same message:
// NotFound only for what is not stored, DataLoss for a damaged store,
// Internal for anything unforeseen.
func toStatus(err error) error {
	code := codes.Internal
	switch {
	case errors.Is(err, ErrUnknownKind), errors.Is(err, ErrBadRequest), errors.Is(err, ErrRejected):
		code = codes.InvalidArgument
	case errors.Is(err, ErrNoWorkers):
		code = codes.FailedPrecondition
	case errors.Is(err, ErrRunNotFound), errors.Is(err, ErrCampaignNotFound), errors.Is(err, results.ErrRunNotFound):
		code = codes.NotFound
	case errors.Is(err, store.ErrCorrupt):
		// The store holds the run but cannot read it back: the client
		// must hear that (and the file named), not that it is missing.
		code = codes.DataLoss
	case errors.Is(err, ErrClosed), errors.Is(err, store.ErrClosed):
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
	r, err := cs.c.GetRun(req.GetRunId())
	if err != nil {
		return nil, toStatus(err)
	}
	return &writepathv1.GetRunResponse{Run: r}, nil
}

// ReadRun streams a stored run (results.Scan: one stored value or
// telemetry chunk per message, read from the store in batches).
func (cs *controlService) ReadRun(req *writepathv1.ReadRunRequest, stream writepathv1.ControlService_ReadRunServer) error {
	if err := results.Scan(stream.Context(), cs.c.store, req, stream.Send); err != nil {
		return toStatus(err)
	}
	return nil
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
