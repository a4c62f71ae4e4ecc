// Package diskprofile makes a disk behave like a cloud volume: IOPS and
// bandwidth caps with burst credits, enforced by the kernel's own block
// throttling, on a device the worker may use or on a loop-backed
// filesystem it creates in its data directory.
//
// A Profile is the volume type's numbers (built-ins modelled on public
// cloud figures, or custom). A Spec is a Profile plus where it applies.
// A Manager checks a Spec without changing anything (Check), then applies
// it (Apply): the loop filesystem is attached (direct I/O over an image
// file, auto-cleared) and mounted if needed, the throttle rules are
// journaled (hostknob's fsynced restore journal) before they are written,
// and a controller steps every 100 ms, spending and earning credits from
// the device's own counters and moving the cap between burst and
// baseline. Restore puts every rule back; a worker killed with -9 has
// them restored from the journal when it starts again.
//
// Credits, as EBS gp2 counts them: I/Os above the baseline spend one
// credit each, bandwidth above the baseline spends credits in proportion
// ((burst IOPS - baseline IOPS) per (burst B/s - baseline B/s)), so a
// saturating load of either kind empties a full bucket in
// bucket/(burst-baseline) seconds; below the baseline the bucket earns
// Refill credits per second scaled by the unused share of the baseline.
//
// Throttling: cgroup v1 blkio.throttle.* in the root blkio cgroup, where
// the kernel's flusher threads run, so page-cache writeback is capped
// too (v1 throttling is flat: only tasks of the root blkio cgroup are
// capped, so a worker in another blkio cgroup is refused). Without v1
// blkio, cgroup v2 io.max on a cgroup the worker moves itself into; v2
// caps writeback only when the memory controller is on v2 as well and the
// filesystem supports cgroup writeback (ext4, xfs, btrfs).
package diskprofile
