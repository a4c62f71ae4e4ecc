package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// deployDir holds the units and manifests users copy.
const deployDir = "../../deploy"

// TestDeployFlagsExist reads every command line that deploy/ passes to
// writepath (systemd ExecStart, Kubernetes args, the README's examples)
// and checks each subcommand and flag against the real command tree, so
// that a renamed flag breaks this test instead of a fleet.
func TestDeployFlagsExist(t *testing.T) {
	lines := map[string][][]string{} // source -> command lines
	units, _ := filepath.Glob(filepath.Join(deployDir, "systemd", "*.service"))
	for _, u := range units {
		lines[u] = execStarts(t, u)
	}
	manifests, _ := filepath.Glob(filepath.Join(deployDir, "kubernetes", "*.yaml"))
	for _, m := range manifests {
		lines[m] = containerArgs(t, m)
	}
	lines["deploy/README.md"] = readmeCommands(t, filepath.Join(deployDir, "README.md"))
	n := 0
	for src, cmds := range lines {
		if len(cmds) == 0 {
			t.Errorf("%s: no writepath command line found", src)
		}
		for _, args := range cmds {
			n++
			if err := checkArgs(newRootCmd(), args); err != nil {
				t.Errorf("%s: writepath %s: %v", src, strings.Join(args, " "), err)
			}
		}
	}
	if len(units) < 2 || len(manifests) < 2 {
		t.Errorf("found %d units and %d manifests; want the coordinator's and the worker's of each", len(units), len(manifests))
	}
	t.Logf("checked %d command lines", n)
	for _, bad := range [][]string{{"worker", "--no-such-flag=1"}, {"coordinatr", "--listen", "x"}} {
		if err := checkArgs(newRootCmd(), bad); err == nil {
			t.Errorf("checkArgs(%v) = nil; want an unknown flag or command", bad)
		}
	}
}

// checkArgs finds the subcommand args name and looks up every --flag.
func checkArgs(root *cobra.Command, args []string) error {
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root {
		return errUnknown("command", strings.Join(args, " "))
	}
	for _, a := range rest {
		if !strings.HasPrefix(a, "--") || a == "--" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil && !kindFlag(cmd, name) {
			return errUnknown("flag of "+cmd.CommandPath(), "--"+name)
		}
	}
	return nil
}

// kindFlag: `run` passes unknown flags to the kind (fio, sysbench syntax);
// campaign specs carry theirs in the file.
func kindFlag(cmd *cobra.Command, _ string) bool { return cmd.Name() == "run" }

type unknownError struct{ what, name string }

func (e unknownError) Error() string { return "unknown " + e.what + " " + e.name }

func errUnknown(what, name string) error { return unknownError{what, name} }

// execStarts returns the arguments of each ExecStart, with continuation
// lines joined.
func execStarts(t *testing.T, path string) [][]string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	var out [][]string
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "ExecStart="); ok {
			out = append(out, writepathArgs(strings.Fields(v)))
		}
	}
	return out
}

// containerArgs returns each container's args list of a manifest: the
// "- " items under an "args:" key, until the indentation drops.
func containerArgs(t *testing.T, path string) [][]string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	var cur []string
	indent := -1
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		lead := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case trimmed == "args:":
			indent, cur = lead, nil
		case indent >= 0 && lead > indent && strings.HasPrefix(trimmed, "- "):
			cur = append(cur, strings.Trim(strings.TrimPrefix(trimmed, "- "), `"'`))
		case indent >= 0:
			out, indent = append(out, cur), -1
		}
	}
	if indent >= 0 {
		out = append(out, cur)
	}
	return out
}

var readmeCmd = regexp.MustCompile(`(?m)^\s*(?:sudo\s+)?(?:\S*/)?writepath\s+(.*)$`)

// readmeCommands returns the writepath command lines of the README's
// examples, continuation lines joined.
func readmeCommands(t *testing.T, path string) [][]string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	var out [][]string
	for _, m := range readmeCmd.FindAllStringSubmatch(text, -1) {
		out = append(out, strings.Fields(m[1]))
	}
	return out
}

// writepathArgs drops the binary from an ExecStart command line.
func writepathArgs(f []string) []string {
	for i, w := range f {
		if filepath.Base(w) == "writepath" {
			return f[i+1:]
		}
	}
	return f
}
