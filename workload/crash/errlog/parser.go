package errlog

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// Parser turns error-log lines, as they arrive, into Events. It is not safe
// for concurrent use; one tail owns it.
//
// It copes with two quirks of real logs: MariaDB's "ready for connections."
// names its port on the following "Version: ..." line, and that Version
// line may lack its newline, so the next log record arrives glued to it
// ("... port: 13399  Debian 122026-11-30 10:40:53 0 [Note] ...").
type Parser struct {
	pending *Event // a MariaDB ready waiting for its Version line
}

// versionPort reads the port of MariaDB's "Version: '...'  socket: '...'
// port: N" line.
var versionPort = regexp.MustCompile(`^Version: '.*\bport: (\d+)`)

// gluedTS finds a log record glued after a Version line. The record's
// date is preceded by a digit ("Debian 12" + "2026-...") or a letter, so it
// is searched for anywhere after the start.
var gluedTS = regexp.MustCompile(`\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}| +\d{1,2}:\d{2}:\d{2}) `)

// Line feeds one line (without its newline) read at arrival and returns the
// events it completes, in log order.
func (p *Parser) Line(line string, arrival time.Time) []Event {
	var out []Event
	for _, l := range splitGlued(line) {
		out = p.one(l, arrival, out)
	}
	return out
}

// Flush returns what is still pending at the end of the input: a MariaDB
// ready whose Version line never came (port unknown, -1).
func (p *Parser) Flush() []Event {
	if p.pending == nil {
		return nil
	}
	ev := *p.pending
	p.pending = nil
	return []Event{ev}
}

func (p *Parser) one(line string, arrival time.Time, out []Event) []Event {
	if p.pending != nil {
		ev := *p.pending
		p.pending = nil
		if m := versionPort.FindStringSubmatch(line); m != nil {
			ev.Port = int(atou(m[1]))
			ev.Socket = socketOf(line)
			ev.Line += "\n" + line
			return append(out, ev)
		}
		out = append(out, ev)
	}
	ev, ok := classify(line)
	if !ok {
		return out
	}
	ev.Arrival = arrival
	if ev.Marker == MarkReady && ev.Port < 0 {
		p.pending = &ev
		return out
	}
	return append(out, ev)
}

// splitGlued splits a Version line that has the next log record glued to
// its end; any other line is returned as is.
func splitGlued(line string) []string {
	if !strings.HasPrefix(line, "Version: ") {
		return []string{line}
	}
	loc := gluedTS.FindStringIndex(line)
	if loc == nil {
		return []string{line}
	}
	return []string{line[:loc[0]], line[loc[0]:]}
}

// maxLine bounds one log line read by ParseLog; longer lines are cut.
const maxLine = 1 << 20

// ParseLog reads a whole recorded error log. With no live arrival times,
// each event's Arrival is its own log timestamp (or the previous one's, for
// lines without a timestamp).
func ParseLog(r io.Reader) ([]Event, error) {
	var p Parser
	var out []Event
	var last time.Time
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	for sc.Scan() {
		for _, l := range splitGlued(sc.Text()) {
			if t := logTime(l); !t.IsZero() {
				last = t
			}
			out = p.one(l, last, out)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read error log: %w", err)
	}
	return append(out, p.Flush()...), nil
}
