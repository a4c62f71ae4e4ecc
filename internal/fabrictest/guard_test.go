package fabrictest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/guard"
	"github.com/writepath/writepath/internal/fabrictest"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/workload"
	_ "github.com/writepath/writepath/workload/crash"
	_ "github.com/writepath/writepath/workload/fio"
	_ "github.com/writepath/writepath/workload/oltp"
)

// guardedFabric starts one worker guarded to data (plus allow; binary
// /bin/true allowed), with a
// directory "outside" beside data and a symlink data/escape -> outside.
func guardedFabric(t *testing.T, allow ...string) (f interface {
	Control() writepathv1.ControlServiceClient
}, data, outside string) {
	root := t.TempDir()
	data, outside = filepath.Join(root, "data"), filepath.Join(root, "outside")
	for _, d := range []string{data, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(data, "escape")); err != nil {
		t.Fatal(err)
	}
	g, err := guard.New(data, allow, []string{"/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	return fabrictest.Start(t, fabrictest.Options{Workers: 1, DataDir: data, Guard: g}), data, outside
}

func kindSpec(t *testing.T, kind string, args ...string) *writepathv1.RunSpec {
	t.Helper()
	meta, ok := workload.ByName(kind)
	if !ok {
		t.Fatalf("kind %s not registered", kind)
	}
	b, err := meta.FromArgs(args)
	if err != nil {
		t.Fatalf("%s %v: %v", kind, args, err)
	}
	return &writepathv1.RunSpec{Spec: &anypb.Any{TypeUrl: meta.Kind, Value: b}, Interval: durationpb.New(100 * time.Millisecond)}
}

// TestGuardRefusesPathsOutsideDataDir submits jobs through the fabric to a
// guarded worker: a path that leaves the data dir through ".." or through
// a symlink, a size beyond the free space, and a managed server whose
// binary is not allowed are refused at submit with the reason, and no file
// appears anywhere; a job inside the data dir runs.
func TestGuardRefusesPathsOutsideDataDir(t *testing.T) {
	f, data, outside := guardedFabric(t)
	c := client.New(f.Control())
	fio := []string{"--name=g", "--rw=write", "--bs=4k", "--size=64k", "--ioengine=psync"}
	refusals := []struct {
		name string
		spec *writepathv1.RunSpec
		want string
	}{
		{"dotdot directory", kindSpec(t, "fio", append(fio, "--directory=../outside")...), "outside the worker's allowed paths"},
		{"dotdot filename", kindSpec(t, "fio", append(fio, "--filename=sub/../../outside/f")...), "outside the worker's allowed paths"},
		{"symlink directory", kindSpec(t, "fio", append(fio, "--directory=escape")...), "outside the worker's allowed paths"},
		{"absolute filename", kindSpec(t, "fio", append(fio, "--filename="+filepath.Join(outside, "f"))...), "outside the worker's allowed paths"},
		{"size beyond free space", kindSpec(t, "fio", "--name=g", "--rw=write", "--bs=4k", "--size=1000000g", "--ioengine=psync"), "not enough free space"},
		{"server binary not allowed", kindSpec(t, "crash", "--mysqld-dir=db", "--mysqld-binary=/bin/false"), "--allow-binary"},
		{"crash server dir via symlink", kindSpec(t, "crash", "--mysqld-dir=escape/db", "--mysqld-binary=/bin/true"), "outside the worker's allowed paths"},
		{"oltp server dir via dotdot", kindSpec(t, "oltp", "--mysqld-dir=../outside/db", "--mysqld-binary=/bin/true"), "outside the worker's allowed paths"},
		{"oltp snapshot via symlink", kindSpec(t, "oltp", "--mysqld-dir=db", "--mysqld-snapshot=escape/snap", "--mysqld-binary=/bin/true"), "outside the worker's allowed paths"},
	}
	for _, tt := range refusals {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		rec, err := c.Run(ctx, tt.spec, nil)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: run = %v, %v; want refused with %q", tt.name, rec.GetState(), err, tt.want)
		}
		t.Logf("%s: %v", tt.name, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("refused jobs left %d files outside the data dir", len(entries))
	}
	if err := os.Mkdir(filepath.Join(data, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec, err := c.Run(ctx, kindSpec(t, "fio", append(fio, "--directory=inside")...), nil)
	if err != nil || rec.GetState() != writepathv1.RunState_RUN_STATE_FINISHED {
		t.Fatalf("job inside the data dir: %v (%s), %v; want FINISHED", rec.GetState(), rec.GetReason(), err)
	}
	if _, err := os.Stat(filepath.Join(data, "inside", "g.0.0")); err != nil {
		t.Errorf("job inside the data dir wrote no file: %v", err)
	}
}
