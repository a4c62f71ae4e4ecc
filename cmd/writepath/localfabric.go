package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/diskprofile"
	"github.com/writepath/writepath/local"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/worker"
	"github.com/writepath/writepath/workload"
)

// filePlanner is a workload that names the files its jobs will use before
// it runs, as the worker will resolve them (fio: FilePlan, from its job
// files, directory= and filename=).
type filePlanner interface {
	Files(env workload.Env) []string
}

// telemetryDirs are the directories whose disks an embedded run samples:
// the data directory, and the directories of the files a filePlanner's
// jobs use. The kind computes the files; the command only takes their
// directories.
func telemetryDirs(dataDir string, spec *anypb.Any) []string {
	dirs := []string{dataDir}
	m, ok := workload.Lookup(spec.GetTypeUrl())
	if !ok {
		return dirs
	}
	w, err := m.New(spec.GetValue())
	if err != nil {
		return dirs // buildSpec decoded it already
	}
	fp, ok := w.(filePlanner)
	if !ok {
		return dirs
	}
	seen := map[string]bool{filepath.Clean(dataDir): true}
	for _, f := range fp.Files(workload.Env{DataDir: dataDir}) {
		if d := filepath.Dir(f); !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// connect returns a client of the coordinator named by --coordinator, or
// of an embedded fabric (coordinator + --local-workers workers over
// loopback gRPC, store at --db) started for this command, whose workers
// may change the host knobs the command names and are guarded to what spec
// names (embeddedGuard). close ends whichever it opened.
func (o *runOptions) connect(spec *writepathv1.RunSpec, _, hostKnobs []string, stderr io.Writer) (c *client.Client, close func(), err error) {
	if o.conn.coordinator != "" {
		c, err := o.conn.dial("--coordinator is required")
		if err != nil {
			return nil, nil, err
		}
		return c, func() { c.Close() }, nil
	}
	allow, err := embeddedAllow(hostKnobs, nil)
	if err != nil {
		return nil, nil, err
	}
	g, err := embeddedGuard(o.dataDir, o.allow, []*anypb.Any{spec.GetSpec()})
	if err != nil {
		return nil, nil, err
	}
	dirs := telemetryDirs(o.dataDir, spec.GetSpec())
	tr, err := o.trace.tracer(traceDevices(dirs, o.devices), stderr)
	if err != nil {
		return nil, nil, err
	}
	knobs, d, err := openHostChanges(o.dataDir, allow, embeddedDiskAllow(spec.GetDisk() != nil), "--host/--disk", knobsLog(stderr))
	if err != nil {
		return nil, nil, err
	}
	stop := func() { closeDisks(d, stderr); closeKnobs(knobs) }
	f, err := local.Start(local.Config{Workers: o.localWorkers, DBPath: o.db,
		Coordinator: coordinator.Config{KeepWorkerIntervals: coordinator.DefaultKeepWorkerIntervals},
		Worker: worker.Config{DataDir: o.dataDir, Guard: g, Version: version, Progress: o.progressTo(stderr), Knobs: knobs,
			Telemetry: workerTelemetry(dirs, o.devices, stderr), Tracer: tr, Disks: d.workerDisks()}})
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("embedded fabric: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.WaitWorkers(ctx, o.localWorkers); err != nil {
		f.Close()
		stop()
		return nil, nil, fmt.Errorf("embedded fabric: %w", err)
	}
	return client.New(f.Control()), func() { f.Close(); stop() }, nil
}

// embeddedDiskAllow is an embedded fabric's opt-in: the user who names a
// profile on the command line is the operator, so loop filesystems and
// any device but the root filesystem's are allowed.
func embeddedDiskAllow(wanted bool) diskprofile.Allow {
	if wanted {
		return diskprofile.AllowAll()
	}
	return diskprofile.Allow{}
}

// progressTo is where embedded workers report progress: o.progress if set.
func (o *runOptions) progressTo(stderr io.Writer) io.Writer {
	if o.progress != nil {
		return o.progress
	}
	return stderr
}
