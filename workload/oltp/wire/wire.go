// Package wire speaks the part of the MySQL client/server protocol that a
// write-only OLTP client sends once connected: COM_QUERY, COM_STMT_PREPARE
// and COM_STMT_EXECUTE requests, and their OK, ERR and prepare-OK answers.
//
// It exists so that a client can own its socket: through the driver (and
// the runtime's poller) every statement parks and wakes a goroutine, and
// on small machines those scheduler hand-offs cost more CPU than the
// statements. The connection phase (handshake, authentication plugins)
// stays with github.com/go-sql-driver/mysql: Dial lets the driver log in,
// and Detach then hands the socket over.
//
// Every request is one packet with sequence number 0, and every answer
// the hot path reads is one packet; nothing here allocates except the
// error for an ERR packet. A connection that negotiated CapCompress wraps
// them in the compressed protocol's frames (Compressor), whose zlib state
// each connection makes once and reuses.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
)

// Command bytes.
const (
	ComQuit        = 0x01
	ComQuery       = 0x03
	ComStmtPrepare = 0x16
	ComStmtExecute = 0x17
	ComStmtClose   = 0x19
)

// Capability flags the reader needs to know about.
const (
	// CapDeprecateEOF: result metadata ends without an EOF packet.
	CapDeprecateEOF = 1 << 24
)

// maxPayload is the largest payload of a single packet; longer ones are
// split, which no request or answer here needs.
const maxPayload = 1<<24 - 1

// Header returns dst with a new request started: room for the 4-byte
// packet header, then the command byte. Append the body and call Finish.
func Header(dst []byte, cmd byte) []byte {
	return append(dst[:0], 0, 0, 0, 0, cmd)
}

// Finish fills in the header of the request in b (sequence 0).
func Finish(b []byte) ([]byte, error) {
	n := len(b) - 4
	if n > maxPayload {
		return nil, fmt.Errorf("request of %d bytes: longer than one packet (%d)", n, maxPayload)
	}
	b[0], b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16), 0
	return b, nil
}

// Value is one statement argument: an integer, or bytes when Bytes is not
// nil. A struct instead of an interface, so that binding boxes nothing.
type Value struct {
	Int   int64
	Bytes []byte
}

// Field types of the binary protocol.
const (
	typeLongLong = 0x08
	typeString   = 0xfe
)

// AppendExecute appends the body of COM_STMT_EXECUTE for statement id
// with args to a request started by Header(dst, ComStmtExecute): no
// cursor, one iteration, no NULLs. The parameter types go with the first
// execution of a statement (types true); later ones reuse them, as
// libmysqlclient does (the Go driver sends them every time).
func AppendExecute(b []byte, id uint32, args []Value, types bool) []byte {
	b = binary.LittleEndian.AppendUint32(b, id)
	b = append(b, 0)                           // flags: CURSOR_TYPE_NO_CURSOR
	b = binary.LittleEndian.AppendUint32(b, 1) // iteration count
	if len(args) == 0 {
		return b
	}
	for range (len(args) + 7) / 8 {
		b = append(b, 0) // NULL bitmap: none
	}
	if !types {
		b = append(b, 0) // new-params-bound: no, as last time
	} else {
		b = append(b, 1) // new-params-bound: types follow
		for _, a := range args {
			if a.Bytes != nil {
				b = append(b, typeString, 0)
			} else {
				b = append(b, typeLongLong, 0)
			}
		}
	}
	for _, a := range args {
		if a.Bytes != nil {
			b = AppendLenEnc(b, uint64(len(a.Bytes)))
			b = append(b, a.Bytes...)
		} else {
			b = binary.LittleEndian.AppendUint64(b, uint64(a.Int))
		}
	}
	return b
}

// AppendLenEnc appends n as a length-encoded integer.
func AppendLenEnc(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), n)
}

