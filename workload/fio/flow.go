package fio

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// flowMaxWeight is fio's FLOW_MAX_WEIGHT.
const flowMaxWeight = 1000

// flowGroup is fio's struct fio_flow: the jobs of one flow_id share a
// counter of I/O loop iterations and the sum of their weights. It lives
// in one process, as fio's does: over the fabric each worker's jobs
// regulate each other, not other workers'.
type flowGroup struct {
	counter atomic.Int64 // starts at 1, as fio's
	weight  atomic.Int64
}

// flows hands out one flowGroup per flow_id for a run.
type flows struct {
	mu     sync.Mutex
	groups map[uint32]*flowGroup
}

func (f *flows) get(id uint32) *flowGroup {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.groups == nil {
		f.groups = map[uint32]*flowGroup{}
	}
	g := f.groups[id]
	if g == nil {
		g = &flowGroup{}
		g.counter.Store(1)
		f.groups[id] = g
	}
	return g
}

// flowState is one clone's part of its flow.
type flowState struct {
	group   *flowGroup
	weight  int64
	counter int64
	sleep   time.Duration
}

// joinFlow adds the clone's weight to its flow when it starts (fio's
// flow_init_job); leaveFlow takes its iterations and weight back out
// when it ends (flow_put), so the jobs left recalibrate.
func (c *clone) joinFlow() {
	if c.flows == nil || c.job.Flow == 0 {
		return
	}
	c.flow = flowState{group: c.flows.get(c.job.FlowId), weight: int64(c.job.Flow), sleep: time.Duration(c.job.FlowSleepNs)}
	c.flow.group.weight.Add(c.flow.weight)
}

func (c *clone) leaveFlow() {
	if g := c.flow.group; g != nil {
		g.counter.Add(-c.flow.counter)
		g.weight.Add(-c.flow.weight)
		c.flow.group = nil
	}
}

// flowExceeded is fio's flow_threshold_exceeded: the clone is ahead of
// its share when its iterations over the flow's exceed its weight over
// the flow's total. Ahead, it sleeps flow_sleep (or yields, where fio
// spins) and reports true; otherwise it counts the iteration.
func (c *clone) flowExceeded() bool {
	f := &c.flow
	if f.group == nil {
		return false
	}
	counterRatio := float64(f.counter+1) / float64(f.group.counter.Load()+1)
	weightRatio := float64(f.weight) / float64(max(f.group.weight.Load(), 1))
	if counterRatio > weightRatio {
		if f.sleep > 0 {
			time.Sleep(f.sleep)
		} else {
			runtime.Gosched()
		}
		return true
	}
	f.group.counter.Add(1)
	f.counter++
	return false
}

// waitFlow holds the clone until its flow lets it issue, or it must stop
// (false). It runs the clock's duties meanwhile, so samples, logs and the
// runtime limit go on as in fio's loop, which re-checks them on each
// held iteration.
func (c *clone) waitFlow() bool {
	for c.flowExceeded() {
		if c.tick(c.now()) {
			return false
		}
	}
	return true
}

func setFlowSleep(j *fiov1.Job, v string) error {
	n, err := parseUint(v, 0, 1<<31)
	if err != nil {
		return err
	}
	j.FlowSleepNs = int64(n) * int64(time.Microsecond)
	return nil
}
