// Command tracetoggle attaches writepath's block (and optionally syscall)
// tracing for a few seconds, detaches it for as long, and so on, in ABBA
// blocks (on off off on), so that bench/blocktrace.sh can compare a
// running load's seconds with and without tracing inside one run: on a
// shared machine whose throughput drifts by half between runs, seconds
// side by side are the only fair comparison.
//
//	tracetoggle -devices vda [-comm writepath] [-seg 3s] [-for 90s]
//
// It prints "ready" once the programs are loaded, then per segment
// "UNIX_NS switch" before attaching or detaching and "UNIX_NS on" or
// "UNIX_NS off" once done (the switch itself, a phase start's cost, falls
// between segments), and at the end "UNIX_NS end". While attached it reads
// the counts every second, as a worker does, so their cost in user space
// is in the figures too.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/writepath/writepath/telemetry/blocktrace"
)

func main() {
	devices := flag.String("devices", "", "disks to trace, comma-separated (as /proc/diskstats names them)")
	comm := flag.String("comm", "", "also trace the syscalls of processes of this name")
	seg := flag.Duration("seg", 3*time.Second, "length of one segment")
	total := flag.Duration("for", 90*time.Second, "how long to alternate")
	flag.Parse()
	if err := run(*devices, *comm, *seg, *total); err != nil {
		fmt.Fprintln(os.Stderr, "tracetoggle:", err)
		os.Exit(1)
	}
}

func run(devices, comm string, seg, total time.Duration) error {
	if seg < time.Second || total < 4*seg {
		return fmt.Errorf("-seg %s -for %s: want a segment of at least 1s and at least 4 of them", seg, total)
	}
	cfg := blocktrace.Config{}
	if devices != "" {
		cfg.Devices = strings.Split(devices, ",")
	}
	if comm != "" {
		cfg.Comms = []string{comm}
	}
	l, err := blocktrace.Load(cfg)
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Println("ready")
	end := time.Now().Add(total)
	for i := 0; time.Now().Before(end); i++ {
		on := i%4 == 0 || i%4 == 3 // ABBA
		until := time.Now().Add(seg)
		fmt.Println(time.Now().UnixNano(), "switch")
		if !on {
			fmt.Println(time.Now().UnixNano(), "off")
			time.Sleep(time.Until(until))
			continue
		}
		tr, err := l.Start()
		if err != nil {
			return err
		}
		fmt.Println(time.Now().UnixNano(), "on")
		for time.Now().Before(until) {
			time.Sleep(min(time.Second, time.Until(until)))
			if _, err := tr.Tick(); err != nil {
				tr.Close()
				return err
			}
		}
		fmt.Println(time.Now().UnixNano(), "switch")
		tr.Close()
	}
	fmt.Println(time.Now().UnixNano(), "end")
	return nil
}
