package echo

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	long := strings.Repeat("a", 5<<20)
	tests := []struct{ in, want string }{
		{"", `""`},
		{"db1", `"db1"`},
		{"a\nb", `"a\nb"`},
		{strings.Repeat("x", MaxEcho), `"` + strings.Repeat("x", MaxEcho) + `"`},
		{long, `"` + strings.Repeat("a", MaxEcho) + `"... (5242880 bytes)`},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%.20q...) = %.100q; want %.100q", tt.in, got, tt.want)
		}
	}
	if got := Clip(long); len(got) > 2*MaxEcho {
		t.Errorf("Clip(5 MB) is %d bytes", len(got))
	}
}

// TestQuoteCutsAtRune: a cut never splits a UTF-8 sequence.
func TestQuoteCutsAtRune(t *testing.T) {
	s := strings.Repeat("é", MaxEcho) // 2 bytes each
	for i := range 4 {
		in := strings.Repeat("a", i) + s
		if c := Clip(in); !utf8.ValidString(c) {
			t.Errorf("Clip(%d ASCII bytes + é...) = %q: invalid UTF-8", i, c)
		}
	}
}
