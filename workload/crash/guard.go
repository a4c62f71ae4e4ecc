package crash

import (
	"errors"
	"fmt"
	"os"

	crashv1 "github.com/writepath/writepath/proto/writepath/crash/v1"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/oltp"
)

var (
	_ workload.Checker = (*Workload)(nil)
	_ workload.Needer  = (*Workload)(nil)
)

// Privileged actions a crash spec may ask for (guard names).
const (
	privDropCaches = "drop-caches"
	privPowerLoss  = "power-loss"
)

// Check implements workload.Checker: the managed server's binary,
// directory and snapshot must pass the worker's guard, and the privileged
// actions the spec asks for must be allowed. Without a directory the
// harness uses a temporary one, which must pass too.
func (w *Workload) Check(env workload.Env) error {
	_, err := checkSpec(w.spec, env)
	return err
}

// Needs implements workload.Needer.
func (w *Workload) Needs(env workload.Env) workload.Needs {
	srv := w.spec.GetServer()
	if srv == nil {
		srv = &oltpv1.Server{}
	}
	n := oltp.ServerNeeds(srv, env)
	if srv.GetDir() == "" {
		n.Paths = append(n.Paths, os.TempDir())
	}
	n.Privileged = privileges(w.spec.GetDropCaches(), w.spec.GetPowerLoss())
	return n
}

func privileges(dropCaches, powerLoss bool) []string {
	var out []string
	if dropCaches {
		out = append(out, privDropCaches)
	}
	if powerLoss {
		out = append(out, privPowerLoss)
	}
	return out
}

// checkSpec checks everything the spec names on this host and returns the
// server as the guard resolved it.
func checkSpec(spec interface {
	GetServer() *oltpv1.Server
	GetDropCaches() bool
	GetPowerLoss() bool
}, env workload.Env) (oltp.CheckedServer, error) {
	srv := spec.GetServer()
	if srv == nil {
		srv = &oltpv1.Server{} // the crash kind always manages a server
	}
	checked, err := oltp.CheckServer(srv, env)
	errs := []error{err}
	if l, ok := spec.(interface{ GetLoad() *oltpv1.Spec }); ok {
		errs = append(errs, oltp.CheckNoPassword(l.GetLoad().GetConnection(), env))
	}
	if srv.GetDir() == "" && env.Guard != nil {
		if _, err := env.Path(os.TempDir()); err != nil {
			errs = append(errs, fmt.Errorf("managed server without --mysqld-dir uses a temporary directory: %w", err))
		}
	}
	if s, ok := spec.(*crashv1.Spec); ok {
		if cfg, err := resolve(s); err == nil {
			if o, err := oltp.Resolve(cfg.load); err == nil {
				if err := env.Memory(oltp.Memory(o)); err != nil {
					errs = append(errs, fmt.Errorf("crash load --threads=%d: %w", o.Threads, err))
				}
			}
		}
	}
	for _, p := range privileges(spec.GetDropCaches(), spec.GetPowerLoss()) {
		if err := env.Allow(workload.Privileged, p); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", p, err))
		}
	}
	return checked, errors.Join(errs...)
}
