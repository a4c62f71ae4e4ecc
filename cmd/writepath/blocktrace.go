package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/writepath/writepath/telemetry/blocktrace"
	"github.com/writepath/writepath/telemetry/diskstats"
	"github.com/writepath/writepath/worker"
	"github.com/writepath/writepath/workload"
)

// traceFlags are the block and syscall tracing flags of `worker` and of an
// embedded `run`.
type traceFlags struct {
	off   bool
	pids  []int
	comms []string
	redo  []string
}

func (o *traceFlags) addFlagSet(f *pflag.FlagSet) {
	f.BoolVar(&o.off, "no-trace", false, "do not trace the block layer and syscalls with eBPF")
	f.IntSliceVar(&o.pids, "trace-pid", nil, "also trace these processes' write sizes and fsync/fdatasync latency (a managed server is traced on its own)")
	f.StringSliceVar(&o.comms, "trace-comm", nil, "also trace processes of these names (e.g. mysqld,mariadbd; at most 4)")
	f.StringSliceVar(&o.redo, "trace-redo", nil, "count block requests on these files' extents as redo I/O (a managed server's redo log is followed on its own)")
}

// tracer loads the programs for the devices of this worker. Where the
// kernel or the process cannot trace, one line on warn says why and the
// worker runs without it; a bad flag is an error.
func (o *traceFlags) tracer(devices []string, warn io.Writer) (worker.Tracer, error) {
	if o.off {
		return nil, nil
	}
	l, err := blocktrace.Load(blocktrace.Config{Devices: devices, PIDs: o.pids, Comms: o.comms, RedoFiles: o.redo})
	if errors.Is(err, blocktrace.ErrUnavailable) {
		fmt.Fprintf(warn, "%v; runs go on without block and syscall series\n", err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--trace-*: %w", err)
	}
	if !l.Syscalls() {
		fmt.Fprintf(warn, "%v; block series only\n", l.SysErr)
	}
	return &traceAdapter{l: l}, nil
}

// traceAdapter fits blocktrace to the worker's Tracer.
type traceAdapter struct{ l *blocktrace.Loaded }

func (a *traceAdapter) StartTrace() (worker.PhaseTrace, error) {
	t, err := a.l.Start()
	if err != nil {
		return nil, err
	}
	return &phaseTraceAdapter{t: t}, nil
}

type phaseTraceAdapter struct {
	t        *blocktrace.Tracer
	counters map[string]int64
}

func (a *phaseTraceAdapter) Follow(t workload.TraceTargets) error {
	return a.t.Follow(t.PIDs, t.RedoFiles)
}

// TraceTick returns the series and, when the tracer lost or dropped
// values, the counters trace.lost and trace.dropped.
func (a *phaseTraceAdapter) TraceTick() (map[string][]byte, map[string]int64, error) {
	s, err := a.t.Tick()
	clear(a.counters)
	if s.Lost > 0 || s.Dropped > 0 {
		if a.counters == nil {
			a.counters = map[string]int64{}
		}
		a.counters["trace.lost"], a.counters["trace.dropped"] = s.Lost, s.Dropped
	}
	return s.Encoded, a.counters, err
}

func (a *phaseTraceAdapter) Close() error { return a.t.Close() }

// traceDevices are the disks a worker traces: those its telemetry samples
// (behind its directories, and --devices). Problems were reported by the
// telemetry already.
func traceDevices(dirs, devices []string) []string {
	names, _ := resolveDevices(diskstats.DefaultResolver(), dirs, devices)
	return names
}

// traceSummary is the tracer's start-up line: what it traces.
func traceSummary(t worker.Tracer) string {
	a, ok := t.(*traceAdapter)
	if !ok {
		return "off"
	}
	disks := "every disk"
	if d := a.l.Disks(); len(d) > 0 {
		disks = strings.Join(d, ",")
	}
	return "block layer on " + disks
}
