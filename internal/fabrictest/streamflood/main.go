// Command streamflood floods a coordinator with idle connections and
// streams, as an attacker holding a stolen worker certificate (or none)
// would, and reports what the coordinator admitted and refused; with -pid
// it samples the coordinator's resident memory meanwhile and prints the
// peak.
//
//	streamflood -coordinator 10.77.0.10:7470 -tls-cert worker-w4.pem -tls-key worker-w4-key.pem -tls-ca ca.pem \
//	    -raw 3000 -conns 300 -streams 100 -hold 15s -pid $(pidof writepath)
//
// Raw connections connect and never start a TLS handshake; each TLS
// connection opens -streams worker streams that never say Hello (and
// reopens them when the coordinator ends them), for -hold.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/writepath/writepath/auth"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/transport"
)

type options struct {
	addr                string
	tls                 auth.TLSFiles
	serverName          string
	raw, conns, streams int
	hold                time.Duration
	pid                 int
}

func main() {
	var o options
	flag.StringVar(&o.addr, "coordinator", "127.0.0.1:7470", "coordinator address")
	flag.StringVar(&o.tls.Cert, "tls-cert", "", "certificate (a worker's: the stolen one)")
	flag.StringVar(&o.tls.Key, "tls-key", "", "its key")
	flag.StringVar(&o.tls.CA, "tls-ca", "", "CA of the coordinator")
	flag.StringVar(&o.serverName, "tls-server-name", "", "coordinator name in its certificate (default: the host of -coordinator)")
	flag.IntVar(&o.raw, "raw", 1000, "connections that never handshake")
	flag.IntVar(&o.conns, "conns", 100, "TLS connections")
	flag.IntVar(&o.streams, "streams", 100, "idle worker streams per TLS connection")
	flag.DurationVar(&o.hold, "hold", 10*time.Second, "how long to hold the flood")
	flag.IntVar(&o.pid, "pid", 0, "coordinator pid: sample its memory")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "streamflood:", err)
		os.Exit(1)
	}
}

// tally counts stream outcomes by gRPC code.
type tally struct {
	mu     sync.Mutex
	ended  map[string]int
	opened atomic.Int64
}

func (t *tally) add(err error) {
	code := status.Code(err).String()
	t.mu.Lock()
	t.ended[code]++
	t.mu.Unlock()
}

func run(o options) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.hold)
	defer cancel()
	if o.pid != 0 {
		fmt.Printf("coordinator before the flood: RSS %d MiB, peak so far %d MiB\n", rss(o.pid)>>10, hwm(o.pid)>>10)
	}
	peak := make(chan int64, 1)
	go func() { peak <- sample(ctx, o.pid) }()
	var wg sync.WaitGroup
	defer wg.Wait()
	rawOK := 0
	for range o.raw {
		c, err := net.DialTimeout("tcp", o.addr, 2*time.Second)
		if err != nil {
			continue
		}
		rawOK++
		wg.Add(1)
		go func() { defer wg.Done(); <-ctx.Done(); c.Close() }()
	}
	fmt.Printf("raw connections opened: %d of %d\n", rawOK, o.raw)
	opts, err := dialOptions(o)
	if err != nil {
		return err
	}
	t := &tally{ended: map[string]int{}}
	for range o.conns {
		conn, err := grpc.NewClient(o.addr, opts...)
		if err != nil {
			return err
		}
		defer conn.Close()
		cl := writepathv1.NewWorkerServiceClient(conn)
		for range o.streams {
			wg.Add(1)
			go func() { defer wg.Done(); idle(ctx, cl, t) }()
		}
	}
	<-ctx.Done()
	wg.Wait()
	fmt.Printf("idle streams opened: %d; ended by the coordinator: %v\n", t.opened.Load(), t.ended)
	if o.pid != 0 {
		// The kernel's high-water mark catches a peak between samples.
		sampled := <-peak
		fmt.Printf("coordinator peak RSS during the flood: %d MiB (sampled every 100 ms: %d MiB)\n", max(sampled, hwm(o.pid))>>10, sampled>>10)
	}
	return nil
}

// idle keeps one worker stream open without a Hello, reopening it each
// time the coordinator ends it, until ctx ends.
func idle(ctx context.Context, cl writepathv1.WorkerServiceClient, t *tally) {
	for ctx.Err() == nil {
		s, err := cl.Connect(ctx)
		if err != nil {
			if ctx.Err() == nil {
				t.add(err)
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		t.opened.Add(1)
		_, err = s.Recv()
		if ctx.Err() == nil {
			t.add(err)
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func dialOptions(o options) ([]grpc.DialOption, error) {
	c := transport.Client{}
	if o.tls.Enabled() {
		name := o.serverName
		if name == "" {
			name, _, _ = net.SplitHostPort(o.addr)
		}
		conf, err := auth.ClientConfig(o.tls, name)
		if err != nil {
			return nil, err
		}
		c.TLS = conf
	}
	return c.DialOptions(), nil
}

// sample reads pid's VmRSS every 100 ms until ctx ends and returns the
// largest, in KiB.
func sample(ctx context.Context, pid int) int64 {
	if pid == 0 {
		return 0
	}
	var peak int64
	for {
		if v := rss(pid); v > peak {
			peak = v
		}
		select {
		case <-ctx.Done():
			return peak
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func rss(pid int) int64 { return statusKiB(pid, "VmRSS:") }

// statusKiB reads one field of /proc/PID/status, in KiB.
func statusKiB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field {
			var kb int64
			fmt.Sscan(f[1], &kb)
			return kb
		}
	}
	return 0
}

// hwm is pid's VmHWM (peak resident memory), in KiB.
func hwm(pid int) int64 {
	return statusKiB(pid, "VmHWM:")
}
