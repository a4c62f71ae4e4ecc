package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/writepath/writepath/workload"
)

// errSecretStored refuses a secret option (a kind's Meta.Secrets: oltp's
// --mysql-password) that would end up in a coordinator's store (the run's
// spec, a campaign's file).
var errSecretStored = errors.New("would be stored with the run in the coordinator's file and shown by `runs show --json`")

func secretStored(s workload.Secret) error {
	return fmt.Errorf("--%s %w; put the %s in a file (mode 0600) on each worker, inside its allowed paths, and give --%s PATH",
		s.Option, errSecretStored, s.What, s.File)
}

// secretArg returns the secret a is, as --NAME[=...] in either spelling
// of sysbench's dashes, and whether the value is in a itself.
func secretArg(secrets []workload.Secret, a string) (s workload.Secret, yes, inline bool) {
	if !strings.HasPrefix(a, "--") {
		return s, false, false
	}
	name, _, inline := strings.Cut(strings.TrimPrefix(a, "--"), "=")
	name = strings.ReplaceAll(name, "_", "-")
	for _, s := range secrets {
		if name == strings.ReplaceAll(s.Option, "_", "-") {
			return s, true, inline
		}
	}
	return s, false, false
}

// sealSecrets keeps a kind's secret options out of the spec: on the
// embedded fabric each value goes into a private file (a 0700 directory,
// mode 0600, removed by cleanup) named by the option's file twin instead,
// which the embedded workers read in memory when the phase runs; towards
// a coordinator it is refused, since the spec would be stored there.
func sealSecrets(secrets []workload.Secret, args []string, embedded bool) (out []string, cleanup func(), err error) {
	cleanup = func() {}
	for i := 0; i < len(args); i++ {
		s, yes, inline := secretArg(secrets, args[i])
		if !yes {
			out = append(out, args[i])
			continue
		}
		if !embedded {
			return nil, cleanup, secretStored(s)
		}
		_, v, _ := strings.Cut(args[i], "=")
		if !inline && i+1 < len(args) {
			i++
			v = args[i]
		}
		dir, err := os.MkdirTemp("", "wp-pw-")
		if err != nil {
			return nil, cleanup, fmt.Errorf("--%s: %w", s.Option, err)
		}
		prev := cleanup
		cleanup = func() { prev(); os.RemoveAll(dir) }
		file := filepath.Join(dir, s.What)
		if err := os.WriteFile(file, []byte(v+"\n"), 0o600); err != nil {
			cleanup()
			return nil, func() {}, fmt.Errorf("--%s: %w", s.Option, err)
		}
		out = append(out, "--"+s.File+"="+file)
	}
	return out, cleanup, nil
}

// refuseStoredSecrets refuses a campaign that names a secret option: its
// file is stored verbatim with the campaign.
func refuseStoredSecrets(secrets []workload.Secret, args []string) error {
	for _, a := range args {
		if s, yes, _ := secretArg(secrets, a); yes {
			return fmt.Errorf("campaign: %w", secretStored(s))
		}
	}
	return nil
}
