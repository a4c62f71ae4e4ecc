package oltp

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/writepath/writepath/mysqld"
	"github.com/writepath/writepath/workload"
)

// CheckSettings guards a managed server's settings on a worker and returns
// them as the server must get them. A setting the operator allowed by name
// (--allow-setting) passes as given. Otherwise: one that names a path
// (log_error, innodb_doublewrite_dir, tmpdir...) must resolve inside the
// worker's allowed paths, a relative one under datadir (where the server
// takes it from), and is replaced by the resolved absolute path, so that
// the server opens what the guard checked; innodb_data_file_path's names
// must stay under innodb_data_home_dir; one that loads code, runs SQL or
// commands, reaches arbitrary files, weakens access or opens the network
// (plugin_load_add, init_file, secure_file_priv, user, bind_address...), or
// an abbreviation the server could read as one, is refused. Without a
// guard (a run the user started locally) everything passes unchanged.
func CheckSettings(in []mysqld.Setting, datadir string, env workload.Env) ([]mysqld.Setting, error) {
	if env.Guard == nil || len(in) == 0 {
		return in, nil
	}
	out := append([]mysqld.Setting(nil), in...)
	var errs []error
	// A datadir setting moves the base of every relative path.
	for i, s := range out {
		if c, direct := mysqld.Classify(s.Key); c == mysqld.PathValued && direct && mysqld.BaseName(s.Key) == "datadir" && s.Value != "" {
			p, err := checkSettingPath(s, datadir, env)
			if err != nil {
				return nil, err
			}
			out[i].Value, datadir = p, p
		}
	}
	for i, s := range out {
		v, err := checkSetting(s, datadir, env)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[i].Value = v
	}
	return out, errors.Join(errs...)
}

// checkSetting returns the value the server gets, or why it may not.
func checkSetting(s mysqld.Setting, datadir string, env workload.Env) (string, error) {
	class, direct := mysqld.Classify(s.Key)
	if class == mysqld.Plain || env.Allow(workload.Setting, mysqld.BaseName(s.Key)) == nil {
		return s.Value, nil
	}
	switch {
	case class == mysqld.Privileged:
		return "", fmt.Errorf("--set %s: %w", s, env.Allow(workload.Setting, mysqld.BaseName(s.Key)))
	case class == mysqld.Abbreviated:
		return "", fmt.Errorf("--set %s: give the full option name (the server reads an abbreviation as any option it starts, guarded ones included)", s.Key)
	case !direct || s.Value == "":
		return s.Value, nil // skip-log-bin, a bare log-bin: no path given
	case class == mysqld.PathValued:
		return checkSettingPath(s, datadir, env)
	case class == mysqld.PathList:
		sep := mysqld.ListSep(s.Key)
		var parts []string
		for _, d := range strings.Split(s.Value, sep) {
			p, err := checkSettingPath(mysqld.Setting{Key: s.Key, Value: d}, datadir, env)
			if err != nil {
				return "", err
			}
			parts = append(parts, p)
		}
		return strings.Join(parts, sep), nil
	}
	// DataFiles: "name:size[:autoextend[:max:size]];...", names relative
	// to innodb_data_home_dir, which is guarded itself.
	for _, f := range strings.Split(s.Value, ";") {
		name, _, _ := strings.Cut(f, ":")
		if !filepath.IsLocal(name) {
			return "", fmt.Errorf("--set %s: file %q must be a plain name under innodb_data_home_dir (an absolute or .. path escapes the guard; place the directory with innodb_data_home_dir)", s.Key, name)
		}
	}
	return s.Value, nil
}

// checkSettingPath resolves a path setting's value (relative: under
// datadir) through the guard and returns the resolved path.
func checkSettingPath(s mysqld.Setting, datadir string, env workload.Env) (string, error) {
	v := s.Value
	if v == "" {
		return v, nil
	}
	if !filepath.IsAbs(v) {
		v = datadir + "/" + v // not Join: the guard resolves ".." after symlinks
	}
	p, err := env.Path(v)
	if err != nil {
		return "", fmt.Errorf("--set %s: %w (allow the directory with --allow-path)", s, err)
	}
	return p.String(), nil
}
