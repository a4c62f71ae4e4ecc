package store

import (
	"os"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// Open's checks read every page of the file through mappings, and each page
// read stays in the process's resident set: a reader of a 1.27 GB store
// (1,000 workers x 300 s) peaked at 1.5 GiB RSS, 1.2 GiB of it the file's
// pages, and a coordinator restarted on it held them for good. The pages
// are the page cache's, so dropping them from this process's mapping
// (MADV_DONTNEED on a shared, read-only file mapping) loses nothing: a later
// read faults them back from the cache.

// releaseEvery is how many pages a check reads between two releases
// (64 MiB of 4 KiB pages).
const releaseEvery = 16384

// releaseInterval is how often bbolt's Check has its pages released: it
// walks on its own, so a ticker does it. Check reads only page headers, and
// each fault maps the pages around it too, so it makes a file resident fast:
// at 50 ms a reader of a 522 MB fleet store held 344-446 MiB of it at the
// peak (one report on the 1.27 GB store peaked at 1,030 MiB RSS); at 5 ms,
// 56-171 MiB, for about the same CPU (a release skips the page table's
// unpopulated parts).
const releaseInterval = 5 * time.Millisecond

// checkReleasing runs Check while dropping the pages it reads from bbolt's
// mapping, and drops what is left after it. Only for Open: nothing writes
// yet, so bbolt cannot remap the file meanwhile (a release of an address
// bbolt had unmapped and the runtime reused would zero live memory).
func (s *Store) checkReleasing() error {
	addr, size := s.mapping()
	if size == 0 {
		return s.checkOnOpen()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned: waited for below
		defer wg.Done()
		t := time.NewTicker(releaseInterval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				release(addr, size)
			case <-stop:
				return
			}
		}
	}()
	err := s.checkOnOpen()
	close(stop)
	wg.Wait()
	release(addr, size)
	return err
}

// releaseRead drops the pages of bbolt's mapping that a read transaction
// touched, while tx is open: an open read transaction holds bbolt's mmap
// lock, so the mapping cannot be remapped (and its address reused) under the
// release, and it covers at least tx.Size() bytes from its first. Without it
// a reader keeps every page it walks resident (TestReadingKeepsFilePagesBounded:
// a 48 MiB walk of snapshots, 47 MiB). The whole range is advised, not only
// the pages just read: the kernel skips the unpopulated parts of the page
// table cheaply, and a batch's pages (branch, leaf, overflow) are scattered.
func releaseRead(tx *bolt.Tx) {
	if size := tx.Size(); size > 0 {
		release(tx.DB().Info().Data, uintptr(size))
	}
}

// mapping is bbolt's mapping of the file: its address and the file's size
// (bbolt maps at least the file). Zero when there is nothing to release.
func (s *Store) mapping() (addr, size uintptr) {
	st, err := os.Stat(s.path)
	if err != nil || st.Size() == 0 {
		return 0, 0
	}
	info := s.db.Info() // the mapping's first byte (bbolt's documented escape hatch)
	return info.Data, uintptr(st.Size())
}

// release advises the kernel that this process no longer needs the pages
// of [addr, addr+size). Advice only: an error changes nothing read.
func release(addr, size uintptr) {
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, addr, size, unix.MADV_DONTNEED)
}
