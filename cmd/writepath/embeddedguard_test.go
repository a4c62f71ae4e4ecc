package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/workload"
)

// TestEmbeddedWorkersGuarded (issue 13, point 2): the embedded fabric's
// workers had no guard, so whatever reached them ran with the user's
// rights. Now they allow what the command named and nothing else: the
// command's own fio job runs; a job on another directory, a server binary
// the command did not name and a privileged action it did not ask for are
// refused by the same workers.
func TestEmbeddedWorkersGuarded(t *testing.T) {
	root := t.TempDir()
	data, elsewhere := filepath.Join(root, "data"), filepath.Join(root, "elsewhere")
	os.Mkdir(data, 0o755)
	os.Mkdir(elsewhere, 0o755)
	o := &runOptions{localWorkers: 1, db: filepath.Join(root, "wp.db"), dataDir: data, interval: 200 * time.Millisecond}
	fio, _ := workload.ByName("fio")
	own := []string{"--name=own", "--rw=write", "--bs=4k", "--size=64k", "--ioengine=psync"}
	spec, err := o.buildSpec(fio, nil, own)
	if err != nil {
		t.Fatal(err)
	}
	c, closeFabric, err := o.connect(spec, own, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFabric()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if rec, err := c.Run(ctx, spec, nil); err != nil || rec.GetState() != writepathv1.RunState_RUN_STATE_FINISHED {
		t.Fatalf("the command's own job: %v (%s), %v", rec.GetState(), rec.GetReason(), err)
	}
	crash, _ := workload.ByName("crash")
	oltp, _ := workload.ByName("oltp")
	for _, tt := range []struct {
		meta workload.Meta
		args []string
		want string
	}{
		{fio, append(own, "--directory="+elsewhere), "outside the worker's allowed paths"},
		{fio, append(own, "--filename=/etc/writepath-test"), "outside the worker's allowed paths"},
		{oltp, []string{"--mysqld-dir=db", "--mysqld-binary=/bin/sh"}, "--allow-binary"},
		{crash, []string{"--dir=db", "--drop-caches"}, "--allow-privileged drop-caches"},
	} {
		other, err := o.buildSpec(tt.meta, nil, tt.args)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := c.Run(ctx, other, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v on the embedded fabric: %v, %v; want refused naming %q", tt.meta.Name, tt.args, rec.GetState(), err, tt.want)
		}
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("a refused job wrote %v", entries)
	}
}
