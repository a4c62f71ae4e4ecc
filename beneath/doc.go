// Package beneath opens files confined to a trusted root directory, so that
// a path a guard has checked is the path that is used.
//
// A Path is a root (an absolute directory with no symbolic link in it) and a
// clean relative name under it without "..". Every operation opens the root
// and then the name with openat2(2) and RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: the kernel refuses to leave
// the root and to follow any symbolic link, /proc magic links included. A
// guard hands out Paths only after following every symlink itself, so a
// name that needs a symlink at use time has changed since the check and is
// refused (ELOOP) rather than followed somewhere nobody checked. Where the
// kernel lacks openat2 (before 5.6, or a seccomp filter that blocks it) the
// same walk is done one component at a time with openat(2) and O_NOFOLLOW
// from "/", which gives the same guarantee.
//
// An unconfined Path (Unconfined) is an ordinary path used as is: what a
// local run without a guard gets, so that callers have one code path.
//
// This package imports nothing of writepath.
package beneath
