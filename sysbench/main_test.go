package sysbench

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/writepath/writepath/internal/testenv"
	"github.com/writepath/writepath/mysqld"
)

// The tests compare `writepath sysbench` with the real sysbench 1.0.20 on
// the same commands, against one managed MariaDB/MySQL in a temporary
// directory (started on first use): the peer works in database sb_peer,
// writepath in sb_wp.
var shared struct {
	once sync.Once
	dir  string
	inst *mysqld.Instance
	err  error
}

func testServer(t *testing.T) *mysqld.Instance {
	t.Helper()
	testenv.MySQLServer(t)
	shared.once.Do(func() {
		ctx := context.Background()
		if shared.dir, shared.err = os.MkdirTemp("", "wp-sb-"); shared.err != nil {
			return
		}
		os.Chmod(shared.dir, 0o711) // the server's account must enter it
		shared.inst, shared.err = mysqld.New(ctx, mysqld.Options{Dir: shared.dir, StartTimeout: 60 * time.Second, Settings: []mysqld.Setting{
			{Key: "innodb_buffer_pool_size", Value: "128M"},
			{Key: "innodb_flush_log_at_trx_commit", Value: "2"},
		}})
		if shared.err == nil {
			if shared.err = shared.inst.Init(ctx); shared.err == nil {
				shared.err = shared.inst.Start(ctx)
			}
		}
	})
	if shared.err != nil {
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

// admin runs statements as root on the test server.
func admin(t *testing.T, stmts ...string) {
	t.Helper()
	pw, _ := testServer(t).Password()
	db, err := sql.Open("mysql", "root:"+pw+"@unix("+testServer(t).Socket()+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// result is one command's end.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// needPeer skips where the peer is missing (make test installs it).
func needPeer(t *testing.T) {
	t.Helper()
	testenv.Sysbench(t)
}

// conn are the connection options for database db (empty: none).
func conn(t *testing.T, db string) []string {
	if db == "" {
		return nil
	}
	pw, _ := testServer(t).Password() // root's random password, as the instance keeps it
	return []string{"--mysql-socket=" + testServer(t).Socket(), "--mysql-user=root", "--mysql-password=" + pw, "--mysql-db=" + db}
}

// peer runs the real sysbench.
func peer(t *testing.T, db string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command("sysbench", append(args, conn(t, db)...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("sysbench %q: %v", args, err)
	}
	return result{code, out.String(), errb.String()}
}

// ours runs writepath's.
func ours(t *testing.T, db string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(t.Context(), append(args, conn(t, db)...), Config{Version: "test", Stdout: &out, Stderr: &errb})
	return result{code, out.String(), errb.String()}
}

var (
	number   = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	banner   = regexp.MustCompile(`^sysbench N\S* \(using .*\)$`)
	histRow  = regexp.MustCompile(`^ +N \|\** +N$`)
	interval = regexp.MustCompile(`^\[ Ns \] (thds: N tps: N qps: N \(r/w/o: N/N/N\) lat \(ms,N%\): N err/s: N reconn/s: N|queue length: N, concurrency: N)$`)
	lead     = regexp.MustCompile(` {2,}N`)
	trail    = regexp.MustCompile(`N {2,}`)
)

// shape is output with every number masked, the banner's build named
// away, and runs of histogram rows and of interval lines (their number
// depends on the timing) each shown once.
func shape(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		// Right-aligned numbers pad by their width: one space stands for all.
		line = trail.ReplaceAllString(lead.ReplaceAllString(number.ReplaceAllString(line, "N"), " N"), "N ")
		switch {
		case banner.MatchString(line):
			line = "sysbench N.N.N (BANNER)"
		case histRow.MatchString(line):
			line = "HISTOGRAM ROWS"
		case interval.MatchString(line):
			line = "INTERVAL LINES"
		}
		if len(out) > 0 && out[len(out)-1] == line && (line == "HISTOGRAM ROWS" || line == "INTERVAL LINES") {
			continue
		}
		out = append(out, line)
	}
	return out
}

// sameShape fails the test when two outputs differ in shape, showing the
// first difference.
func sameShape(t *testing.T, what string, want, got string) {
	t.Helper()
	w, g := shape(want), shape(got)
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			t.Errorf("%s: line %d differs in shape:\n sysbench:  %q\n writepath: %q\n--- sysbench\n%s--- writepath\n%s", what, i+1, wl, gl, want, got)
			return
		}
	}
}

// same runs args with both and compares exit status, stdout's shape and
// stderr's shape.
func same(t *testing.T, args ...string) (peerRes, ourRes result) {
	t.Helper()
	p, o := peer(t, "sb_peer", args...), ours(t, "sb_wp", args...)
	if p.code != o.code {
		t.Errorf("%q: exit %d; sysbench exits %d\n--- sysbench\n%v\n--- writepath\n%v", args, o.code, p.code, p, o)
	}
	sameShape(t, fmt.Sprintf("%q stdout", args), p.stdout, o.stdout)
	sameShape(t, fmt.Sprintf("%q stderr", args), p.stderr, o.stderr)
	return p, o
}

// sortedShape compares two outputs' shapes as sorted sets of lines.
func sameSortedShape(t *testing.T, what string, want, got string) {
	t.Helper()
	w, g := sortedShape(want), sortedShape(got)
	if strings.Join(w, "\n") != strings.Join(g, "\n") {
		t.Errorf("%s: the lines differ\n--- sysbench\n%s--- writepath\n%s", what, want, got)
	}
}

// sortedShape is shape as a sorted set of messages. sysbench's threads
// print with no lock between them, so two messages can share a line
// ("Creating table 'sbtest1'...Creating table 'sbtest2'...", "Prewarming
// table sbtestNPrewarming table sbtestN") and leave an empty one: lines are
// split after "..." and where a capital letter follows a word with no
// space, and blank lines dropped. Both sides are split alike, so a split
// inside a real word changes nothing.
var messageStart = regexp.MustCompile(`([a-zA-Z0-9.'])([A-Z][a-z])`)

func sortedShape(s string) []string {
	var out []string
	for _, line := range shape(s) {
		line = strings.ReplaceAll(line, "...", "...\n")
		line = messageStart.ReplaceAllString(line, "$1\n$2")
		for _, msg := range strings.Split(line, "\n") {
			if strings.TrimSpace(msg) != "" {
				out = append(out, msg)
			}
		}
	}
	sort.Strings(out)
	return out
}

// sameSorted is same for commands whose threads print in any order
// (parallel prepare and prewarm): the shapes are compared as sorted sets.
func sameSorted(t *testing.T, args ...string) {
	t.Helper()
	p, o := peer(t, "sb_peer", args...), ours(t, "sb_wp", args...)
	w, g := sortedShape(p.stdout), sortedShape(o.stdout)
	if p.code != o.code || strings.Join(w, "\n") != strings.Join(g, "\n") || p.stderr != o.stderr {
		t.Errorf("%q: the lines differ\n--- sysbench\n%v\n--- writepath\n%v", args, p, o)
	}
}
