package coordinator

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/internal/echo"
	"github.com/writepath/writepath/labels"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// Bounds on a worker's Hello. Every connected worker's Hello is kept in
// memory and in the store, and ListWorkers sends them all: 40 workers with
// 8 MiB labels once made `writepath workers` fail for good.
const (
	// MaxHelloBytes bounds a whole Hello (labels are bounded by package
	// labels, 32 pairs of at most 63+255 bytes).
	MaxHelloBytes = 16 << 10
	maxKinds      = 32 // kinds one worker advertises
	maxPhases     = 32 // phases of one kind
	maxCaps       = 32 // capabilities
	maxHostLen    = 255
)

// hello reads and checks a new stream's first message: a Hello within the
// hello deadline, within the bounds above, naming the worker its
// certificate names (when the transport binds one). Errors are statuses.
func (c *Coordinator) hello(stream writepathv1.WorkerService_ConnectServer) (*writepathv1.Hello, error) {
	type first struct {
		m   *writepathv1.ConnectRequest
		err error
	}
	got := make(chan first, 1)
	// Ends when the stream does, at the latest when Connect returns.
	go func() { m, err := stream.Recv(); got <- first{m, err} }()
	t := time.NewTimer(c.cfg.HelloTimeout)
	defer t.Stop()
	var f first
	select {
	case f = <-got:
	case <-t.C:
		return nil, status.Errorf(codes.DeadlineExceeded, "no hello within %v (the hello deadline)", c.cfg.HelloTimeout)
	case <-c.ctx.Done():
		return nil, status.Error(codes.Unavailable, "coordinator closing")
	}
	if f.err != nil {
		return nil, f.err
	}
	h := f.m.GetHello()
	if h == nil {
		return nil, status.Error(codes.InvalidArgument, "first message must be a Hello")
	}
	if err := checkHello(h); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "hello: %v", err)
	}
	if c.cfg.WorkerIdentity != nil {
		if names, bound := c.cfg.WorkerIdentity(stream.Context()); bound && !contains(names, h.GetName()) {
			return nil, status.Errorf(codes.PermissionDenied, "hello: worker name %s is not the name its certificate carries (%s); "+
				"issue this worker its own certificate (writepath certs worker DIR NAME)", echo.Quote(h.GetName()), quoteAll(names))
		}
	}
	return h, nil
}

// checkHello bounds everything a Hello carries.
func checkHello(h *writepathv1.Hello) error {
	if n := proto.Size(h); n > MaxHelloBytes {
		return fmt.Errorf("%d bytes, the limit is %d", n, MaxHelloBytes)
	}
	if err := checkText("worker name", h.GetName(), maxNameLen, false); err != nil {
		return err
	}
	if err := checkText("host", h.GetHost(), maxHostLen, true); err != nil {
		return err
	}
	if err := checkText("version", h.GetVersion(), maxNameLen, true); err != nil {
		return err
	}
	if err := labels.Check("labels", h.GetLabels()); err != nil {
		return err
	}
	if n := len(h.GetCapabilities()); n > maxCaps {
		return fmt.Errorf("%d capabilities, the limit is %d", n, maxCaps)
	}
	if n := len(h.GetKinds()); n > maxKinds {
		return fmt.Errorf("%d kinds, the limit is %d", n, maxKinds)
	}
	for _, k := range h.GetKinds() {
		if err := checkKind(k); err != nil {
			return err
		}
	}
	return nil
}

func checkKind(k *writepathv1.KindInfo) error {
	if err := checkText("kind", k.GetKind(), 2*maxNameLen, false); err != nil {
		return err
	}
	if err := checkText("kind name", k.GetName(), maxNameLen, true); err != nil {
		return err
	}
	if n := len(k.GetPhases()); n > maxPhases {
		return fmt.Errorf("kind %s: %d phases, the limit is %d", echo.Quote(k.GetName()), n, maxPhases)
	}
	for _, p := range k.GetPhases() {
		if err := checkText("phase", p.GetName(), maxNameLen, false); err != nil {
			return fmt.Errorf("kind %s: %w", echo.Quote(k.GetName()), err)
		}
	}
	return nil
}

// checkText refuses an empty (unless allowed), long or control-bearing
// string.
func checkText(what, s string, limit int, emptyOK bool) error {
	switch {
	case s == "" && !emptyOK:
		return fmt.Errorf("empty %s", what)
	case len(s) > limit:
		return fmt.Errorf("%s %s: %d bytes, the limit is %d", what, echo.Quote(s), len(s), limit)
	case strings.ContainsFunc(s, isControl):
		return fmt.Errorf("%s %s: a control character", what, echo.Quote(s))
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteAll(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = echo.Quote(s)
	}
	return strings.Join(q, ", ")
}
