package fabrictest_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/internal/fabrictest"
	"github.com/writepath/writepath/internal/fabrictest/testkind"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/worker"
)

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().String()
}

// startChild starts a coordinator process on addr and waits until it serves.
func startChild(t *testing.T, addr, db string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+addr+" "+db)
	cmd.Stderr = os.Stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "serving" {
		cmd.Process.Kill()
		t.Fatalf("child coordinator: %q, %v", line, err)
	}
	return cmd
}

// workers runs n workers against addr until the test ends.
func workers(t *testing.T, addr string, n int, opts ...grpc.DialOption) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for i := range n {
		w, err := worker.New(worker.Config{Coordinator: addr, Name: "w" + string(rune('1'+i)), DataDir: t.TempDir(),
			MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, DialOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(ctx) }()
	}
}

func control(t *testing.T, addr string) writepathv1.ControlServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return writepathv1.NewControlServiceClient(conn)
}

// eventually retries f every 20 ms until it returns nil or 10 s pass.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func connected(ctx context.Context, c writepathv1.ControlServiceClient, n int) error {
	ws, err := c.ListWorkers(ctx, &writepathv1.ListWorkersRequest{})
	if err != nil {
		return err
	}
	got := 0
	for _, w := range ws.GetWorkers() {
		if w.GetConnected() {
			got++
		}
	}
	if got < n {
		return errors.New("workers not connected yet")
	}
	return nil
}

// TestCoordinatorKilledRunInterrupted kills a coordinator process with
// SIGKILL mid-run and starts a new one on the same file and address: the
// file opens, the run is INTERRUPTED with its stored intervals readable,
// the workers reconnect on their own, and a new run finishes.
func TestCoordinatorKilledRunInterrupted(t *testing.T) {
	addr, db := freeAddr(t), filepath.Join(t.TempDir(), "writepath.db")
	child := startChild(t, addr, db)
	defer child.Process.Kill()
	workers(t, addr, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctl := control(t, addr)
	eventually(t, "workers connect", func() error { return connected(ctx, ctl, 2) })
	sub, err := ctl.SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: fabrictest.SynthSpec(
		testkind.Spec{Ops: 1_000_000, Duration: time.Minute, Seed: 1})})
	if err != nil {
		t.Fatal(err)
	}
	id := sub.GetRun().GetId()
	eventually(t, "intervals stored", func() error {
		got, err := fabrictest.ReadStored(ctx, ctl, id, false)
		if err == nil && len(got.GetIntervals()) < 3 {
			err = errors.New("fewer than 3 intervals")
		}
		return err
	})
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()

	st, err := store.Open(db)
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer st.Close()
	if err := st.Check(); err != nil { // nothing writes yet: the check is exact
		t.Fatalf("store check after SIGKILL: %v", err)
	}
	c, err := coordinator.New(fabrictest.FastCoordinator(), st)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := listenRetry(addr)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	c.Register(s)
	go s.Serve(lis)
	defer func() {
		c.Close()
		s.Stop()
		if err := st.Check(); err != nil {
			t.Errorf("store check: %v", err)
		}
	}()

	// The control connection may still hold the dead process's transport:
	// retry until it has reconnected.
	var got *fabrictest.Stored
	eventually(t, "read the run from the new coordinator", func() error {
		got, err = fabrictest.ReadStored(ctx, ctl, id, true)
		return err
	})
	if got.GetRun().GetState() != writepathv1.RunState_RUN_STATE_INTERRUPTED || !strings.Contains(got.GetRun().GetReason(), "restarted") {
		t.Errorf("run after restart: %v (%s); want INTERRUPTED", got.GetRun().GetState(), got.GetRun().GetReason())
	}
	// A merged interval is committed before its snapshots: the kill may
	// have fallen between the two commits of the last one.
	if n := len(got.GetIntervals()); n < 3 || len(got.GetWorkerIntervals()) < 2*(n-1) {
		t.Errorf("stored: %d intervals, %d worker snapshots; want >= 3 and >= 2 per interval but the last", n, len(got.GetWorkerIntervals()))
	}
	eventually(t, "workers reconnect", func() error { return connected(ctx, ctl, 2) })
	sub, err = ctl.SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: fabrictest.SynthSpec(testkind.Spec{Ops: 50, Duration: 200 * time.Millisecond})})
	if err != nil {
		t.Fatalf("submit after restart: %v", err)
	}
	if r, err := c.Wait(ctx, sub.GetRun().GetId()); err != nil || r.GetState() != writepathv1.RunState_RUN_STATE_FINISHED {
		t.Errorf("run after restart = %v, %v; want FINISHED", r.GetState(), err)
	}
}

