package fio

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// InflateLog is fio's --inflate-log=FILE: the zlib streams of a .fz log
// (log_store_compressed=1), one after the other, decompressed and
// printed as fio prints the samples: "time, value, ddir, bs, [offset, ]
// prio". It reads fio's own .fz files as well as writepath's.
func InflateLog(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--inflate-log: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16) // a ByteReader: each stream stops at its own end
	out := bufio.NewWriterSize(w, 1<<16)
	var zr io.ReadCloser
	var rec []byte
	format := -1 // the first sample's flags decide the columns, as in fio
	for n := 0; ; n++ {
		if _, err := br.Peek(1); err == io.EOF {
			break
		}
		if zr == nil {
			zr, err = zlib.NewReader(br)
		} else {
			err = zr.(zlib.Resetter).Reset(br, nil)
		}
		if err != nil {
			return fmt.Errorf("--inflate-log %s: chunk %d: %w", path, n+1, err)
		}
		for {
			if rec == nil {
				var hdr [sampleLen]byte
				if _, err := io.ReadFull(zr, hdr[:]); err != nil {
					if errors.Is(err, io.EOF) {
						break
					}
					return fmt.Errorf("--inflate-log %s: chunk %d: %w", path, n+1, err)
				}
				format = int(binary.LittleEndian.Uint32(hdr[16:]) & (sampleOffsetBit | samplePrioBit))
				rec = make([]byte, sampleLen, sampleOffsetLen)
				if format&sampleOffsetBit != 0 {
					rec = rec[:sampleOffsetLen]
				}
				copy(rec, hdr[:])
				if _, err := io.ReadFull(zr, rec[sampleLen:]); err != nil {
					return fmt.Errorf("--inflate-log %s: chunk %d: %w", path, n+1, err)
				}
			} else if _, err := io.ReadFull(zr, rec); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return fmt.Errorf("--inflate-log %s: chunk %d: %w", path, n+1, err)
			}
			writeSampleLine(out, rec, format)
		}
	}
	if zr != nil {
		_ = zr.Close()
	}
	return out.Flush()
}

// writeSampleLine prints one binary sample as fio's flush_samples.
func writeSampleLine(w *bufio.Writer, rec []byte, format int) {
	var b [128]byte
	p := strconv.AppendUint(b[:0], binary.LittleEndian.Uint64(rec[0:]), 10)
	p = append(p, ", "...)
	p = strconv.AppendInt(p, int64(binary.LittleEndian.Uint64(rec[8:])), 10)
	p = append(p, ", "...)
	p = strconv.AppendUint(p, uint64(binary.LittleEndian.Uint32(rec[16:])&^(sampleOffsetBit|samplePrioBit)), 10)
	p = append(p, ", "...)
	p = strconv.AppendUint(p, binary.LittleEndian.Uint64(rec[24:]), 10)
	if format&sampleOffsetBit != 0 {
		p = append(p, ", "...)
		p = strconv.AppendUint(p, binary.LittleEndian.Uint64(rec[32:]), 10)
	}
	prio := binary.LittleEndian.Uint16(rec[20:])
	switch {
	case format&samplePrioBit != 0:
		p = append(p, ", 0x"...)
		for shift := 12; shift >= 0; shift -= 4 {
			p = append(p, "0123456789abcdef"[(prio>>shift)&0xf])
		}
	case prio>>13 == ioprioClassRT:
		p = append(p, ", 1"...)
	default:
		p = append(p, ", 0"...)
	}
	p = append(p, '\n')
	_, _ = w.Write(p)
}
