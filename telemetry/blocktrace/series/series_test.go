package series

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		want Series
		ok   bool
	}{
		{"block.vda.write.d2c", Series{Family: FamilyBlock, Prefix: "block", Device: "vda", Op: "write", Metric: D2C}, true},
		{"block.nvme0n1.flush.q2d", Series{Family: FamilyBlock, Prefix: "block", Device: "nvme0n1", Op: "flush", Metric: Q2D}, true},
		{"block.loop3.read.bytes", Series{Family: FamilyBlock, Prefix: "block", Device: "loop3", Op: "read", Metric: Bytes}, true},
		{"redo.read.bytes", Series{Family: FamilyBlock, Prefix: "redo", Op: "read", Metric: Bytes}, true},
		{"sys.write.bytes", Series{Family: FamilySyscalls, Prefix: "sys", Op: "write", Metric: Bytes}, true},
		{"sys.fsync", Series{Family: FamilySyscalls, Prefix: "sys", Op: "fsync"}, true},
		{"sys.fdatasync", Series{Family: FamilySyscalls, Prefix: "sys", Op: "fdatasync"}, true},
		{"write", Series{}, false},
		{"trx", Series{}, false},
		{"block.vda.write", Series{}, false},
		{"block..write.d2c", Series{}, false},
		{"block.vda.scan.d2c", Series{}, false},
		{"redo.flush.bytes", Series{}, false},
		{"sys.read.bytes", Series{}, false},
	}
	for _, tt := range tests {
		got, ok := Parse(tt.name)
		if tt.ok {
			tt.want.Name = tt.name
		}
		if ok != tt.ok || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
		if Is(tt.name) != tt.ok {
			t.Errorf("Is(%q) = %v; want %v", tt.name, !tt.ok, tt.ok)
		}
	}
	if n := Block("vda", "write", D2C); n != "block.vda.write.d2c" {
		t.Errorf("Block = %q", n)
	}
	if n := Redo("read"); n != "redo.read.bytes" {
		t.Errorf("Redo = %q", n)
	}
	if s, _ := Parse(Block("sda", "read", Bytes)); !s.Bytes() {
		t.Errorf("%+v.Bytes() = false", s)
	}
}
