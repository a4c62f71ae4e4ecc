package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/coordinator/store"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// Coordinator is the registry of workers, the runs and their merges.
type Coordinator struct {
	cfg   Config
	store *store.Store

	// ctx ends every run and session goroutine on Close.
	ctx    context.Context
	cancel context.CancelFunc
	// wg owns every goroutine the coordinator starts (runs, session
	// receivers, pingers).
	wg        sync.WaitGroup
	closeOnce sync.Once

	reqID atomic.Uint64
	camps *campaigns // campaigns executing (campaign.go)
	stats stats      // monitoring counters (stats.go)

	mu struct {
		sync.Mutex
		sessions map[string]*session   // connected workers by name
		runs     map[string]*run       // runs in flight by id
		validate map[uint64]validation // submit validations awaiting answers
		lastID   string                // last run id handed out
		closed   bool
	}
}

// New returns a Coordinator keeping its results in st. Runs that the store
// holds as in flight were cut short by a previous coordinator's death: they
// are marked interrupted, keeping what was stored.
func New(cfg Config, st *store.Store) (*Coordinator, error) {
	c := &Coordinator{cfg: cfg.withDefaults(), store: st, camps: newCampaigns()}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.mu.sessions = map[string]*session{}
	c.mu.runs = map[string]*run{}
	c.mu.validate = map[uint64]validation{}
	if err := errors.Join(c.interruptStale(), c.interruptStaleCampaigns()); err != nil {
		c.cancel()
		return nil, err
	}
	return c, nil
}

func (c *Coordinator) interruptStale() error {
	runs, err := c.store.ListRuns(0)
	if err != nil {
		return fmt.Errorf("interrupt stale runs: %w", err)
	}
	if len(runs) > 0 {
		c.mu.lastID = runs[0].GetId()
	}
	for _, r := range runs {
		if terminal(r.GetState()) {
			continue
		}
		r.State = writepathv1.RunState_RUN_STATE_INTERRUPTED
		r.Reason = "coordinator restarted while the run was in flight"
		r.Ended = timestamppb.Now()
		if err := c.store.PutRun(r); err != nil {
			return fmt.Errorf("interrupt stale runs: %w", err)
		}
		c.cfg.Log.Warn("run interrupted by restart", "run", r.GetId())
	}
	return nil
}

// terminal reports whether a run in state s has ended.
func terminal(s writepathv1.RunState) bool {
	switch s {
	case writepathv1.RunState_RUN_STATE_FINISHED, writepathv1.RunState_RUN_STATE_PARTIAL,
		writepathv1.RunState_RUN_STATE_FAILED, writepathv1.RunState_RUN_STATE_CANCELLED,
		writepathv1.RunState_RUN_STATE_INTERRUPTED:
		return true
	}
	return false
}

// Register adds the coordinator's WorkerService and ControlService to s.
func (c *Coordinator) Register(s grpc.ServiceRegistrar) {
	writepathv1.RegisterWorkerServiceServer(s, &workerService{c: c})
	writepathv1.RegisterControlServiceServer(s, &controlService{c: c})
}

// Close ends every run in flight (they are stored as interrupted) and every
// session, and waits for their goroutines. Stop the gRPC server first so no
// new streams arrive. It is safe to call more than once.
func (c *Coordinator) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.mu.closed = true
		c.mu.Unlock()
		c.cancel()
		c.wg.Wait()
	})
	return nil
}

// go runs f as a goroutine owned by c.
func (c *Coordinator) goOwned(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// newRunID returns a run id: the UTC creation time to the millisecond,
// fixed width so that byte order is time order, bumped past the last one so
// two runs never share an id.
func (c *Coordinator) newRunIDLocked(now time.Time) string {
	for {
		id := now.UTC().Format("20060102-150405.000")
		if id > c.mu.lastID {
			c.mu.lastID = id
			return id
		}
		now = now.Add(time.Millisecond)
	}
}
