//go:build linux

package diskstats

import (
	"fmt"
	"os"
	"syscall"
)

// statDev returns the major:minor of the filesystem holding path (st_dev).
func statDev(path string) (uint32, uint32, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, 0, fmt.Errorf("stat %s: %w", path, err)
	}
	maj, min := devNumbers(uint64(st.Dev))
	return maj, min, nil
}

// statRdev returns the major:minor of a block device node (st_rdev).
func statRdev(path string) (uint32, uint32, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, fmt.Errorf("stat %s: %w", path, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
		return 0, 0, fmt.Errorf("%s is not a block device: %w", path, ErrNoDevice)
	}
	maj, min := devNumbers(uint64(st.Rdev))
	return maj, min, nil
}

// devNumbers splits a Linux dev_t (glibc's gnu_dev_major/minor encoding:
// major in bits 8-19 and 32-43, minor in bits 0-7 and 20-31).
func devNumbers(dev uint64) (major, minor uint32) {
	major = uint32((dev>>8)&0xfff) | uint32((dev>>32)&^0xfff)
	minor = uint32(dev&0xff) | uint32((dev>>12)&^0xff)
	return major, minor
}
