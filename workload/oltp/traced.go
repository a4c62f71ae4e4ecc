package oltp

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/writepath/writepath/mysqld"
	"github.com/writepath/writepath/workload"
)

var _ workload.Traced = (*Workload)(nil)

// TraceTargets names the managed server's process (from its pid file in
// the spec's server directory, so a restart during the phase is followed)
// and its redo log files: MariaDB
// 10.5+'s ib_logfile0, MySQL 8.0.30+'s #innodb_redo/#ib_redo*, older
// ib_logfile0/1. A spec without a managed server names nothing. A server
// run with innodb_log_group_home_dir elsewhere has its redo files there.
func (w *Workload) TraceTargets(env workload.Env) workload.TraceTargets {
	d := w.Spec.GetServer().GetDir()
	if d == "" {
		return workload.TraceTargets{}
	}
	dir := underDir(env.DataDir, d)
	var t workload.TraceTargets
	if b, err := os.ReadFile(mysqld.PIDFileIn(dir)); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			t.PIDs = []int{pid}
		}
	}
	redoDir := filepath.Join(dir, "data")
	for _, s := range w.Spec.GetServer().GetSettings() {
		if strings.ReplaceAll(s.GetKey(), "-", "_") == "innodb_log_group_home_dir" && s.GetValue() != "" {
			if v := s.GetValue(); filepath.IsAbs(v) {
				redoDir = v
			} else {
				redoDir = filepath.Join(redoDir, v)
			}
		}
	}
	for _, pat := range []string{"ib_logfile[0-9]*", "#innodb_redo/#ib_redo[0-9]*"} {
		m, _ := filepath.Glob(filepath.Join(redoDir, pat))
		for _, f := range m {
			if !strings.HasSuffix(f, "_tmp") {
				t.RedoFiles = append(t.RedoFiles, f)
			}
		}
	}
	return t
}
