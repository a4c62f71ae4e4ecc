package advise

import (
	"context"
	"database/sql"
	"os"
	"reflect"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/writepath/writepath/internal/testenv"
	"github.com/writepath/writepath/mysqld"
)

func TestReadOptionFile(t *testing.T) {
	got, err := ReadOptionFile("testdata/mysqld/my.cnf")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"port": "3399", "innodb_buffer_pool_size": "128M", "innodb_log_file_size": "96M", "innodb_flush_method": "O_DIRECT",
		"innodb_flush_neighbors": "0", "innodb_doublewrite": "ON", "innodb_io_capacity": "200", "log_bin": "OFF",
		"innodb_log_write_ahead_size": "512",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadOptionFile() =\n %v; want\n %v", got, want)
	}
	if _, err := ReadOptionFile("testdata/nope.cnf"); err == nil {
		t.Error("ReadOptionFile(missing) succeeded")
	}
}

// TestGatherOptionFileThisMachine gathers from an option file with a
// datadir on this machine's disk and checks the device facts and the
// findings they lead to.
func TestGatherOptionFileThisMachine(t *testing.T) {
	dataDir := t.TempDir()
	f, err := Gather(context.Background(), Options{OptionFile: "testdata/mysqld/my.cnf", DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Data.Known() || f.Data.Info.PhysicalBlockSize == 0 || f.Redo.Device != f.Data.Device || f.Doublewrite.Device != f.Data.Device {
		t.Fatalf("Gather() = %+v; want data, redo and doublewrite on one probed disk", f)
	}
	if len(f.SharedWith) == 0 {
		t.Errorf("SharedWith = %v; the temp dir is on the root filesystem's disk", f.SharedWith)
	}
	rules := map[string]bool{}
	for _, x := range Check(f) {
		rules[x.Rule] = true
	}
	if !rules["doublewrite-same-device"] || !rules["io-capacity"] {
		t.Errorf("Check() rules = %v; want doublewrite-same-device and io-capacity (not measured)", rules)
	}
	if f.Data.Info.PhysicalBlockSize > 512 && !rules["log-write-ahead-size"] {
		t.Errorf("Check() rules = %v; want log-write-ahead-size (512 < %d)", rules, f.Data.Info.PhysicalBlockSize)
	}
}

func TestGatherNeedsASource(t *testing.T) {
	if _, err := Gather(context.Background(), Options{}); err == nil {
		t.Error("Gather(no source) succeeded")
	}
	f, err := Gather(context.Background(), Options{OptionFile: "testdata/mysqld/conf.d/50-override.cnf"})
	if err != nil || len(f.Notes) < 2 {
		t.Errorf("Gather(no datadir) = %+v, %v; want notes about the skipped device checks", f, err)
	}
}

// TestGatherLiveServer gathers from a managed MariaDB that the test starts
// and writes to, so the redo rate it reads is real and not zero.
func TestGatherLiveServer(t *testing.T) {
	testenv.MySQLServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "wp-adv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// MkdirTemp makes it 0700; the server runs as mysql and must enter it.
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	in, err := mysqld.New(ctx, mysqld.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := in.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pw, err := in.Password()
	if err != nil {
		t.Fatal(err)
	}
	dsn := "root@unix(" + in.Socket() + ")/"
	db, err := sql.Open("mysql", "root:"+pw+"@unix("+in.Socket()+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE DATABASE wp", "CREATE TABLE wp.t (id INT PRIMARY KEY AUTO_INCREMENT, c CHAR(200))",
		"INSERT INTO wp.t (c) VALUES (REPEAT('x', 200)), (REPEAT('y', 200))",
		"INSERT INTO wp.t (c) SELECT c FROM wp.t", "INSERT INTO wp.t (c) SELECT c FROM wp.t"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	f, err := Gather(ctx, Options{DB: db, Source: "server " + dsn})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := f.Vars.RedoCapacity(); !ok || f.DataDir == "" || f.RedoBytesPerSec <= 0 {
		t.Errorf("Gather(live) = %+v; want variables, a datadir and a redo rate", f)
	}
	r := NewReport(f)
	t.Logf("live report: %d findings, devices %+v, notes %v", len(r.Findings), r.Devices, r.Notes)
}
