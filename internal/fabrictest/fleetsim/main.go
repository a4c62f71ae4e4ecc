// Command fleetsim connects a fleet of simulated workers to a coordinator
// and runs one measured phase on all of them, each streaming one interval
// per period with a real encoded histogram, to size the coordinator:
// merge latency per interval and (with -pid) its resident memory.
//
//	go run ./internal/fabrictest/fleetsim -coordinator 127.0.0.1:7470 -workers 1000 -seconds 20 -pid $(pgrep -f 'writepath coordinator')
//
// At the end it prints one line for scripts (bench/fleet.sh):
//
//	fleetsim: run ID intervals N lag p50 X ms p99 Y ms max Z ms cpu C ms/interval rss_peak R KiB sent_last_p99 S ms clock_err_max E ms
//
// lag is from a merged interval's end (the coordinator's clock, which is
// every worker's end through the offset it gave the worker) to its arrival
// here: what a user watching the run sees. Beside it, the simulator's own
// share: sent_last is when the last worker's send of an interval returned,
// after that interval's end on the worker's clock (p99 over the intervals),
// and clock_err the largest clock offset the coordinator estimated for a
// worker (all of them read this host's clock: the true offset is 0, and a
// worker given +x ends its intervals x late).
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

const simKind = "type.googleapis.com/writepath.fleetsim.v1.Spec"

func main() {
	addr := flag.String("coordinator", "127.0.0.1:7470", "coordinator address")
	n := flag.Int("workers", 1000, "simulated workers")
	perConn := flag.Int("per-conn", 10, "workers sharing one connection")
	seconds := flag.Int("seconds", 20, "intervals per worker (1 s each)")
	pid := flag.Int("pid", 0, "coordinator pid, to report its memory")
	settle := flag.Duration("settle", 16*time.Second, "idle time between all connected and the run, as a fleet connected before its runs: the coordinator estimates clock offsets from the last 16 pings (one a second)")
	flag.Parse()
	if err := run(*addr, *n, *perConn, *seconds, *pid, *settle); err != nil {
		fmt.Fprintln(os.Stderr, "fleetsim:", err)
		os.Exit(1)
	}
}

func run(addr string, n, perConn, seconds, pid int, settle time.Duration) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	payloads := histograms(50)
	sent := &sendLog{}
	var conns []*grpc.ClientConn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := range n {
		if i%perConn == 0 {
			c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return err
			}
			conns = append(conns, c)
		}
		w := &simWorker{name: fmt.Sprintf("sim-%04d", i), hdr: payloads[i%len(payloads)].hdr, sparse: payloads[i%len(payloads)].sparse, sent: sent}
		// The connection is chosen here, not in the goroutine: one that
		// starts late (a loaded machine) would read a later conns and pile
		// onto the newest connection past its 100 concurrent streams,
		// where gRPC queues the stream and the worker never says hello.
		wc := writepathv1.NewWorkerServiceClient(conns[len(conns)-1])
		wg.Add(1)
		go func() { defer wg.Done(); w.serve(ctx, wc) }()
	}
	ctl := writepathv1.NewControlServiceClient(conns[0])
	if err := waitConnected(ctx, ctl, n); err != nil {
		return err
	}
	report(pid, "idle, all connected")
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		return ctx.Err()
	}
	start := time.Now()
	sub, err := ctl.SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: &writepathv1.RunSpec{
		Spec:     &anypb.Any{TypeUrl: simKind, Value: []byte(fmt.Sprint(seconds))},
		Interval: durationpb.New(time.Second)}})
	if err != nil {
		return err
	}
	fmt.Printf("submit (validate on %d workers) took %v\n", n, time.Since(start).Round(time.Millisecond))
	return follow(ctx, ctl, sub.GetRun().GetId(), pid, sent)
}

