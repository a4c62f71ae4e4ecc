// Package advise checks a MySQL/MariaDB server's write-path settings
// against the machine it runs on, turning the rules of thumb the field
// applies from memory into findings with evidence: the values read and a
// suggested setting.
//
// The work is split in two. Gather reads the facts — the server's
// variables (from a connection or an option file), the block devices and
// filesystems behind the data, redo and doublewrite directories, the redo
// rate and checkpoint age, and optionally a measured random-write IOPS.
// Each Rule is then a pure function of those Facts, so every rule is tested
// on fixtures that trigger it and fixtures that do not.
package advise
