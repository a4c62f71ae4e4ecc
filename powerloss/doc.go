// Package powerloss is a FUSE passthrough file system that knows what was
// made durable, so that a power cut can be simulated in software (the idea
// of Jepsen's LazyFS). A program (a database server) runs on the mount; the
// layer forwards every operation to a backing directory but keeps whatever
// is not durable yet in its own cache; Cut throws that cache away.
//
// # Durability model
//
// The backing directory always holds exactly the durable state, and
// nothing else (it is synced once at mount). Everything else lives in the
// serving process:
//
//   - File data and size. A write, truncate, O_TRUNC open or fallocate is
//     cached in a per-file overlay: a sorted map of dirty byte extents plus
//     the pending logical size and pending shrink. Reads see the overlay on
//     top of the backing file, like a page cache. fsync or fdatasync of the
//     file (through any descriptor, or msync) makes all of that file's
//     pending state durable: pending shrink, dirty extents, final size, then
//     fdatasync of the backing file. A write or fallocate through a
//     descriptor opened O_SYNC or O_DSYNC is durable when it returns (and so
//     is everything else pending on that file: one flush). close makes
//     nothing durable. O_DIRECT is accepted and ignored for durability, as by
//     a disk with a volatile write cache. Only dirty bytes are ever copied, so
//     a write at a high offset of a large or sparse file costs its own size.
//   - Namespace. create, mknod, mkdir, symlink, link, unlink, rmdir and
//     rename are done at once in the mount's view and appended to one
//     journal, in order. fsync of a directory D commits the journal up to and
//     including the last operation that changed D (added or removed a name in
//     it; a rename changes both directories), replaying it on the backing
//     directory in order. Like the commit of a journaling file system it
//     commits earlier operations elsewhere too, never later ones, so the
//     durable namespace is always the mount's namespace at some past moment.
//     A created file lives in a staging directory until its create is
//     committed, so "write, fsync the file, fsync the directory" is what makes
//     a new file survive; fsync of the file alone keeps its data for when the
//     name is committed, but without it the file is gone after a cut.
//
// # Power cut
//
// Cut makes every later operation on the mount fail with EIO, drops every
// cached extent, pending size change and uncommitted namespace operation,
// removes the staging files and unmounts. With torn writes, each write
// request not yet synced (as the kernel sent it: at most 128 KiB) instead
// keeps a prefix: it stops at its start, at its end, or at any 4 KiB
// file-offset boundary inside it, all equally likely, chosen by a PCG
// generator seeded with (seed, the file's path at first open). Kept bytes
// are the file's content at the cut for that range, clipped to the durable
// size (a file's growth was never made durable). The same writes and seed
// tear the same way; the seed is in the CutReport. A torn 16 KiB page is one
// whose prefix stops at 4, 8 or 12 KiB; CutReport.TornWrites and
// FileCut.TornWrites count such overwrites of durable bytes (growth past
// the durable size is clipped, not counted). Each FileCut also gives the
// file's size before and after the cut (Size, DurableSize) and lists the
// writes not kept whole (Lost: offset, length, bytes kept, torn, whether
// it grew the file; torn ones first, at most 256 per file), so that a
// caller can say which pages a cut tore.
//
// Stats.Dirty lists the files holding un-synced bytes at that moment, so a
// caller can choose the moment of a cut (the crash harness waits until
// InnoDB tablespaces, not only its redo log, have writes in flight).
//
// Close without Cut is a clean shutdown: everything is synced, then
// unmounted. If the serving process dies, the backing directory holds the
// durable state at that moment, as after a cut without torn writes.
//
// # Processes
//
// The serving side runs in its own process (`writepath powerloss-serve`,
// started by Mount): a process touching a mount it serves itself can
// deadlock. Binaries other than writepath (test binaries) serve by calling
// ServeMain from their main or TestMain when os.Args[1] is ServeCommand. Mount talks to it over a unix socket carrying JSON lines (see
// control.go); that connection is a lease: when the client goes, the server
// syncs, unmounts and exits. Close always leaves no mount behind, lazily
// unmounting one left by a crashed server.
//
// # Limits
//
//   - mmap has no tracking of its own: shared writable mappings reach the
//     layer when the kernel writes their pages back (msync, fsync, or
//     writeback), and pages still dirty in the kernel at a cut are lost,
//     which is right for a power cut. InnoDB does not use mmap for data.
//   - fdatasync is fsync; an O_DSYNC write flushes the whole file, not only
//     its range. Both are more durable than a real disk needs to be.
//   - chmod, chown, utimes and xattrs of files go to the inode at once
//     (durable at once); on directories they change only the view and are
//     lost at a cut or unmount.
//   - O_TMPFILE and copy_file_range are refused (callers fall back); punch
//     hole and zero range are cached as zero bytes up to 16 MiB per call,
//     refused above; posix_fallocate reserves space in the backing file past
//     its durable end (space, not content).
//   - Files seen through the mount count one extra hard link (the view's).
//   - Cached data lives in the server's memory until synced.
//   - POSIX locks are handled by the kernel locally (one host).
//   - The layer adds latency (see bench/powerloss.sh): recovery times
//     measured through it are not native ones.
package powerloss