// follow prints when each merged interval arrived relative to its end and
// the coordinator's memory, until the run ends, then the summary line.
func follow(ctx context.Context, ctl writepathv1.ControlServiceClient, id string, pid int, sent *sendLog) error {
	stream, err := ctl.WatchRun(ctx, &writepathv1.WatchRunRequest{RunId: id})
	if err != nil {
		return err
	}
	var lags, lastSent []time.Duration
	var cpu0, cpu1 time.Duration // coordinator CPU at the first and last interval
	for {
		ev, err := stream.Recv()
		if err != nil {
			report(pid, "after the run")
			break
		}
		if mi := ev.GetInterval(); mi != nil {
			lag := time.Since(mi.GetEnd().AsTime())
			lags = append(lags, lag)
			if cpu1 = cpuTime(pid); len(lags) == 1 {
				cpu0 = cpu1
			}
			var ops int64 // none when every worker was lost
			for _, st := range mi.GetStats() {
				ops += st.GetCount()
			}
			s := slices.Sorted(slices.Values(sent.take(mi.GetSeq())))
			var s50, smax time.Duration
			if len(s) > 0 {
				s50, smax = s[len(s)/2], s[len(s)-1]
			}
			lastSent = append(lastSent, smax)
			fmt.Printf("interval %2d: %d workers, %d ops, published %v after its end (sent p50 %v, last %v after it); ", mi.GetSeq(),
				len(mi.GetReporting()), ops, lag.Round(time.Millisecond), s50.Round(time.Millisecond), smax.Round(time.Millisecond))
			report(pid, "")
		}
		if r := ev.GetRun(); r != nil && r.GetEnded() != nil {
			fmt.Printf("run %s: %v %s\n", r.GetId(), r.GetState(), r.GetReason())
		}
	}
	o := sent.takeOffsets()
	if len(o) > 0 {
		fmt.Printf("clock offsets the workers were given (true offset 0: one host): min %v p1 %v p50 %v p99 %v max %v\n",
			o[0].Round(10*time.Microsecond), o[len(o)/100].Round(10*time.Microsecond), o[len(o)/2].Round(10*time.Microsecond),
			o[len(o)*99/100].Round(10*time.Microsecond), o[len(o)-1].Round(10*time.Microsecond))
	}
	summary(id, lags, lastSent, o, cpu1-cpu0, pid)
	return nil
}

// summary prints the line bench/fleet.sh reads. CPU per interval is over
// the intervals after the first (its CPU includes the start).
func summary(id string, lags, lastSent, offsets []time.Duration, cpu time.Duration, pid int) {
	if len(lags) == 0 {
		fmt.Printf("fleetsim: run %s intervals 0\n", id)
		return
	}
	quantile := func(d []time.Duration, p float64) float64 {
		d = slices.Sorted(slices.Values(d))
		return float64(d[min(len(d)-1, int(p*float64(len(d))))].Microseconds()) / 1000
	}
	q := func(p float64) float64 { return quantile(lags, p) }
	clockErr := 0.0
	if len(offsets) > 0 {
		clockErr = max(-quantile(offsets, 0), quantile(offsets, 1))
	}
	perInterval := 0.0
	if len(lags) > 1 {
		perInterval = float64(cpu.Microseconds()) / 1000 / float64(len(lags)-1)
	}
	fmt.Printf("fleetsim: run %s intervals %d lag p50 %.0f ms p99 %.0f ms max %.0f ms cpu %.1f ms/interval rss_peak %d KiB sent_last_p99 %.0f ms clock_err_max %.1f ms\n",
		id, len(lags), q(0.50), q(0.99), q(1), perInterval, statusKiB(pid, "VmHWM"), quantile(lastSent, 0.99), clockErr)
}

// cpuTime is the process's user+system CPU time so far (0 without pid).
func cpuTime(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) start after ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// statusKiB reads one "Vm..." field of /proc/PID/status in KiB.
func statusKiB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func waitConnected(ctx context.Context, ctl writepathv1.ControlServiceClient, n int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		ws, err := ctl.ListWorkers(ctx, &writepathv1.ListWorkersRequest{})
		if err == nil {
			c := 0
			for _, w := range ws.GetWorkers() {
				if w.GetConnected() {
					c++
				}
			}
			if c >= n {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%d workers did not all connect", n)
}

// report prints the coordinator's VmRSS and VmHWM.
func report(pid int, what string) {
	if pid == 0 {
		fmt.Println(what)
		return
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		fmt.Println(what, err)
		return
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS") || strings.HasPrefix(l, "VmHWM") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	fmt.Println(what, strings.Join(out, ", "))
}

// payload is one histogram in both encodings a worker may send.
type payload struct{ hdr, sparse []byte }

// histograms returns k encoded 1 s histograms of 5,000 writes each.
func histograms(k int) []payload {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]payload, k)
	for i := range out {
		h := hist.New()
		for range 5000 {
			h.Record(int64(200e3 * (0.2 + rng.ExpFloat64()*rng.ExpFloat64())))
		}
		out[i].hdr, _ = h.Encode()
		out[i].sparse = h.EncodeSparse()
	}
	return out
}
