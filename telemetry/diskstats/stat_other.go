//go:build !linux

package diskstats

import (
	"fmt"
	"runtime"
)

// Device numbers come from Linux's stat(2); elsewhere there are none.

func statDev(path string) (uint32, uint32, error) {
	return 0, 0, fmt.Errorf("stat %s: block devices are resolved on linux only, not %s", path, runtime.GOOS)
}

func statRdev(path string) (uint32, uint32, error) { return statDev(path) }
