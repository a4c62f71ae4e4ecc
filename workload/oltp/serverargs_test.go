package oltp

import "testing"

func TestCampaignServerSpellings(t *testing.T) {
	s, err := ParseArgs([]string{"--binary=/usr/sbin/mysqld", "--set", "innodb_flush_method=O_DIRECT", "--mysqld-set=sync_binlog=1", "--mysqld-dir=/d"})
	if err != nil {
		t.Fatal(err)
	}
	srv := s.GetServer()
	if srv.GetBinary() != "/usr/sbin/mysqld" || len(srv.GetSettings()) != 2 || srv.GetSettings()[0].GetKey() != "innodb_flush_method" {
		t.Errorf("ParseArgs(--binary, --set) server = %v; want binary and both settings in order", srv)
	}
}
