package fio

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"os"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/beneath"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// Verification as fio's verify=: every verify_interval bytes of a written
// block (default: the block) start with a header naming the block's
// length and offset and a checksum of the rest of the interval. A job
// that only reads checks every block it reads; a job that writes reads
// its blocks back after its I/O (do_verify=1), and those reads count as
// reads, as in fio. The header is writepath's own (fio's is not a stable
// format); what is caught is what fio catches: a block of another length
// or offset, or data that changed. A failure ends the job with EILSEQ
// (errno 84), as fio's verify does.

// verifyMagic starts every header.
const verifyMagic = 0x77707666 // "wpvf"

// hdrFixed is the header before the checksum: magic, interval length,
// offset, kind.
const hdrFixed = 24

var crc32c = crc32.MakeTable(crc32.Castagnoli)
var crc64t = crc64.MakeTable(crc64.ECMA)

// verifier is one clone's verification state.
type verifier struct {
	kind     fiov1.Verify
	interval uint64 // 0: the whole block
	sumLen   int
	gran     uint64   // block unit of lens
	lens     []uint32 // written extent lengths by start block (0 = none)
	maxBS    uint64
	fatal    bool
	dump     *beneath.Path // verify_dump: the file checked, to put dumps beside
	failures int
	first    error
	sum      [64]byte // checksum scratch
	// pat (verify_pattern=): what every written block is filled with
	// before its headers; verify=pattern has no header and checks the
	// whole block against it, meta checks what follows its header.
	pat *pattern
	// backlog (verify_backlog=N): the start blocks written since the last
	// read-back, read back every N.
	backlog []uint64
	every   int
}

// backlogDue reports whether verify_backlog's N blocks are waiting.
func (v *verifier) backlogDue() bool { return v.every > 0 && len(v.backlog) >= v.every }

// sumLength is the checksum size of each kind; 0 for meta (header only).
func sumLength(k fiov1.Verify) (int, error) {
	switch k {
	case fiov1.Verify_VERIFY_MD5:
		return md5.Size, nil
	case fiov1.Verify_VERIFY_CRC32C, fiov1.Verify_VERIFY_CRC32:
		return 4, nil
	case fiov1.Verify_VERIFY_CRC64:
		return 8, nil
	case fiov1.Verify_VERIFY_SHA1:
		return sha1.Size, nil
	case fiov1.Verify_VERIFY_SHA256:
		return sha256.Size, nil
	case fiov1.Verify_VERIFY_SHA512:
		return sha512.Size, nil
	case fiov1.Verify_VERIFY_META, fiov1.Verify_VERIFY_PATTERN:
		return 0, nil
	}
	return 0, fmt.Errorf("verify=%s is not supported here (md5, crc32c, crc32, crc64, sha1, sha256, sha512, meta, pattern are)", verifyNameOf(k))
}

func verifyNameOf(k fiov1.Verify) string {
	for n, v := range verifyNames {
		if v == k && n != "crc32c-intel" && n != "0" && n != "null" {
			return n
		}
	}
	return k.String()
}

func newVerifier(c *clone) (*verifier, error) {
	j := c.job
	if isNull(j) {
		return nil, fmt.Errorf("job %s: verify=%s: the null engine keeps no data to verify", j.Name, verifyNameOf(j.Verify))
	}
	n, err := sumLength(j.Verify)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", j.Name, err)
	}
	v := &verifier{kind: j.Verify, interval: j.VerifyInterval, sumLen: n, gran: c.gen.gran, fatal: j.VerifyFatal, maxBS: j.Bs,
		pat: newPattern(j.VerifyPattern, j.VerifyPatternOffsets)}
	if j.VerifyDump {
		v.dump = &c.file
	}
	if v.kind == fiov1.Verify_VERIFY_PATTERN && v.pat == nil {
		return nil, fmt.Errorf("job %s: verify=pattern needs verify_pattern=", j.Name)
	}
	if min := uint64(v.hdrLen()); c.gen.gran < min || (v.interval > 0 && v.interval < min) {
		return nil, fmt.Errorf("job %s: verify=%s needs blocks (and verify_interval) of at least %d bytes", j.Name, verifyNameOf(j.Verify), min)
	}
	if c.does(dirWrite) {
		v.lens = make([]uint32, c.gen.blocks)
		if j.VerifyBacklog > 0 {
			v.every = int(min(j.VerifyBacklog, uint64(c.gen.blocks)+1))
			v.backlog = make([]uint64, 0, v.every)
		}
	}
	return v, nil
}

