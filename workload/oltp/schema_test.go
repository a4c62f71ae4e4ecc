package oltp

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

func TestPrepareSchemaAndData(t *testing.T) {
	s := testSpec(t, "wp_schema", 2, 3000)
	s.Threads = u32p(3)
	o := prepared(t, s)
	c := adminConn(t, o.Conn.DB)
	for _, tbl := range []string{"sbtest1", "sbtest2"} {
		rows, err := c.queryStrings("SELECT CONCAT_WS(' ', COUNT(*), MIN(id), MAX(id), COUNT(DISTINCT id)) FROM " + tbl)
		if err != nil || len(rows) != 1 || rows[0] != "3000 1 3000 3000" {
			t.Errorf("%s count/min/max/distinct = %v, %v; want 3000 1 3000 3000", tbl, rows, err)
		}
		create, err := c.queryStrings("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA='wp_schema' AND TABLE_NAME='" + tbl + "' ORDER BY ORDINAL_POSITION")
		if err != nil || strings.Join(create, ",") != "id,k,c,pad" {
			t.Errorf("%s columns = %v, %v", tbl, create, err)
		}
	}
	idx, err := c.queryStrings("SELECT CONCAT(TABLE_NAME, '.', INDEX_NAME, '.', COLUMN_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA='wp_schema' ORDER BY 1")
	sort.Strings(idx)
	if want := "sbtest1.PRIMARY.id,sbtest1.k_1.k,sbtest2.PRIMARY.id,sbtest2.k_2.k"; err != nil || strings.Join(idx, ",") != want {
		t.Errorf("indexes = %v, %v; want %s", idx, err, want)
	}
	types, err := c.queryStrings("SELECT CONCAT(COLUMN_NAME, ' ', COLUMN_TYPE, ' ', IS_NULLABLE, ' ', IFNULL(COLUMN_DEFAULT, 'NULL'), ' ', EXTRA) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA='wp_schema' AND TABLE_NAME='sbtest1' ORDER BY ORDINAL_POSITION")
	t.Logf("sbtest1 columns: %q", types)
	if err != nil || !strings.Contains(types[0], "auto_increment") || !strings.HasPrefix(types[2], "c char(120) NO") || !strings.HasPrefix(types[3], "pad char(60) NO") {
		t.Errorf("column types = %q, %v", types, err)
	}
	cre := regexp.MustCompile(`^(\d{11}-){9}\d{11}$`)
	pad := regexp.MustCompile(`^(\d{11}-){4}\d{11}$`)
	vals, err := c.queryStrings("SELECT CONCAT(c, ' ', pad) FROM sbtest1 LIMIT 50")
	if err != nil || len(vals) != 50 {
		t.Fatalf("sample rows: %v, %v", len(vals), err)
	}
	for _, v := range vals {
		cv, pv, _ := strings.Cut(v, " ")
		if !cre.MatchString(cv) || !pad.MatchString(pv) {
			t.Errorf("row c=%q pad=%q does not follow sysbench's templates", cv, pv)
		}
	}
	if _, err := Resolve(s); err != nil {
		t.Fatal(err)
	}
}

func TestPrepareTwiceSaysCleanupFirst(t *testing.T) {
	o := prepared(t, testSpec(t, "wp_twice", 1, 10))
	err := Prepare(t.Context(), o, envQuiet())
	if err == nil || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), "cleanup") {
		t.Errorf("second Prepare = %v; want 'already exists ... run the cleanup phase first'", err)
	}
	if err := Cleanup(t.Context(), o, envQuiet()); err != nil {
		t.Fatal(err)
	}
	c := adminConn(t, o.Conn.DB)
	if n := queryInt(t, c, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='wp_twice'"); n != 0 {
		t.Errorf("%d tables left after Cleanup", n)
	}
}
