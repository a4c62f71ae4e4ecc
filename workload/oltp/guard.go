package oltp

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/writepath/writepath/beneath"
	"github.com/writepath/writepath/mysqld"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload"
)

var (
	_ workload.Checker = (*Workload)(nil)
	_ workload.Needer  = (*Workload)(nil)
)

// Check implements workload.Checker: a managed server named by the spec
// must pass the worker's guard.
func (w *Workload) Check(env workload.Env) error {
	_, err := CheckServer(w.Spec.GetServer(), env)
	errs := []error{err}
	if e := w.endpoint(env); e != "" && env.Guard != nil {
		if err := env.Allow(workload.Endpoint, e); err != nil {
			errs = append(errs, fmt.Errorf("oltp --mysql-host/--mysql-port/--mysql-socket: %w", err))
		}
	}
	if f := w.Spec.GetConnection().GetPasswordFile(); f != "" {
		if _, err := env.Path(f); err != nil {
			errs = append(errs, fmt.Errorf("oltp --mysql-password-file: %w", err))
		}
	}
	errs = append(errs, CheckNoPassword(w.Spec.GetConnection(), env))
	if err := env.Memory(Memory(w.Options)); err != nil {
		errs = append(errs, fmt.Errorf("oltp --threads=%d: %w", w.Options.Threads, err))
	}
	return errors.Join(errs...)
}

// ErrPasswordInSpec refuses a spec that carries a MySQL password: the
// coordinator stores every spec it runs, in plain text.
var ErrPasswordInSpec = errors.New("the spec carries a MySQL password, which the coordinator stores with the run; give --mysql-password-file (a 0600 file on the worker) instead")

// CheckNoPassword refuses, on a guarded worker, a connection whose
// password is in the spec (writepath's CLI never sends one; an older or
// hand-made client could).
func CheckNoPassword(c *oltpv1.Connection, env workload.Env) error {
	if env.Guard != nil && c.GetPassword() != "" {
		return fmt.Errorf("oltp --mysql-password: %w", ErrPasswordInSpec)
	}
	return nil
}

// Needs implements workload.Needer: the managed server's directory,
// snapshot and binary, the database server the spec connects to and its
// password file.
func (w *Workload) Needs(env workload.Env) workload.Needs {
	n := ServerNeeds(w.Spec.GetServer(), env)
	if e := w.endpoint(env); e != "" {
		n.Endpoints = append(n.Endpoints, e)
	}
	if f := w.Spec.GetConnection().GetPasswordFile(); f != "" {
		n.Paths = append(n.Paths, underDir(env.DataDir, f))
	}
	return n
}

// ServerNeeds is what a managed server asks of its host: its directory and
// snapshot (relative ones under the data dir) and the binary it would run.
func ServerNeeds(s *oltpv1.Server, env workload.Env) workload.Needs {
	var n workload.Needs
	if s == nil {
		return n
	}
	for _, p := range []string{s.GetDir(), s.GetSnapshot()} {
		if p != "" {
			n.Paths = append(n.Paths, underDir(env.DataDir, p))
		}
	}
	if bin := serverBinary(s, env); bin != "" {
		n.Binaries = append(n.Binaries, bin)
	}
	return n
}

// CheckedServer is a managed server as the worker's guard resolved it:
// the directory, snapshot and binary to use, exactly.
type CheckedServer struct {
	// Dir is the instance directory.
	Dir beneath.Path
	// Snapshot is the datadir copy, when the spec names one.
	Snapshot beneath.Path
	// HasSnapshot says whether the spec names a snapshot.
	HasSnapshot bool
	// Binary is the server executable (resolved under a guard).
	Binary string
	// Exec checks the binary again where mysqld executes it (nil without
	// a guard).
	Exec func(string) (string, error)
	// Settings are the spec's server settings as the server must get
	// them: path-valued ones resolved (CheckSettings).
	Settings []mysqld.Setting
}

// CheckServer passes a managed server's binary, directory and snapshot
// through env's guard, before anything is started or copied, and returns
// them resolved. Without a binary in the spec the one the instance would
// run is checked: the one its instance.json records, else the one mysqld
// would pick. The crash kind calls it for its server too.
func CheckServer(s *oltpv1.Server, env workload.Env) (CheckedServer, error) {
	var c CheckedServer
	if s == nil {
		return c, nil
	}
	var errs []error
	if s.GetDir() != "" {
		d, err := env.Path(s.GetDir())
		if err != nil {
			errs = append(errs, fmt.Errorf("managed server --mysqld-dir: %w", err))
		}
		c.Dir = d
	}
	if s.GetSnapshot() != "" {
		snap, err := env.Path(s.GetSnapshot())
		if err != nil {
			errs = append(errs, fmt.Errorf("managed server snapshot: %w", err))
		}
		c.Snapshot, c.HasSnapshot = snap, true
	}
	errs = append(errs, c.checkSettings(s, env))
	if l := s.GetListen(); l != "" && env.Guard != nil {
		// TCP on loopback is the root password's to guard; any other
		// address opens the server to the network.
		if ip := net.ParseIP(l); l != "localhost" && (ip == nil || !ip.IsLoopback()) {
			if err := env.Allow(workload.Setting, "bind_address"); err != nil {
				errs = append(errs, fmt.Errorf("managed server --mysqld-listen %s: %w", l, err))
			}
		}
	}
	c.Binary = s.GetBinary()
	if env.Guard != nil {
		bin := serverBinary(s, env)
		r, err := env.Binary(bin)
		switch {
		case bin == "":
			errs = append(errs, fmt.Errorf("managed server: no binary in the spec and %w", errNoBinary))
		case err != nil:
			errs = append(errs, fmt.Errorf("managed server: %w", err))
		}
		c.Binary, c.Exec = r, env.Binary
	}
	return c, errors.Join(errs...)
}

// checkSettings guards the settings against the instance's datadir (a
// temporary directory's when the spec names no dir: the crash harness
// checks them again once it made it).
func (c *CheckedServer) checkSettings(s *oltpv1.Server, env workload.Env) error {
	var settings []mysqld.Setting
	var errs []error
	for _, st := range s.GetSettings() {
		set := mysqld.Setting{Key: st.GetKey(), Value: st.GetValue()}
		if err := set.Check(); err != nil {
			errs = append(errs, fmt.Errorf("managed server: %w", err))
			continue
		}
		settings = append(settings, set)
	}
	datadir := os.TempDir()
	if s.GetDir() != "" {
		datadir = c.Dir.String() + "/data"
	}
	checked, err := CheckSettings(settings, datadir, env)
	c.Settings = checked
	return errors.Join(append(errs, err)...)
}

var errNoBinary = errors.New("no mysqld or mariadbd found on PATH or in /usr/sbin")

// serverBinary is the binary a managed server runs: the spec's, else the
// one its directory's instance.json records, else the one mysqld picks.
func serverBinary(s *oltpv1.Server, env workload.Env) string {
	if b := s.GetBinary(); b != "" {
		return b
	}
	if s.GetDir() != "" {
		if d, err := env.Path(s.GetDir()); err == nil {
			if b := mysqld.RecordedBinary(d.String()); b != "" {
				return b
			}
		}
	}
	b, _ := mysqld.FindBinary()
	return b
}

// underDir is p, or p under dir when p is relative, uncleaned: a guard
// resolves any ".." after the symlinks before it, as the kernel would.
func underDir(dir, p string) string {
	if len(p) > 0 && p[0] == '/' || dir == "" {
		return p
	}
	return dir + "/" + p
}