// checksum computes the kind's checksum of p into v.sum.
func (v *verifier) checksum(p []byte) []byte {
	s := v.sum[:v.sumLen]
	switch v.kind {
	case fiov1.Verify_VERIFY_MD5:
		x := md5.Sum(p)
		copy(s, x[:])
	case fiov1.Verify_VERIFY_CRC32C:
		binary.LittleEndian.PutUint32(s, crc32.Checksum(p, crc32c))
	case fiov1.Verify_VERIFY_CRC32:
		binary.LittleEndian.PutUint32(s, crc32.ChecksumIEEE(p))
	case fiov1.Verify_VERIFY_CRC64:
		binary.LittleEndian.PutUint64(s, crc64.Checksum(p, crc64t))
	case fiov1.Verify_VERIFY_SHA1:
		x := sha1.Sum(p)
		copy(s, x[:])
	case fiov1.Verify_VERIFY_SHA256:
		x := sha256.Sum256(p)
		copy(s, x[:])
	case fiov1.Verify_VERIFY_SHA512:
		x := sha512.Sum512(p)
		copy(s, x[:])
	}
	return s
}

// hdrLen is the bytes of header each interval starts with.
func (v *verifier) hdrLen() int {
	if v.kind == fiov1.Verify_VERIFY_PATTERN {
		return 0
	}
	return hdrFixed + v.sumLen
}

// chunks calls f for each verify interval of a block of n bytes.
func (v *verifier) chunks(n uint64, f func(pos, l uint64) error) error {
	step := v.interval
	if step == 0 || step > n {
		step = n
	}
	for pos := uint64(0); pos < n; pos += step {
		if err := f(pos, min(step, n-pos)); err != nil {
			return err
		}
	}
	return nil
}

// stamp writes the headers into a block about to be written at off
// (relative offset rel in the region) and records the extent.
func (v *verifier) stamp(buf []byte, off, rel uint64) {
	if v.pat != nil {
		v.pat.fill(buf, off)
	}
	v.stampHeaders(buf, off)
	v.record(uint64(len(buf)), rel)
}

// stampHeaders writes each interval's header (none for verify=pattern).
func (v *verifier) stampHeaders(buf []byte, off uint64) {
	if v.kind == fiov1.Verify_VERIFY_PATTERN {
		return
	}
	_ = v.chunks(uint64(len(buf)), func(pos, l uint64) error {
		h := buf[pos : pos+l]
		binary.LittleEndian.PutUint32(h[0:], verifyMagic)
		binary.LittleEndian.PutUint32(h[4:], uint32(l))
		binary.LittleEndian.PutUint64(h[8:], off+pos)
		binary.LittleEndian.PutUint32(h[16:], uint32(v.kind))
		binary.LittleEndian.PutUint32(h[20:], 0)
		end := hdrFixed + v.sumLen
		copy(h[hdrFixed:end], v.checksum(h[end:]))
		return nil
	})
}

// record notes an extent of n bytes written at relative offset rel.
func (v *verifier) record(n, rel uint64) {
	if v.lens == nil {
		return
	}
	b, k := rel/v.gran, n/v.gran
	// An earlier block that this one overlaps is no longer whole: forget
	// it, as fio drops overlapped pieces from its verify list.
	for back := uint64(1); back <= v.maxBS/v.gran && back <= b; back++ {
		if s := b - back; v.lens[s] != 0 && s+uint64(v.lens[s])/v.gran > b {
			v.lens[s] = 0
		}
	}
	for i := b; i < b+k && i < uint64(len(v.lens)); i++ {
		v.lens[i] = 0
	}
	if b < uint64(len(v.lens)) {
		v.lens[b] = uint32(n)
		if v.every > 0 {
			v.backlog = append(v.backlog, b)
		}
	}
}

// checkPattern checks that p, which starts phase bytes into the block
// at off, holds the block's pattern.
func (v *verifier) checkPattern(p []byte, off uint64, phase int) error {
	if v.pat.matches(p, off, phase) {
		return nil
	}
	i, got, want := v.pat.mismatch(p, off, phase)
	return fmt.Errorf("pattern mismatch at offset %d (block offset %d): got %02x, wanted %02x", off+uint64(phase+i), off, got, want)
}

// errVerify is a block that does not hold what was written.
var errVerify = errors.New("verify failed")

