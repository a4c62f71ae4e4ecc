package campaign

import (
	"fmt"
	"strings"
	"testing"
)

// TestSizeLimit: a spec planning more than MaxRuns runs is refused from its
// counts, before anything is expanded (rounds: 1000000000 once ran the CLI
// out of memory).
func TestSizeLimit(t *testing.T) {
	matrix := func(vars, vals int) string {
		var b strings.Builder
		b.WriteString("matrix:\n")
		for v := range vars {
			fmt.Fprintf(&b, "  var%d: [", v)
			for i := range vals {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprint(&b, i)
			}
			b.WriteString("]\n")
		}
		return b.String()
	}
	tests := []struct {
		name, body string
		ok         bool
	}{
		{"a billion rounds", matrix(1, 2) + "rounds: 1000000000\n", false},
		{"1e20 cells", matrix(20, 10) + "rounds: 1\n", false},
		{"10,001 runs", matrix(1, 10001) + "rounds: 1\n", false},
		{"10,000 runs", matrix(1, 5000) + "rounds: 2\n", true},
		{"max int rounds", matrix(1, 2) + "rounds: 9223372036854775807\n", false},
	}
	for _, tt := range tests {
		spec := "name: big\nworkload: fio\n" + tt.body
		s, err := Parse("big.yaml", []byte(spec))
		if tt.ok {
			if err != nil || len(s.Plan()) != MaxRuns {
				t.Errorf("%s: %v; want %d runs planned", tt.name, err, MaxRuns)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "the limit per campaign") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Parse = %v; want one line naming the limit", tt.name, err)
		}
	}
	if _, err := Parse("huge.yaml", make([]byte, MaxSpecBytes+1)); err == nil || !strings.Contains(err.Error(), "the limit for a campaign spec") {
		t.Errorf("a spec over MaxSpecBytes: %v", err)
	}
}

// TestParseErrorsEchoBounded: a long value is quoted back in a short error.
func TestParseErrorsEchoBounded(t *testing.T) {
	long := strings.Repeat("g", 512<<10)
	for _, spec := range []string{
		"name: x\nworkload: fio\nmatrix: {--a: [1]}\ngroups:\n  " + long + ": nokeyvalue\n",
		"name: x\nworkload: " + long + "\nmatrix: {--a: [1]}\n",
		"name: x\nworkload: fio\nmatrix: {--a: [1]}\nrounds: " + long + "\n",
		"name: x\nworkload: fio\nmatrix: {--a: [1]}\nbaseline: " + long + "\n",
	} {
		_, err := Parser{Workloads: []string{"fio"}}.Parse("x.yaml", []byte(spec))
		if err == nil || len(err.Error()) > 600 {
			t.Errorf("Parse with a 512 KiB value: %d-byte error; want a short refusal", len(fmt.Sprint(err)))
		}
	}
}
