package fio

import (
	"os/exec"
	"strings"
	"testing"
)

// TestUsageCoversFlags: every flag the command line takes has a --help
// row, and every row is a flag the command line takes.
func TestUsageCoversFlags(t *testing.T) {
	rows := map[string]bool{}
	for _, r := range append(append([]usageRow(nil), usageRows...), usageExtras...) {
		if _, ok := cliFlags[r.flag]; !ok {
			t.Errorf("--help row for --%s, which is no flag", r.flag)
		}
		rows[r.flag] = true
	}
	for f := range cliFlags {
		if !rows[f] {
			t.Errorf("--%s has no --help row", f)
		}
	}
}

// TestUsageMatchesFio: `writepath fio --help` up to its first blank line is
// the real fio 3.33's --help without the refused flags' lines, byte for
// byte but the version line (fio-3.33 and writepath's version).
func TestUsageMatchesFio(t *testing.T) {
	out, err := exec.Command(fioPath(t), "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	fioLines := strings.Split(string(out), "\n")
	var b strings.Builder
	if err := writeHelp(&b, "t"); err != nil {
		t.Fatal(err)
	}
	ours, _, _ := strings.Cut(b.String(), "\n\n")
	lines := strings.Split(ours, "\n")
	if !strings.HasPrefix(lines[0], fioLines[0]+" ") {
		t.Errorf("version line %q; fio's %q", lines[0], fioLines[0])
	}
	// fio's lines, less those of the refused flags.
	var want []string
	i := 2
	for _, r := range usageRows {
		var rb strings.Builder
		usageLine(&rb, r)
		n := strings.Count(rb.String(), "\n")
		if got := strings.Join(fioLines[i:i+n], "\n") + "\n"; got != rb.String() {
			t.Errorf("row --%s = %q; fio prints %q", r.flag, rb.String(), got)
		}
		if cliFlags[r.flag].refuse == "" {
			want = append(want, fioLines[i:i+n]...)
		}
		i += n
	}
	if fioLines[i] != "" {
		t.Errorf("fio's --help has a line the rows lack: %q", fioLines[i])
	}
	if got := strings.Join(lines[2:], "\n"); got != strings.Join(want, "\n") {
		t.Errorf("usage:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}
