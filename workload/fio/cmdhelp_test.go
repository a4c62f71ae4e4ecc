package fio

import (
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestCmdHelpCoversParser: the help table and the parser's table name the
// same options, and every alias the help prints is one the parser takes
// for that option, so --cmdhelp cannot drift from what is parsed.
func TestCmdHelpCoversParser(t *testing.T) {
	seen := map[string]bool{}
	for _, h := range cmdHelpTable {
		if h.opt == "" {
			// fio's option that writepath refuses when run: --parse-only
			// must accept it, and the run name why
			if _, r := refused[h.name]; !r && !fioOnly[h.name] {
				t.Errorf("help for fio's %s, which the parser neither takes nor refuses", h.name)
			}
			continue
		}
		if seen[h.opt] {
			t.Errorf("%s: two help entries", h.opt)
		}
		seen[h.opt] = true
		if _, ok := options[h.opt]; !ok {
			t.Errorf("help for %s, which the parser does not take", h.opt)
		}
		for _, n := range []string{h.name, h.alias} {
			if n == "" || n == h.opt {
				continue
			}
			if aliases[n] != h.opt {
				t.Errorf("%s: the help names %s, which the parser does not take for it", h.opt, n)
			}
		}
		if h.typ == "" {
			t.Errorf("%s: no type", h.opt)
		}
	}
	for _, o := range optionTable {
		if !seen[o.name] {
			t.Errorf("parser option %s has no --cmdhelp entry", o.name)
		}
	}
	for n := range cmdHelpNotes {
		if !seen[n] {
			t.Errorf("note for %s, which has no help entry", n)
		}
	}
}

// TestCmdHelpMatchesFio: `writepath fio --cmdhelp=OPT` prints what the real
// fio 3.33 prints for every option the parser takes (by name and by each
// alias, and fio's options writepath refuses when run), apart from a
// "writepath:" line (cmdHelpNotes, or the refusal's reason);
// --cmdhelp=all and an unknown name's closest match are fio's.
func TestCmdHelpMatchesFio(t *testing.T) {
	fio := fioPath(t)
	names := make([]string, 0, len(optionTable)+len(aliases))
	for _, o := range optionTable {
		names = append(names, o.name)
	}
	for a := range aliases {
		names = append(names, a)
	}
	for _, h := range cmdHelpTable {
		if h.opt == "" {
			names = append(names, h.name)
		}
	}
	for _, n := range names {
		main := n
		if a, ok := aliases[n]; ok {
			main = a
		}
		args := []string{"--cmdhelp=" + n}
		if e := engineOnlyHelp[main]; e != "" {
			args = []string{"--enghelp=" + e + "," + n}
		}
		cmd := exec.Command(fio, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("fio %s: %v", args[0], err)
		}
		if strings.HasPrefix(stderr.String(), "No such command") {
			// wait_barrier, threads: names writepath takes that fio
			// 3.33's option table lacks; their help is the option's.
			t.Logf("--cmdhelp=%s: fio 3.33 does not know this name; writepath prints %s's help", n, main)
			continue
		}
		var b strings.Builder
		if err := writeCmdHelp(&b, io.Discard, n); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		note := cmdHelpNotes[main]
		if _, ok := options[main]; !ok {
			note = "refused when run: " + reasonFor(n)
		}
		if note != "" {
			line := "           writepath: " + note + "\n"
			if !strings.Contains(got, line) {
				t.Errorf("--cmdhelp=%s lacks its note line", n)
			}
			got = strings.Replace(got, line, "", 1)
		}
		if got != string(want) {
			t.Errorf("--cmdhelp=%s:\n got %q\nfio %q", n, got, want)
		}
	}

	want, err := exec.Command(fio, "--cmdhelp=all").Output()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writeCmdHelp(&b, io.Discard, "all"); err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("--cmdhelp=all differs from fio's")
	}
	var errb strings.Builder
	b.Reset()
	if err := writeCmdHelp(&b, &errb, "iodeth"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fio, "--cmdhelp=iodeth")
	var fioErr strings.Builder
	cmd.Stderr = &fioErr
	want, err = cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) || errb.String() != fioErr.String() {
		t.Errorf("--cmdhelp=iodeth: %q %q; fio %q %q", b.String(), errb.String(), want, fioErr.String())
	}
}
