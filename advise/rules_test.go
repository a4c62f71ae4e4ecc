package advise

import (
	"strings"
	"testing"

	"github.com/writepath/writepath/telemetry/blockdev"
	"github.com/writepath/writepath/telemetry/mysqlstatus"
)

// healthy is a MySQL 8.0 server on local NVMe that no rule flags: each
// test case changes one thing.
func healthy() *Facts {
	nvme := blockdev.Info{Name: "nvme0n1", Disk: "nvme0n1", LogicalBlockSize: 512, PhysicalBlockSize: 4096,
		Scheduler: "none", Schedulers: []string{"none", "mq-deadline"}, NrRequests: 1023, WriteCache: "write back"}
	nvme1 := nvme
	nvme1.Name, nvme1.Disk = "nvme1n1", "nvme1n1"
	return &Facts{
		Source: "test",
		Vars: mysqlstatus.NewVariables(map[string]string{
			"version": "8.0.36", "innodb_log_write_ahead_size": "8192", "innodb_flush_neighbors": "0",
			"innodb_io_capacity": "2000", "innodb_io_capacity_max": "4000", "innodb_doublewrite": "ON",
			"innodb_doublewrite_dir": "/dblwr", "innodb_redo_log_capacity": "2147483648", "innodb_dedicated_server": "OFF",
			"innodb_flush_method": "O_DIRECT", "innodb_flush_log_at_trx_commit": "1", "sync_binlog": "1"}),
		DataDir:         "/var/lib/mysql",
		Data:            Disk{Dir: "/var/lib/mysql", Device: "nvme0n1", Info: nvme},
		Redo:            Disk{Dir: "/var/lib/mysql", Device: "nvme0n1", Info: nvme},
		Doublewrite:     Disk{Dir: "/dblwr", Device: "nvme1n1", Info: nvme1},
		RedoBytesPerSec: 100 << 10,
		CheckpointAge:   100 << 20, CheckpointAgeSource: "during the last run",
		WriteIOPS: 3000, WriteIOPSSource: "test",
	}
}

func TestRules(t *testing.T) {
	tests := []struct {
		rule     string
		change   func(f *Facts)
		severity Severity
		suggest  string // a substring of the suggestion
	}{
		{"log-write-ahead-size", func(f *Facts) { set(f, "innodb_log_write_ahead_size", "512") }, Warn, "innodb_log_write_ahead_size=4096"},
		{"flush-neighbors", func(f *Facts) { set(f, "innodb_flush_neighbors", "1") }, Warn, "innodb_flush_neighbors=0"},
		{"io-capacity", func(f *Facts) { set(f, "innodb_io_capacity", "20000") }, Warn, "innodb_io_capacity=2100"},
		{"io-capacity", func(f *Facts) { set(f, "innodb_io_capacity", "200") }, Info, "innodb_io_capacity=2100"},
		{"io-capacity", func(f *Facts) { f.WriteIOPS = 0 }, Info, "--measure"},
		{"doublewrite-same-device", func(f *Facts) { f.Doublewrite = f.Data }, Warn, "innodb_doublewrite_dir="},
		{"doublewrite-same-device", func(f *Facts) {
			f.Doublewrite = f.Data
			set(f, "version", "10.11.19-MariaDB")
		}, Warn, "innodb_data_home_dir="},
		{"redo-default", func(f *Facts) { set(f, "innodb_redo_log_capacity", "104857600") }, Warn, "innodb_redo_log_capacity=352M"},
		{"dedicated-server", func(f *Facts) {
			set(f, "innodb_dedicated_server", "ON")
			f.SharedWith = []string{"/"}
		}, Warn, "innodb_dedicated_server=OFF"},
		{"dedicated-server", func(f *Facts) {
			set(f, "innodb_dedicated_server", "ON")
			f.WriteIOPS = 5000
		}, Warn, "innodb_dedicated_server=OFF"},
		{"nvme-scheduler", func(f *Facts) { f.Data.Info.Scheduler = "mq-deadline" }, Warn, `KERNEL=="nvme0n1", ATTR{queue/scheduler}="none"`},
		{"checkpoint-age", func(f *Facts) { f.CheckpointAge = 1600 << 20 }, Warn, "innodb_redo_log_capacity=4G"},
		{"checkpoint-age", func(f *Facts) {
			// The real MariaDB 10.11 sample: 73,156,397 of 96 MiB.
			f.Vars = mysqlstatus.NewVariables(map[string]string{"version": "10.11.19-MariaDB", "innodb_log_file_size": "100663296"})
			f.CheckpointAge = 73156397
		}, Warn, "innodb_log_file_size=140M"},
	}
	rules := map[string]Rule{}
	for _, r := range Rules() {
		rules[r.ID] = r
	}
	for _, tt := range tests {
		r, ok := rules[tt.rule]
		if !ok {
			t.Fatalf("no rule %q", tt.rule)
		}
		if got := r.Check(healthy()); len(got) != 0 {
			t.Errorf("%s.Check(healthy) = %+v; want no finding", tt.rule, got)
		}
		f := healthy()
		tt.change(f)
		got := r.Check(f)
		if len(got) != 1 || got[0].Rule != tt.rule || got[0].Severity != tt.severity ||
			!strings.Contains(got[0].Suggest, tt.suggest) || len(got[0].Evidence) == 0 || got[0].Why == "" {
			t.Errorf("%s.Check(triggering fixture) = %+v; want one %s finding suggesting %q", tt.rule, got, tt.severity, tt.suggest)
		}
	}
	if got := Check(healthy()); len(got) != 0 {
		t.Errorf("Check(healthy) = %+v; want none", got)
	}
}

// TestRulesDoNotFireWithoutData checks that unknown facts (remote server,
// option file without the variable) never produce a warning.
func TestRulesDoNotFireWithoutData(t *testing.T) {
	f := &Facts{Vars: mysqlstatus.NewVariables(map[string]string{"innodb_flush_neighbors": "1", "innodb_log_write_ahead_size": "512",
		"innodb_doublewrite": "ON", "innodb_dedicated_server": "ON", "innodb_log_file_size": "50331648"})}
	for _, finding := range Check(f) {
		if finding.Severity == Warn {
			t.Errorf("Check(no devices, no rates) = %+v; want no warnings", finding)
		}
	}
	// Rotational disks keep neighbour flushing.
	h := healthy()
	set(h, "innodb_flush_neighbors", "1")
	h.Data.Info.Rotational = true
	if got := checkFlushNeighbors(h); len(got) != 0 {
		t.Errorf("checkFlushNeighbors(rotational) = %+v", got)
	}
	// A small redo on a quiet server is fine.
	h = healthy()
	set(h, "innodb_redo_log_capacity", "104857600")
	h.RedoBytesPerSec = 1 << 10
	if got := checkRedoDefault(h); len(got) != 0 {
		t.Errorf("checkRedoDefault(quiet) = %+v", got)
	}
}

func TestReportRenders(t *testing.T) {
	f := healthy()
	set(f, "innodb_flush_neighbors", "1")
	f.Notes = []string{"a note"}
	r := NewReport(f)
	var text, js strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[WARN] flush-neighbors", "innodb_flush_neighbors=0", "nvme0n1", "note: a note"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("WriteText() lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(js.String(), `"rule": "flush-neighbors"`) {
		t.Errorf("WriteJSON() = %s", js.String())
	}
}

func set(f *Facts, name, value string) {
	m := map[string]string{}
	for _, n := range f.Vars.Names() {
		m[n], _ = f.Vars.Str(n)
	}
	m[name] = value
	f.Vars = mysqlstatus.NewVariables(m)
}
