package innodbpage

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/writepath/writepath/workload/crash/innodbpage/pagetest"
)

func TestPageState(t *testing.T) {
	fc, legacy := Format{PageSize: pagetest.PageSize, FullCRC32: true}, Format{PageSize: pagetest.PageSize}
	oldP, newP := pagetest.FullCRC32Page(7, 3, 100, 'o'), pagetest.FullCRC32Page(7, 3, 200, 'n')
	flipped := append([]byte(nil), newP...)
	flipped[9000] ^= 1
	lsnOff := append([]byte(nil), newP...)
	binary.BigEndian.PutUint32(lsnOff[pagetest.PageSize-8:], 1)
	pagetest.Reseal(lsnOff)
	tests := []struct {
		name string
		f    Format
		p    []byte
		want string
	}{
		{"full_crc32 intact", fc, newP, Valid},
		{"full_crc32 one bit flipped", fc, flipped, Corrupt},
		{"full_crc32 end LSN differs", fc, lsnOff, Corrupt},
		{"torn at 4 KiB", fc, pagetest.Tear(oldP, newP, 4096), Corrupt},
		{"torn at 12 KiB", fc, pagetest.Tear(oldP, newP, 12288), Corrupt},
		{"never written", fc, make([]byte, pagetest.PageSize), Zero},
		{"crc32 intact", legacy, pagetest.LegacyPage(3, 9), Valid},
		{"crc32 torn", legacy, pagetest.Tear(pagetest.LegacyPage(3, 9), pagetest.LegacyPage(3, 10), 8192), Corrupt},
	}
	for _, tt := range tests {
		if got := tt.f.State(tt.p); got != tt.want {
			t.Errorf("%s: %s; want %s", tt.name, got, tt.want)
		}
	}
}

func TestFormatOf(t *testing.T) {
	for flags, want := range map[uint32]Format{
		pagetest.FullCRC32Flags: {PageSize: 16 << 10, FullCRC32: true},
		1<<4 | 3:                {PageSize: 4 << 10, FullCRC32: true},
		0:                       {PageSize: 16 << 10},
		0x21:                    {PageSize: 16 << 10}, // post-antelope, atomic blobs
		4 << 6:                  {PageSize: 8 << 10},
		1<<4 | 0xf:              {},
		0xf<<6 | 1:              {},
		1<<4 | 1<<3:             {},
	} {
		got, err := FormatOf(flags)
		if got != want || (err != nil) != (want.PageSize == 0) {
			t.Errorf("FormatOf(%#x) = %+v, %v; want %+v", flags, got, err, want)
		}
	}
}

func TestRedoCheckpoint(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		b    []byte
		want uint64 // 0: an error
	}{
		{"both valid, the later wins", pagetest.RedoHeader([2]uint64{5000, 6000}, [2]uint64{4000, 4100}), 5000},
		{"only the second valid", pagetest.RedoHeader([2]uint64{0, 0}, [2]uint64{4000, 4100}), 4000},
		{"none valid", pagetest.RedoHeader(), 0},
		{"end before checkpoint", pagetest.RedoHeader([2]uint64{5000, 10}), 0},
		{"older format", append([]byte{0, 0, 0, 1}, make([]byte, 12284)...), 0},
	}
	for _, tt := range tests {
		p := filepath.Join(dir, "ib_logfile0")
		if err := os.WriteFile(p, tt.b, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := RedoCheckpoint(p)
		if got != tt.want || (err != nil) != (tt.want == 0) {
			t.Errorf("%s: %d, %v; want %d", tt.name, got, err, tt.want)
		}
	}
}
