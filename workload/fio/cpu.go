package fio

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadUsage is the calling OS thread's resource use. Each job goroutine
// is locked to its thread, so this is the job's CPU as fio reports it
// (fio uses RUSAGE_THREAD too).
type threadUsage struct {
	usr, sys        time.Duration
	ctx, majf, minf int64
}

func readThreadUsage() threadUsage {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return threadUsage{}
	}
	return threadUsage{
		usr:  time.Duration(ru.Utime.Nano()),
		sys:  time.Duration(ru.Stime.Nano()),
		ctx:  ru.Nvcsw + ru.Nivcsw,
		majf: ru.Majflt,
		minf: ru.Minflt,
	}
}

// sub returns u - v.
func (u threadUsage) sub(v threadUsage) threadUsage {
	return threadUsage{usr: u.usr - v.usr, sys: u.sys - v.sys, ctx: u.ctx - v.ctx,
		majf: u.majf - v.majf, minf: u.minf - v.minf}
}

// add returns u + v.
func (u threadUsage) add(v threadUsage) threadUsage {
	return threadUsage{usr: u.usr + v.usr, sys: u.sys + v.sys, ctx: u.ctx + v.ctx,
		majf: u.majf + v.majf, minf: u.minf + v.minf}
}
