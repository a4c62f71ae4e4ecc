package mysqld

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// openSQL connects to the instance's socket as root with password pw.
func openSQL(t *testing.T, socket, pw string) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.Timeout = "root", pw, "unix", socket, 5*time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestManagedServerIsPrivate (issue 13, point 1): a managed server is
// reachable only by whoever may read DIR/root.password: root has a random
// password on every account (root@HOSTNAME dropped), the socket sits in a
// 0700 directory of the server's own account, TCP is off, and started by
// root the server runs as the mysql account, not as root. Before, root had
// no password, the server listened on 127.0.0.1 and ran as root.
func TestManagedServerIsPrivate(t *testing.T) {
	in := newTestInstance(t)
	ctx := context.Background()
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pw, err := in.Password()
	if err != nil || len(pw) < 24 {
		t.Fatalf("Password() = %q, %v; want a random one", pw, err)
	}
	if st, err := os.Stat(in.PasswordFile()); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, %v; want mode 0600", in.PasswordFile(), st.Mode(), err)
	}
	if err := openSQL(t, in.Socket(), "").PingContext(ctx); err == nil {
		t.Error("root without a password was let in")
	}
	db := openSQL(t, in.Socket(), pw)
	var skip int
	if err := db.QueryRowContext(ctx, "SELECT @@skip_networking").Scan(&skip); err != nil || skip != 1 {
		t.Errorf("@@skip_networking = %d, %v; want 1 (no TCP)", skip, err)
	}
	rows, err := db.QueryContext(ctx, "SELECT host, authentication_string FROM mysql.user WHERE user = 'root'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var host, auth string
		rows.Scan(&host, &auth)
		if auth == "" {
			t.Errorf("root@%s has no password", host)
		}
		if h, _ := os.Hostname(); host == h {
			t.Errorf("root@%s (the host name) was not dropped", host)
		}
	}
	rows.Close()
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(in.Port())), time.Second); err == nil {
		c.Close()
		t.Errorf("the server answers on 127.0.0.1:%d; want no TCP", in.Port())
	}
	st, err := os.Stat(filepath.Dir(in.Socket()))
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("socket directory %s: %v, %v; want mode 0700", filepath.Dir(in.Socket()), st.Mode(), err)
	}
	if os.Geteuid() != 0 {
		return
	}
	mysqlUser, err := user.Lookup(DefaultServerUser)
	if err != nil {
		t.Fatalf("as root this test needs the %s account (mariadb-server creates it): %v", DefaultServerUser, err)
	}
	if uid := processUID(t, in.PID()); strconv.Itoa(uid) != mysqlUser.Uid {
		t.Errorf("server runs as uid %d; want %s (%s)", uid, DefaultServerUser, mysqlUser.Uid)
	}
	if sys := st.Sys().(*syscall.Stat_t); strconv.Itoa(int(sys.Uid)) != mysqlUser.Uid {
		t.Errorf("socket directory owned by uid %d; want %s", sys.Uid, DefaultServerUser)
	}
	// Another local user cannot even reach the socket.
	client, err := exec.LookPath("mariadb")
	if err != nil {
		client, err = exec.LookPath("mysql")
	}
	need(t, "the mariadb client", err)
	cmd := exec.Command(client, "-S", in.Socket(), "-uroot", "-e", "SELECT 1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "13") {
		t.Errorf("as nobody, %s -S %s: %v, %s; want refused with errno 13 (permission denied)", client, in.Socket(), err, out)
	}
}

// TestOpenAppliesPasswordToAnOldInstance: an instance made before the
// password existed (its instance.json says nothing of it) gets one at its
// next start, and Restore of a snapshot re-applies it.
func TestOpenAppliesPasswordToAnOldInstance(t *testing.T) {
	in := newTestInstance(t)
	ctx := context.Background()
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(in.Dir(), "snap")
	if err := in.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := in.Snapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	// Forget the password, as an old instance directory would.
	os.Remove(in.PasswordFile())
	if err := in.Restore(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pw, _ := in.Password()
	if err := openSQL(t, in.Socket(), pw).PingContext(ctx); err != nil {
		t.Errorf("after Restore and Start: root with the new password: %v", err)
	}
	if _, err := os.Stat(in.initFile()); !os.IsNotExist(err) {
		t.Errorf("the init file with the password is left at %s: %v", in.initFile(), err)
	}
	if b, _ := os.ReadFile(in.CnfPath()); strings.Contains(string(b), "init-file") {
		t.Errorf("my.cnf still names the init file:\n%s", b)
	}
}

// TestListenTurnsTCPOn: Options.Listen is the one way to TCP.
func TestListenTurnsTCPOn(t *testing.T) {
	dir := testDir(t)
	ctx := context.Background()
	in, err := New(ctx, Options{Dir: dir, Listen: "127.0.0.1", StartTimeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	if err := in.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pw, _ := in.Password()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", pw, "tcp", in.Addr()
	conn, _ := mysql.NewConnector(cfg)
	db := sql.OpenDB(conn)
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		t.Errorf("root@%s with the password over TCP: %v", in.Addr(), err)
	}
	cfg.Passwd = ""
	conn, _ = mysql.NewConnector(cfg)
	nopw := sql.OpenDB(conn)
	defer nopw.Close()
	if err := nopw.PingContext(ctx); err == nil {
		t.Errorf("root@%s without a password over TCP was let in", in.Addr())
	}
}

// processUID reads a process's real uid from /proc.
func processUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatalf("no Uid in /proc/%d/status", pid)
	return -1
}
