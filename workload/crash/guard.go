package crash

import (
	"fmt"
	"os"

	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/oltp"
)

var _ workload.Checker = (*Workload)(nil)

// Check implements workload.Checker: the managed server's binary,
// directory and snapshot must pass the worker's guard. Without a directory
// the harness uses a temporary one, which must pass too.
func (w *Workload) Check(env workload.Env) error { return resolvePaths(w, env) }

func resolvePaths(w *Workload, env workload.Env) error {
	srv := w.spec.GetServer()
	if srv == nil {
		srv = &oltpv1.Server{} // the crash kind always manages a server
	}
	if err := oltp.CheckServer(srv, env); err != nil {
		return err
	}
	if w.spec.GetServer().GetDir() == "" && env.Guard != nil {
		if _, err := env.Path(os.TempDir()); err != nil {
			return fmt.Errorf("managed server without --mysqld-dir uses a temporary directory: %w", err)
		}
	}
	return nil
}
