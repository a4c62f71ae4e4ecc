package crash

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/writepath/writepath/telemetry/mysqlstatus"
	"github.com/writepath/writepath/workload"
)

// LSNSample is one reading of InnoDB's redo position during the load.
type LSNSample struct {
	At            time.Time `json:"at"`
	LSN           uint64    `json:"lsn"`
	CheckpointLSN uint64    `json:"checkpoint_lsn"`
	// PagesDirty is Innodb_buffer_pool_pages_dirty: what a crash leaves
	// unflushed in the buffer pool.
	PagesDirty int64 `json:"pages_dirty"`
}

// CheckpointAge is LSN - last checkpoint: the redo a crash at this moment
// leaves to replay.
func (s LSNSample) CheckpointAge() uint64 {
	if s.LSN < s.CheckpointLSN {
		return 0
	}
	return s.LSN - s.CheckpointLSN
}

// lsnSampler reads the redo position once a period on its own connection
// while the load runs (telemetry/mysqlstatus parses SHOW ENGINE INNODB
// STATUS and SHOW GLOBAL STATUS).
type lsnSampler struct {
	st     *mysqlstatus.Sampler
	period time.Duration
	lsn    *workload.Gauge // reported with each interval
	age    *workload.Gauge
	dirty  *workload.Gauge

	mu struct {
		sync.Mutex
		samples []LSNSample
		err     error // the last failure
	}
}

func newLSNSampler(db *sql.DB, rec *workload.Recorder) *lsnSampler {
	return &lsnSampler{st: mysqlstatus.NewSampler(db), period: time.Second,
		lsn: rec.Gauge("innodb_lsn"), age: rec.Gauge("checkpoint_age"), dirty: rec.Gauge("pages_dirty")}
}

// run samples until ctx ends.
func (s *lsnSampler) run(ctx context.Context) {
	tick := time.NewTicker(s.period)
	defer tick.Stop()
	for {
		s.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *lsnSampler) sample(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, s.period)
	defer cancel()
	st, err := s.st.Sample(qctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.mu.err = err // the server may be killed mid-query
		return
	}
	smp := LSNSample{At: st.At, LSN: st.Log.LSN, CheckpointLSN: st.Log.LastCheckpoint, PagesDirty: st.PagesDirty}
	s.mu.samples = append(s.mu.samples, smp)
	s.lsn.Set(int64(smp.LSN))
	s.age.Set(int64(smp.CheckpointAge()))
	s.dirty.Set(smp.PagesDirty)
}

// before returns the samples taken before t (the kill) and the last of
// them (zero when none).
func (s *lsnSampler) before(t time.Time) ([]LSNSample, LSNSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []LSNSample
	for _, smp := range s.mu.samples {
		if smp.At.Before(t) {
			out = append(out, smp)
		}
	}
	if len(out) == 0 {
		return nil, LSNSample{}
	}
	return out, out[len(out)-1]
}

// lastErr is the last sampling failure, "" when none.
func (s *lsnSampler) lastErr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.err == nil {
		return ""
	}
	return s.mu.err.Error()
}
