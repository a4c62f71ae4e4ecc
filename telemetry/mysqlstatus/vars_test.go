package mysqlstatus

import "testing"

func TestRedoCapacity(t *testing.T) {
	tests := []struct {
		name   string
		vars   map[string]string
		want   int64
		source string
	}{
		{"mysql 8.0.30+", map[string]string{"innodb_redo_log_capacity": "104857600", "innodb_log_file_size": "50331648", "innodb_log_files_in_group": "2"},
			100 << 20, "innodb_redo_log_capacity"},
		{"mysql 5.7/8.0 before .30", map[string]string{"innodb_log_file_size": "50331648", "innodb_log_files_in_group": "2"},
			96 << 20, "innodb_log_file_size*innodb_log_files_in_group"},
		{"mariadb 10.11 (one file)", map[string]string{"innodb_log_file_size": "100663296"}, 96 << 20, "innodb_log_file_size"},
		{"my.cnf with suffix", map[string]string{"innodb-log-file-size": "2G"}, 2 << 30, "innodb_log_file_size"},
	}
	for _, tt := range tests {
		got, src, ok := NewVariables(tt.vars).RedoCapacity()
		if !ok || got != tt.want || src != tt.source {
			t.Errorf("%s: RedoCapacity() = %d, %q, %v; want %d, %q", tt.name, got, src, ok, tt.want, tt.source)
		}
	}
	if _, _, ok := NewVariables(nil).RedoCapacity(); ok {
		t.Error("RedoCapacity() of nothing reports ok")
	}
}

func TestVariablesAccessors(t *testing.T) {
	v := NewVariables(map[string]string{"Innodb_Doublewrite": "ON", "innodb_dedicated_server": "0", "innodb_io_capacity": "200",
		"version": "10.11.19-MariaDB-0+deb12u1", "innodb_flush_method": "O_DIRECT", "bad": "x1"})
	if b, ok := v.Bool("innodb_doublewrite"); !b || !ok {
		t.Errorf("Bool(innodb_doublewrite) = %v, %v", b, ok)
	}
	if b, ok := v.Bool("innodb_dedicated_server"); b || !ok {
		t.Errorf("Bool(innodb_dedicated_server) = %v, %v", b, ok)
	}
	if n, ok := v.Int("innodb_io_capacity"); n != 200 || !ok {
		t.Errorf("Int(innodb_io_capacity) = %v, %v", n, ok)
	}
	if _, ok := v.Int("bad"); ok {
		t.Error("Int(bad) ok")
	}
	if !v.MariaDB() || NewVariables(map[string]string{"version": "8.0.36"}).MariaDB() {
		t.Error("MariaDB() wrong")
	}
	if s, ok := v.Str("innodb_flush_method"); s != "O_DIRECT" || !ok {
		t.Errorf("Str() = %q, %v", s, ok)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512, "16k": 16 << 10, "128M": 128 << 20, "1G": 1 << 30, "2T": 2 << 40} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "M", "1.5G", "-"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded", bad)
		}
	}
}
