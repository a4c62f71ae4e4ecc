package oltp

import (
	"errors"
	"fmt"

	"github.com/writepath/writepath/mysqld"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
)

// ServerOptions turns a spec's managed-server description into
// mysqld.Options, so that whoever manages the server for a run (the crash
// harness, a campaign cell) builds the same instance from the same spec.
// The oltp phases themselves only connect; they never start a server.
func ServerOptions(s *oltpv1.Server) (mysqld.Options, error) {
	if s == nil {
		return mysqld.Options{}, errors.New("spec has no managed server (--mysqld-dir)")
	}
	if s.GetDir() == "" {
		return mysqld.Options{}, errors.New("managed server: --mysqld-dir is required")
	}
	o := mysqld.Options{Binary: s.GetBinary(), Dir: s.GetDir()}
	var errs []error
	for _, st := range s.GetSettings() {
		// Checked as the spec carries it: a raw spec's key cannot smuggle
		// a "=" or a control character past a re-parse.
		set := mysqld.Setting{Key: st.GetKey(), Value: st.GetValue()}
		if err := set.Check(); err != nil {
			errs = append(errs, fmt.Errorf("--mysqld-set: %w", err))
			continue
		}
		o.Settings = append(o.Settings, set)
	}
	return o, errors.Join(errs...)
}
