package crash

import (
	"bytes"
	"strings"
	"testing"
)

// TestHelpListsEveryOption: the help prints every crash option of the
// parser's table, with its text, and the load's options.
func TestHelpListsEveryOption(t *testing.T) {
	var b bytes.Buffer
	if err := Help(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, f := range flagTable {
		if f.help == "" {
			t.Errorf("--%s has no help text", f.name)
		}
		if !strings.Contains(out, flagUsage(f)+" ") || !strings.Contains(out, f.help) {
			t.Errorf("help lacks --%s", f.name)
		}
	}
	for _, want := range []string{"--rounds N ", "[3]", "--threads=N", "--table_size=N", "[10000]"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
