package fabrictest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/guard"
	"github.com/writepath/writepath/internal/fabrictest"
	"github.com/writepath/writepath/internal/testenv"
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
	return guardedFabricWith(t, guard.Config{AllowPaths: allow, AllowBinaries: []string{"/bin/true"}})
}

// guardedFabricWith is guardedFabric with a given policy (its DataDir is
// set here).
func guardedFabricWith(t *testing.T, cfg guard.Config) (f interface {
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
	cfg.DataDir = data
	g, err := guard.New(cfg)
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

// TestGuardedPathIsThePathUsed (issue 13, point 4): paths the guard allows
// because the kernel resolves them inside the data dir, but which a
// lexical join puts outside it, are used exactly as the guard resolved
// them: fio's directory through /proc/PID/cwd/../../.. and through a
// symlink followed by "..", and an oltp managed server's directory the
// same way. Before the fix every one of them wrote beside the data dir.
func TestGuardedPathIsThePathUsed(t *testing.T) {
	bin := testenv.MySQLServer(t)
	f, data, outside := guardedFabricWith(t, guard.Config{AllowBinaries: []string{bin}})
	c := client.New(f.Control())
	for _, d := range []string{"a/b/c", "s1/s2"} {
		if err := os.MkdirAll(filepath.Join(data, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("s1/s2", filepath.Join(data, "lnk")); err != nil {
		t.Fatal(err)
	}
	// A process whose working directory is data/a/b/c: through /proc its
	// cwd, three levels up, is data itself.
	sleeper := exec.Command("sleep", "60")
	sleeper.Dir = filepath.Join(data, "a/b/c")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	viaProc := strings.TrimPrefix(outside, "/")        // lexically: /proc/P/cwd/../../.. is "/"
	os.MkdirAll(filepath.Join(data, viaProc), 0o755)   // where the kernel goes
	os.MkdirAll(filepath.Join(data, "outside"), 0o755) // lnk/../../outside, by the kernel
	fio := []string{"--name=g", "--rw=write", "--bs=4k", "--size=64k", "--ioengine=psync"}
	cases := []struct {
		name, dir, inside string
	}{
		{"/proc cwd", fmt.Sprintf("/proc/%d/cwd/../../../%s", sleeper.Process.Pid, viaProc), filepath.Join(data, viaProc)},
		{"symlink then ..", "lnk/../../outside", filepath.Join(data, "outside")},
	}
	for _, tt := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		rec, err := c.Run(ctx, kindSpec(t, "fio", append(fio, "--directory="+tt.dir)...), nil)
		cancel()
		if err != nil || rec.GetState() != writepathv1.RunState_RUN_STATE_FINISHED {
			t.Errorf("%s: run %v (%s), %v; want FINISHED", tt.name, rec.GetState(), rec.GetReason(), err)
		}
		if _, err := os.Stat(filepath.Join(tt.inside, "g.0.0")); err != nil {
			t.Errorf("%s: --directory=%s: no file where the guard resolved it (%s): %v", tt.name, tt.dir, tt.inside, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spec := kindSpec(t, "oltp", "--mysqld-dir=lnk/../../outside/db")
	spec.Phases = []string{"cleanup"} // opens the instance (creates its directory), starts nothing
	if rec, err := c.Run(ctx, spec, nil); err != nil || rec.GetState() != writepathv1.RunState_RUN_STATE_FINISHED {
		t.Errorf("oltp cleanup: %v (%s), %v; want FINISHED", rec.GetState(), rec.GetReason(), err)
	}
	if _, err := os.Stat(filepath.Join(data, "outside/db/instance.json")); err != nil {
		t.Errorf("--mysqld-dir=lnk/../../outside/db: no instance where the guard resolved it: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("jobs wrote beside the data dir, in %s: %v", outside, entries)
	}
}

// TestGuardChecksTheRecordedBinary (issue 13, point 5): a spec without a
// binary runs the one its directory's instance.json records; that binary
// is the one checked (and checked again where mysqld executes it), not
// the one mysqld would pick for a new instance.
func TestGuardChecksTheRecordedBinary(t *testing.T) {
	bin := testenv.MySQLServer(t)
	f, data, outside := guardedFabricWith(t, guard.Config{AllowBinaries: []string{bin}})
	c := client.New(f.Control())
	marker := filepath.Join(outside, "ran")
	evil := filepath.Join(outside, "evil")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(data, "db"), 0o755)
	if err := os.WriteFile(filepath.Join(data, "db/instance.json"), []byte(`{"binary": "`+evil+`", "port": 1, "socket": "/nonexistent"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := kindSpec(t, "oltp", "--mysqld-dir=db")
	spec.Phases = []string{"cleanup"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec, err := c.Run(ctx, spec, nil)
	if err == nil || !strings.Contains(err.Error(), "--allow-binary") {
		t.Errorf("run with instance.json naming %s: %v, %v; want refused naming --allow-binary", evil, rec.GetState(), err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the recorded binary %s was executed", evil)
	}
}

// TestGuardServerSettings (issue 13, point 3): server settings no longer
// bypass the guard. A path-valued setting outside the allowed paths, and
// settings that load code or run SQL, are refused at submit by a guarded
// worker, naming the flag that would allow them.
func TestGuardServerSettings(t *testing.T) {
	bin := testenv.MySQLServer(t)
	f, _, outside := guardedFabricWith(t, guard.Config{AllowBinaries: []string{bin}})
	c := client.New(f.Control())
	cases := []struct {
		kind string
		args []string
		want string
	}{
		{"oltp", []string{"--mysqld-dir=db", "--set", "log_error=" + outside + "/x.log"}, "--allow-path"},
		{"oltp", []string{"--mysqld-dir=db", "--set", "innodb_doublewrite_dir=" + outside}, "--allow-path"},
		{"oltp", []string{"--mysqld-dir=db", "--set", "plugin_load_add=ha_connect.so"}, "--allow-setting plugin_load_add"},
		{"oltp", []string{"--mysqld-dir=db", "--set", "init_connect=DROP DATABASE sbtest"}, "--allow-setting init_connect"},
		{"crash", []string{"--dir=db", "--set", "init_file=" + outside + "/init.sql"}, "--allow-setting init_file"},
		{"crash", []string{"--dir=db", "--set", "secure_file_priv="}, "--allow-setting secure_file_priv"},
	}
	for _, tt := range cases {
		spec := kindSpec(t, tt.kind, tt.args...)
		if tt.kind == "oltp" {
			spec.Phases = []string{"cleanup"}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		rec, err := c.Run(ctx, spec, nil)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v: %v, %v; want refused naming %q", tt.kind, tt.args, rec.GetState(), err, tt.want)
		}
	}
}

// TestGuardPrivilegedAndEndpoints (issue 13, point 10): a guarded worker
// refuses --drop-caches and --power-loss without --allow-privileged, a
// database server beyond loopback and its allowed paths without
// --allow-mysql, a spec carrying a MySQL password (it would be stored) and
// a password file outside its paths; and takes them once allowed.
func TestGuardPrivilegedAndEndpoints(t *testing.T) {
	bin := testenv.MySQLServer(t)
	f, data, outside := guardedFabricWith(t, guard.Config{AllowBinaries: []string{bin}})
	c := client.New(f.Control())
	refusals := []struct {
		kind string
		args []string
		want string
	}{
		{"crash", []string{"--dir=db", "--drop-caches"}, "--allow-privileged drop-caches"},
		{"crash", []string{"--dir=db", "--power-loss"}, "--allow-privileged power-loss"},
		{"oltp", []string{"--mysql-host=10.9.8.7"}, "--allow-mysql 10.9.8.7:3306"},
		{"oltp", []string{"--mysql-host=db.example", "--mysql-port=3307"}, "--allow-mysql db.example:3307"},
		{"oltp", []string{"--mysql-socket=/run/mysqld/mysqld.sock"}, "--allow-mysql"},
		{"oltp", []string{"--mysql-socket=" + outside + "/x.sock"}, "--allow-mysql"},
		{"oltp", []string{"--mysql-host=127.0.0.1", "--mysql-password=secret"}, "--mysql-password-file"},
		{"oltp", []string{"--mysql-password-file=" + outside + "/pw"}, "outside the worker's allowed paths"},
	}
	for _, tt := range refusals {
		spec := kindSpec(t, tt.kind, tt.args...)
		if tt.kind == "oltp" {
			spec.Phases = []string{"cleanup"}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		rec, err := c.Run(ctx, spec, nil)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v: %v, %v; want refused naming %q", tt.kind, tt.args, rec.GetState(), err, tt.want)
		}
	}
	// Allowed: the checks pass (nothing runs here).
	g, err := guard.New(guard.Config{DataDir: data, AllowBinaries: []string{bin}, AllowPrivileged: []string{"drop-caches", "power-loss"},
		AllowMySQL: []string{"10.9.8.7:3306", "/run/mysqld/mysqld.sock"}})
	if err != nil {
		t.Fatal(err)
	}
	env := workload.Env{DataDir: data, Guard: g}
	for _, tt := range []struct {
		kind string
		args []string
	}{
		{"crash", []string{"--dir=db", "--drop-caches", "--power-loss"}},
		{"oltp", []string{"--mysql-host=10.9.8.7"}},
		{"oltp", []string{"--mysql-socket=/run/mysqld/mysqld.sock"}},
		{"oltp", []string{"--mysql-host=127.0.0.1", "--mysql-port=3306"}},
		{"oltp", []string{"--mysql-socket=srv/run/mysqld.sock", "--mysql-password-file=pw"}},
	} {
		m, _ := workload.ByName(tt.kind)
		b, err := m.FromArgs(tt.args)
		if err != nil {
			t.Fatal(err)
		}
		wl, err := m.New(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := wl.(workload.Checker).Check(env); err != nil {
			t.Errorf("%s %v allowed: Check = %v", tt.kind, tt.args, err)
		}
	}
}
