package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// errPasswordStored refuses a --mysql-password that would end up in a
// coordinator's store (the run's spec, a campaign's file).
var errPasswordStored = errors.New("--mysql-password would be stored with the run in the coordinator's file and shown by `runs show --json`; " +
	"put the password in a file (mode 0600) on each worker, inside its allowed paths, and give --mysql-password-file PATH")

// isPasswordArg reports whether a is --mysql-password[=...] (either
// spelling of sysbench's dashes), and whether the value is in a itself.
func isPasswordArg(a string) (yes, inline bool) {
	name, _, inline := strings.Cut(strings.TrimPrefix(a, "--"), "=")
	return strings.HasPrefix(a, "--") && strings.ReplaceAll(name, "_", "-") == "mysql-password", inline
}

// sealPassword keeps a --mysql-password out of the spec: on the embedded
// fabric it goes into a private file (a 0700 directory, mode 0600, removed
// by cleanup) named by --mysql-password-file instead, which the embedded
// workers read in memory when the phase runs; towards a coordinator it is
// refused, since the spec would be stored there.
func sealPassword(args []string, embedded bool) (out []string, cleanup func(), err error) {
	cleanup = func() {}
	for i := 0; i < len(args); i++ {
		yes, inline := isPasswordArg(args[i])
		if !yes {
			out = append(out, args[i])
			continue
		}
		if !embedded {
			return nil, cleanup, errPasswordStored
		}
		_, pw, _ := strings.Cut(args[i], "=")
		if !inline && i+1 < len(args) {
			i++
			pw = args[i]
		}
		dir, err := os.MkdirTemp("", "wp-pw-")
		if err != nil {
			return nil, cleanup, fmt.Errorf("--mysql-password: %w", err)
		}
		prev := cleanup
		cleanup = func() { prev(); os.RemoveAll(dir) }
		file := filepath.Join(dir, "password")
		if err := os.WriteFile(file, []byte(pw+"\n"), 0o600); err != nil {
			cleanup()
			return nil, func() {}, fmt.Errorf("--mysql-password: %w", err)
		}
		out = append(out, "--mysql-password-file="+file)
	}
	return out, cleanup, nil
}

// refuseStoredPassword refuses a campaign that names --mysql-password:
// its file is stored verbatim with the campaign.
func refuseStoredPassword(args []string) error {
	for _, a := range args {
		if yes, _ := isPasswordArg(a); yes {
			return fmt.Errorf("campaign: %w", errPasswordStored)
		}
	}
	return nil
}
