// Package mysqld manages one MySQL or MariaDB server instance on this host:
// it detects the flavor and version of a server binary, initialises an empty
// data directory, writes a my.cnf from a base plus key=value overrides,
// starts the server on a chosen port and socket, waits until it answers,
// stops it gracefully, kills it with SIGKILL, restarts it, reads its error
// log, and snapshots and restores the data directory.
//
// # Lifetime
//
// An Instance started by Start is a child of the calling process. Its owner
// must stop it: call Close (idempotent; graceful stop, then SIGKILL) when
// done, typically deferred, and cancel the context given to the owner's work
// on Ctrl-C so that the deferred Close runs. As a last line of defence the
// child is started with a parent-death signal (SIGKILL), so even a crashed
// owner does not leave a server running. Options.Detach turns both off for
// the `writepath mysqld start` command, whose server must outlive it; such an
// instance is found again with Open and stopped with Stop.
//
// # Layout of an instance directory
//
//	DIR/my.cnf           generated configuration
//	DIR/data/            datadir (the server's account's)
//	DIR/tmp/             tmpdir (never the shared /tmp)
//	DIR/run/             mode 0700, the server's account's: socket, pid file,
//	                     the one-shot init file that sets root's password
//	DIR/error.log        server error log
//	DIR/root.password    root's random password (mode 0600, the caller's)
//	DIR/instance.json    binary, port, listen, socket, pid: how Open finds it again
//
// The Unix socket lives in DIR/run when the path fits the 108-byte sun_path
// limit, else in a short private directory under the system temp dir. TCP
// is off unless Options.Listen; started by root the server runs as the
// mysql account (DefaultServerUser) when it exists.
//
// This package imports nothing else of writepath and no SQL driver: it tells
// a ready server by the handshake packet the server sends on connect.
package mysqld
