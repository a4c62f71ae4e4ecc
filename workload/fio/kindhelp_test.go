package fio

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// TestOptionDefaults: every default the help prints is the real fio
// 3.33's (and an option fio gives a default has one here), and giving it
// to this package's parser leaves a default job unchanged.
func TestOptionDefaults(t *testing.T) {
	for _, o := range optionTable {
		def, ok := optionDefaults[o.name]
		if !ok {
			continue
		}
		if notYet[o.name] {
			continue // refused before it is applied
		}
		j := defaultJob()
		if err := o.apply(j, def); err != nil {
			t.Errorf("--%s=%s: %v", o.name, def, err)
			continue
		}
		// Some fields leave the default to their readers when unset.
		switch o.name {
		case "nrfiles":
			j.Nrfiles = 0 // parse.go: max(nrfiles, 1)
		case "verify":
			// Unset and none both verify nothing; unset lets
			// verify_pattern alone choose fio's header check.
			if j.Verify == fiov1.Verify_VERIFY_NONE {
				j.Verify = fiov1.Verify_VERIFY_UNSPECIFIED
			}
		case "replay_time_scale":
			j.ReplayTimeScale = 0 // replay.go: 0 and 100 both replay at the logged times
		case "percentile_list":
			if !slices.Equal(percentilesOf(j), percentilesOf(defaultJob())) {
				t.Errorf("percentile_list %s is not the reports' default", def)
			}
			j.PercentileList = nil
		}
		if !proto.Equal(j, defaultJob()) {
			t.Errorf("--%s=%s changes the default job: the help's default is not the parser's", o.name, def)
		}
	}
	for n := range optionDefaults {
		if _, ok := options[n]; !ok {
			t.Errorf("default for %s, which is no option", n)
		}
	}
	fio := fioPath(t)
	for _, o := range optionTable {
		out, err := exec.Command(fio, "--cmdhelp="+o.name).Output()
		if err != nil {
			t.Fatalf("fio --cmdhelp=%s: %v", o.name, err)
		}
		want := ""
		for _, l := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(l), ": "); ok && k == "default" && v != "no default" {
				want = v
			}
		}
		if _, ok := defaultDiffers[o.name]; ok {
			continue
		}
		if got := optionDefaults[o.name]; got != want {
			t.Errorf("default of %s = %q; fio 3.33 says %q", o.name, got, want)
		}
	}
}

// TestHelpListsEveryOption: the kind's help names every option of the
// parser's table and every refused one, with the defaults.
func TestHelpListsEveryOption(t *testing.T) {
	var b bytes.Buffer
	if err := Help(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, o := range optionTable {
		if !strings.Contains(out, "--"+o.name+"=VALUE") && !strings.Contains(out, "--"+o.name+"[=BOOL]") {
			t.Errorf("help lacks --%s", o.name)
		}
	}
	for n := range refused {
		if !strings.Contains(out, "--"+n+" ") {
			t.Errorf("help lacks refused --%s", n)
		}
	}
	for _, want := range []string{"Block size unit (alias blocksize) [4096]", "IO engine to use [psync]", "libaio"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
