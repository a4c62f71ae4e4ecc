package sysbench

import (
	"strings"
	"testing"
)

// TestSortedShapeSplitsJoinedMessages: sysbench's threads print without a
// lock, so the comparison must see the same messages however they landed.
func TestSortedShapeSplitsJoinedMessages(t *testing.T) {
	tests := []struct{ a, b string }{
		{"Creating table 'sbtest1'...Creating table 'sbtest2'...\n\n", "Creating table 'sbtest1'...\nCreating table 'sbtest2'...\n"},
		{"Prewarming table sbtest1Prewarming table sbtest2\n\n", "Prewarming table sbtest2\nPrewarming table sbtest1\n"},
	}
	for _, tt := range tests {
		if a, b := strings.Join(sortedShape(tt.a), "|"), strings.Join(sortedShape(tt.b), "|"); a != b {
			t.Errorf("sortedShape(%q) = %s; sortedShape(%q) = %s", tt.a, a, tt.b, b)
		}
	}
}
