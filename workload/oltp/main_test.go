package oltp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/writepath/writepath/internal/testenv"
	"github.com/writepath/writepath/mysqld"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload"
)

// The managed MariaDB/MySQL every test of this package shares (one
// instance: initialising a datadir costs seconds). It starts on first use,
// so pure unit tests and fuzz workers never start one. Tests run one at a
// time; the ones that kill or lock the server restore it before returning.
var shared struct {
	once sync.Once
	dir  string
	inst *mysqld.Instance
	err  error
}

// testServer returns the shared server, starting it on first use.
func testServer(t testing.TB) *mysqld.Instance {
	t.Helper()
	testenv.MySQLServer(t)
	shared.once.Do(func() {
		ctx := context.Background()
		if shared.dir, shared.err = os.MkdirTemp("", "wp-"); shared.err != nil {
			return
		}
		os.Chmod(shared.dir, 0o711) // the server's account must enter it
		shared.inst, shared.err = mysqld.New(ctx, mysqld.Options{Dir: shared.dir, StartTimeout: 60 * time.Second, Settings: []mysqld.Setting{
			{Key: "innodb_buffer_pool_size", Value: "128M"},
			// Tests measure behaviour, not durability: skip the fsync per commit.
			{Key: "innodb_flush_log_at_trx_commit", Value: "2"},
			{Key: "innodb_lock_wait_timeout", Value: "10"},
		}})
		if shared.err == nil {
			if shared.err = shared.inst.Init(ctx); shared.err == nil {
				shared.err = shared.inst.Start(ctx)
			}
		}
	})
	if shared.err != nil {
		// Every test that needs the server fails the same way.
		t.Fatalf("managed test server: %v", shared.err)
	}
	return shared.inst
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.inst != nil {
		_ = shared.inst.Close()
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// testSpec is a small spec on the test server's socket as root.
func testSpec(t testing.TB, db string, tables, size uint32) *oltpv1.Spec {
	t.Helper()
	user := "root"
	pw, err := testServer(t).Password()
	if err != nil {
		t.Fatal(err)
	}
	return &oltpv1.Spec{Tables: &tables, TableSize: &size, RandSeed: 42,
		Connection: &oltpv1.Connection{Socket: testServer(t).Socket(), User: &user, Db: &db, Password: pw}}
}

func u32p(v uint32) *uint32 { return &v }

func mustOptions(t *testing.T, s *oltpv1.Spec) Options {
	t.Helper()
	o, err := Resolve(s)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// prepared resolves spec and runs prepare on a fresh database, dropping it
// when the test ends.
func prepared(t *testing.T, s *oltpv1.Spec) Options {
	t.Helper()
	o := mustOptions(t, s)
	admin := adminConn(t, "")
	if _, err := admin.exec("DROP DATABASE IF EXISTS " + quoteIdent(o.Conn.DB)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := dial(context.Background(), o.Conn, false); err == nil {
			_, _ = c.exec("DROP DATABASE IF EXISTS " + quoteIdent(o.Conn.DB))
			c.close()
		}
	})
	if err := Prepare(context.Background(), o, workload.Env{}); err != nil {
		t.Fatal(err)
	}
	return o
}

// adminConn is a root connection to db ("" for none), closed at cleanup.
func adminConn(t *testing.T, db string) *conn {
	t.Helper()
	pw, _ := testServer(t).Password()
	c, err := dial(context.Background(), ConnOptions{Socket: testServer(t).Socket(), User: "root", Password: pw, DB: db}, db != "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	return c
}

// queryInt runs a single-value query.
func queryInt(t *testing.T, c *conn, q string) int64 {
	t.Helper()
	v, err := c.queryStrings(q)
	if err != nil || len(v) != 1 {
		t.Fatalf("%s = %v, %v", q, v, err)
	}
	var n int64
	fmt.Sscan(v[0], &n)
	return n
}

// runFor runs the run phase with a fresh recorder.
func runFor(t *testing.T, ctx context.Context, o Options) (*Summary, *workload.Recorder, error) {
	t.Helper()
	rec := workload.NewRecorder(time.Now())
	sum, err := Run(ctx, o, workload.Env{}, rec)
	return sum, rec, err
}

func envQuiet() workload.Env { return workload.Env{} }

// reachableTempDir is t.TempDir made enterable by the managed server's
// account (the testing package makes it and its parent 0700).
func reachableTempDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{d, filepath.Dir(d)} {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return d
}
