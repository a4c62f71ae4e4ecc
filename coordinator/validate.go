package coordinator

import (
	"context"
	"fmt"
	"sort"
	"strings"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// validation is one outstanding Validate: where its answer goes.
type validation struct {
	session *session
	answers chan<- string // buffered for every worker of the submit
}

// validateOn asks every picked worker whether it accepts the run's kind
// spec, host settings and disk profile, and waits (bounded) for all
// answers. Refusals are reported together.
func (c *Coordinator) validateOn(ctx context.Context, picked []*session, rs *writepathv1.RunSpec) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ValidateTimeout)
	defer cancel()
	answers := make(chan string, len(picked))
	var ids []uint64
	defer c.forgetValidations(&ids)
	for _, s := range picked {
		id := c.reqID.Add(1)
		c.mu.Lock()
		c.mu.validate[id] = validation{session: s, answers: answers}
		c.mu.Unlock()
		ids = append(ids, id)
		if !s.send(&writepathv1.ConnectResponse{Msg: &writepathv1.ConnectResponse_Validate{
			Validate: &writepathv1.Validate{RequestId: id, Spec: rs.GetSpec(), Host: rs.GetHost(), Disk: rs.GetDisk()}}}) {
			c.validated(s, &writepathv1.ValidateResult{RequestId: id, Error: "disconnected"})
		}
	}
	var refused []string
	for range picked {
		select {
		case a := <-answers:
			if a != "" {
				refused = append(refused, a)
			}
		case <-ctx.Done():
			return fmt.Errorf("%w: workers did not answer within %v", ErrRejected, c.cfg.ValidateTimeout)
		}
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		return fmt.Errorf("%w: %s", ErrRejected, strings.Join(refused, "; "))
	}
	return nil
}

// validated delivers the answer of the worker of session from to the
// waiting submit, once. Only the worker that was asked may answer: an
// answer from another session (a worker answering for another, to pass a
// spec that one would refuse) is dropped and logged.
func (c *Coordinator) validated(from *session, res *writepathv1.ValidateResult) {
	c.mu.Lock()
	v, ok := c.mu.validate[res.GetRequestId()]
	if ok && v.session != from {
		c.mu.Unlock()
		c.cfg.Log.Warn("validation answer from a worker that was not asked: dropped", "worker", from.name,
			"asked", v.session.name, "request", res.GetRequestId())
		return
	}
	delete(c.mu.validate, res.GetRequestId())
	c.mu.Unlock()
	if !ok {
		return
	}
	a := res.GetError()
	if a != "" {
		a = v.session.name + ": " + a
	}
	v.answers <- a // one slot per worker and each id answered once: never blocks
}

func (c *Coordinator) forgetValidations(ids *[]uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range *ids {
		delete(c.mu.validate, id)
	}
}