// check verifies a block read at off; it returns an error only when the
// job must stop (verify_fatal), and keeps the first failure.
func (v *verifier) check(buf []byte, off uint64) error {
	err := v.chunks(uint64(len(buf)), func(pos, l uint64) error {
		h := buf[pos : pos+l]
		if v.kind == fiov1.Verify_VERIFY_PATTERN {
			return v.checkPattern(h, off, int(pos))
		}
		switch {
		case binary.LittleEndian.Uint32(h[0:]) != verifyMagic:
			return fmt.Errorf("bad magic header at offset %d", off+pos)
		case uint64(binary.LittleEndian.Uint32(h[4:])) != l:
			return fmt.Errorf("block at offset %d was written %d bytes long, read as %d", off+pos, binary.LittleEndian.Uint32(h[4:]), l)
		case binary.LittleEndian.Uint64(h[8:]) != off+pos:
			return fmt.Errorf("block at offset %d holds the data of offset %d", off+pos, binary.LittleEndian.Uint64(h[8:]))
		}
		end := hdrFixed + v.sumLen
		want := h[hdrFixed:end]
		if v.kind == fiov1.Verify_VERIFY_META {
			// fio's meta checks the header, then any pattern after it
			if v.pat != nil {
				return v.checkPattern(h[end:], off, int(pos)+end)
			}
			return nil
		}
		if got := v.checksum(h[end:]); string(got) != string(want) {
			return fmt.Errorf("%s checksum mismatch at offset %d, length %d", verifyNameOf(v.kind), off+pos, l)
		}
		return nil
	})
	if err == nil {
		return nil
	}
	v.failures++
	if v.first == nil {
		v.first = fmt.Errorf("%w: %v: %w", errVerify, err, unix.EILSEQ)
		if v.dump != nil {
			// fio's verify_dump: the block as read, beside the file (in
			// its directory, beneath the guard's root).
			writeDump(v.dump.Dir(), fmt.Sprintf("%s.%d.received", v.dump.Base(), off), buf)
		}
	}
	if v.fatal {
		return v.first
	}
	return nil
}

// verifyPass reads back every block the clone wrote (fio's do_verify),
// in offset order, with blocking preads, and accounts them as reads;
// blocks verify_backlog already read back are not read again, as in fio.
func (c *clone) verifyPass() error {
	v := c.verify
	for b, l := range v.lens {
		if l == 0 {
			continue
		}
		if c.stop.Load() {
			return nil
		}
		if err := c.verifyBlock(uint64(b)); err != nil {
			return err
		}
	}
	return nil
}

// verifyBacklog reads back the blocks written since the last read-back
// (verify_backlog=N): blocking preads from the job's thread, counted as
// reads, each block then off the list do_verify's final pass reads.
func (c *clone) verifyBacklog() error {
	v := c.verify
	for _, b := range v.backlog {
		if err := c.verifyBlock(b); err != nil {
			return err
		}
	}
	v.backlog = v.backlog[:0]
	return nil
}

// verifyBlock reads back and checks the extent written at start block b,
// if it is still whole, and marks it verified.
func (c *clone) verifyBlock(b uint64) error {
	v := c.verify
	l := v.lens[b]
	if l == 0 {
		return nil
	}
	v.lens[b] = 0
	c.prioIdx = 0 // the read-back carries the job's own priority
	off := c.offset + b*v.gran
	p := c.bufs.buf(0, c.job.Bs)[:l]
	start := c.now()
	n, err := unix.Pread(c.fd, p, int64(off))
	end := c.now()
	if err != nil {
		return c.ioError(dirRead, off, uint64(l), err)
	}
	c.complete(dirRead, start, start, end, int64(n), int64(l), off, false)
	if err := v.check(p[:n], off); err != nil {
		return fmt.Errorf("job %s: %w", c.job.Name, err)
	}
	return nil
}

// verifyResult is the job's verification outcome once it ends.
func (v *verifier) result(name string) error {
	if v == nil || v.first == nil {
		return nil
	}
	return fmt.Errorf("job %s: %d verify failure(s), first: %w", name, v.failures, v.first)
}

// writeDump writes a verify_dump file; a failure only loses the dump.
func writeDump(dir beneath.Path, name string, buf []byte) {
	p, err := dir.Join(name)
	if err != nil {
		return
	}
	f, err := p.OpenFile(os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return
	}
	_, _ = f.Write(buf)
	_ = f.Close()
}
