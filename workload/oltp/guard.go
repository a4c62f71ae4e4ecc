package oltp

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/writepath/writepath/mysqld"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload"
)

var _ workload.Checker = (*Workload)(nil)

// Check implements workload.Checker: a managed server named by the spec
// must pass the worker's guard.
func (w *Workload) Check(env workload.Env) error { return CheckServer(w.Spec.GetServer(), env) }

// CheckServer passes a managed server's binary, directory and snapshot
// through env's guard, before anything is started or copied. Without a
// binary in the spec the one mysqld would pick is checked. The crash kind
// calls it for its server too.
func CheckServer(s *oltpv1.Server, env workload.Env) error {
	if s == nil {
		return nil
	}
	var errs []error
	if err := checkBinary(s.GetBinary(), env); err != nil {
		errs = append(errs, err)
	}
	paths := []struct{ what, path string }{{"--mysqld-dir", s.GetDir()}, {"snapshot", s.GetSnapshot()}}
	if snap := s.GetSnapshot(); snap != "" && !filepath.IsAbs(snap) && s.GetDir() != "" {
		// The managed server also reads a relative snapshot beside its dir.
		paths = append(paths, struct{ what, path string }{"snapshot", filepath.Dir(s.GetDir()) + "/" + snap})
	}
	for _, p := range paths {
		if p.path == "" {
			continue
		}
		if _, err := env.Path(p.path); err != nil {
			errs = append(errs, fmt.Errorf("managed server %s: %w", p.what, err))
		}
	}
	return errors.Join(errs...)
}

func checkBinary(bin string, env workload.Env) error {
	if env.Guard == nil {
		return nil // a local run: the user starts what they choose
	}
	if bin == "" {
		found, err := mysqld.FindBinary()
		if err != nil {
			return fmt.Errorf("managed server: no binary in the spec and %w", err)
		}
		bin = found
	}
	if err := env.Binary(bin); err != nil {
		return fmt.Errorf("managed server: %w", err)
	}
	return nil
}