// lenEnc reads a length-encoded integer from p; ok is false when p is
// too short or starts with a NULL or ERR marker.
func lenEnc(p []byte) (n uint64, size int, ok bool) {
	if len(p) == 0 {
		return 0, 0, false
	}
	switch p[0] {
	case 0xfb, 0xff:
		return 0, 0, false
	case 0xfc:
		if len(p) < 3 {
			return 0, 0, false
		}
		return uint64(binary.LittleEndian.Uint16(p[1:])), 3, true
	case 0xfd:
		if len(p) < 4 {
			return 0, 0, false
		}
		return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, 4, true
	case 0xfe:
		if len(p) < 9 {
			return 0, 0, false
		}
		return binary.LittleEndian.Uint64(p[1:]), 9, true
	}
	return uint64(p[0]), 1, true
}

// ErrMultiPacket reports an answer longer than one packet: none of the
// commands sent here get one.
var ErrMultiPacket = errors.New("answer spans several packets")

// Next splits the first whole packet off buf: its payload and the bytes
// it took (header included). n is 0 when buf does not hold a whole packet
// yet.
func Next(buf []byte) (payload []byte, n int, err error) {
	if len(buf) < 4 {
		return nil, 0, nil
	}
	size := int(buf[0]) | int(buf[1])<<8 | int(buf[2])<<16
	if size == maxPayload {
		return nil, 0, ErrMultiPacket
	}
	if len(buf) < 4+size {
		return nil, 0, nil
	}
	return buf[4 : 4+size], 4 + size, nil
}

// Packet markers.
const (
	markOK  = 0x00
	markEOF = 0xfe
	markErr = 0xff
)

// IsErr tells whether payload is an ERR packet.
func IsErr(payload []byte) bool { return len(payload) > 0 && payload[0] == markErr }

// ParseOK returns the affected-rows count of an OK packet.
func ParseOK(payload []byte) (affected uint64, err error) {
	if len(payload) == 0 || payload[0] != markOK {
		return 0, fmt.Errorf("answer %s: want an OK packet", describe(payload))
	}
	n, _, ok := lenEnc(payload[1:])
	if !ok {
		return 0, fmt.Errorf("OK packet of %d bytes: bad affected-rows field", len(payload))
	}
	return n, nil
}

// ParseErr turns an ERR packet into the driver's error type, so that a
// caller tells server errors apart the same way for both paths.
func ParseErr(payload []byte) *mysql.MySQLError {
	e := &mysql.MySQLError{}
	if len(payload) < 3 {
		e.Message = "malformed ERR packet"
		return e
	}
	e.Number = binary.LittleEndian.Uint16(payload[1:3])
	msg := payload[3:]
	if len(msg) >= 6 && msg[0] == '#' {
		copy(e.SQLState[:], msg[1:6])
		msg = msg[6:]
	}
	e.Message = string(msg)
	return e
}

// PrepareOK is the first packet of the answer to COM_STMT_PREPARE.
type PrepareOK struct {
	ID              uint32
	Columns, Params uint16
}

// ParsePrepareOK reads the first packet of a COM_STMT_PREPARE answer.
func ParsePrepareOK(payload []byte) (PrepareOK, error) {
	if len(payload) < 9 || payload[0] != markOK {
		return PrepareOK{}, fmt.Errorf("answer %s: want a prepare OK packet", describe(payload))
	}
	return PrepareOK{
		ID:      binary.LittleEndian.Uint32(payload[1:5]),
		Columns: binary.LittleEndian.Uint16(payload[5:7]),
		Params:  binary.LittleEndian.Uint16(payload[7:9]),
	}, nil
}

// Trailing is how many packets follow a prepare OK: the parameter and
// column definitions, each list closed by an EOF packet unless the
// connection negotiated CapDeprecateEOF.
func (p PrepareOK) Trailing(caps uint32) int {
	n := int(p.Params) + int(p.Columns)
	if caps&CapDeprecateEOF == 0 {
		if p.Params > 0 {
			n++
		}
		if p.Columns > 0 {
			n++
		}
	}
	return n
}

// describe names a packet for an error message.
func describe(p []byte) string {
	switch {
	case len(p) == 0:
		return "empty packet"
	case p[0] == markErr:
		return "ERR packet"
	case p[0] == markEOF && len(p) < 9:
		return "EOF packet"
	}
	return fmt.Sprintf("packet 0x%02x of %d bytes", p[0], len(p))
}