// cutConn is a link that can be cut: afterwards it delivers nothing either
// way and reports no error, like a pulled cable.
type cutConn struct {
	net.Conn
	cut    <-chan struct{}
	closed chan struct{}
	once   sync.Once
}

func (c *cutConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	select {
	case <-c.cut:
		<-c.closed
		return 0, net.ErrClosed
	default:
		return n, err
	}
}

func (c *cutConn) Write(b []byte) (int, error) {
	select {
	case <-c.cut:
		return len(b), nil
	default:
		return c.Conn.Write(b)
	}
}

// Close after the cut leaves the socket open (a pulled cable sends no
// FIN); the test closes it at the end.
func (c *cutConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	select {
	case <-c.cut:
		return nil
	default:
		return c.Conn.Close()
	}
}

// TestLinkCutWorkerLost cuts one worker's link mid-run without closing it:
// only the heartbeat timeout can notice. The run ends PARTIAL naming that
// worker, within the timeout, and the worker reconnects on a new link.
func TestLinkCutWorkerLost(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 2,
		Coordinator: coordinator.Config{HeartbeatTimeout: 2500 * time.Millisecond, MergeWait: time.Second}})
	cut := make(chan struct{})
	var once sync.Once
	cutLink := func() { once.Do(func() { close(cut) }) }
	var mu sync.Mutex
	dials := 0
	dialer := func(ctx context.Context, addr string) (net.Conn, error) {
		// gRPC hands a custom dialer the unix target as written.
		c, err := (&net.Dialer{}).DialContext(ctx, "unix", strings.TrimPrefix(addr, "unix://"))
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		dials++
		if dials > 1 { // only the first link is cut
			return c, nil
		}
		t.Cleanup(func() { c.Close() })
		return &cutConn{Conn: c, cut: cut, closed: make(chan struct{})}, nil
	}
	workers(t, f.Target(), 1, append(f.DialOptions(), grpc.WithContextDialer(dialer))...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eventually(t, "3 workers", func() error { return connected(ctx, f.Control(), 3) })
	sub, err := f.Control().SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: fabrictest.SynthSpec(
		testkind.Spec{Ops: 5000, Duration: 4 * time.Second, Seed: 2})})
	if err != nil {
		t.Fatal(err)
	}
	id := sub.GetRun().GetId()
	waitIntervals(ctx, t, f, id, 3)
	cutAt := time.Now()
	cutLink()
	got := waitRun(ctx, t, f, id)
	run := got.GetRun()
	if run.GetState() != writepathv1.RunState_RUN_STATE_PARTIAL || len(run.GetLost()) != 1 || run.GetLost()[0] != "w1" {
		t.Fatalf("state %v lost %v (%s); want PARTIAL, lost [w1]", run.GetState(), run.GetLost(), run.GetReason())
	}
	// The coordinator's heartbeat timeout normally notices first; on a
	// starved machine the worker's own silence watchdog (1.5x longer) may
	// reconnect first, which ends the old session just the same.
	for _, w := range run.GetWorkers() {
		if w.GetName() == "w1" && !strings.Contains(w.GetLostReason(), "heartbeat timeout") &&
			!strings.Contains(w.GetLostReason(), "replaced by a new connection") {
			t.Errorf("w1 lost reason %q; want heartbeat timeout", w.GetLostReason())
		}
	}
	// Detected within the timeout (plus a ping period and scheduling slack):
	// no interval waited on w1 much past it.
	for _, mi := range got.GetIntervals() {
		if mi.GetStart().AsTime().After(cutAt.Add(4*time.Second)) && contains(mi.GetMissing(), "w1") {
			t.Errorf("interval %d (start %v after the cut) still waited for w1", mi.GetSeq(), mi.GetStart().AsTime().Sub(cutAt))
		}
	}
	eventually(t, "w1 reconnects on a new link", func() error { return connected(ctx, f.Control(), 3) })
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
