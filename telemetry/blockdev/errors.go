package blockdev

import "errors"

// ErrNoDevice is returned for a device sysfs does not know.
var ErrNoDevice = errors.New("no such block device")
