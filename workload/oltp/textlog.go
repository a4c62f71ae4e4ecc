package oltp

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// Level is a sysbench message priority: a message is printed when its
// level is at most --verbosity.
type Level int

// sysbench's priorities (sb_logger.h).
const (
	LevelFatal Level = iota
	LevelAlert
	LevelWarning
	LevelNotice
	LevelInfo
	LevelDebug
	// LevelNote is writepath's own: what sysbench does not print (the
	// random seed, the schedule's late transactions, the uncorrected
	// latency), shown only with Output.Notes.
	LevelNote
)

func (l Level) prefix() string {
	switch l {
	case LevelFatal:
		return "FATAL: "
	case LevelAlert:
		return "ALERT: "
	case LevelWarning:
		return "WARNING: "
	case LevelDebug:
		return "DEBUG: "
	}
	return ""
}

// Line is one message of a phase, as the text log received it.
type Line struct {
	Level Level  `json:"level"`
	Text  string `json:"text"`
	// Stamped lines (interval and checkpoint reports) are exempt from
	// duplicate folding, as sysbench's log_timestamp lines are.
	Stamped bool `json:"stamped,omitempty"`
	// Raw lines are printed as they are, whatever the verbosity (sysbench
	// printf's them: the histogram).
	Raw bool `json:"raw,omitempty"`
}

// maxTranscript bounds the lines a phase keeps for its summary (100,000
// tables prepare 300,000 lines).
const maxTranscript = 10000

// Text is sysbench's text log: messages with a priority, printed with
// sysbench's prefixes ("FATAL: ") when within the verbosity, a repeated
// message folded into "(last message repeated N times)". It also keeps a
// transcript of what it received (every level), which a worker ships as
// its phase summary so a client prints it with its own verbosity. Safe
// for concurrent use.
type Text struct {
	out Output // verbosity and the report's options
	// mirror, if set, also receives every line (a worker's log).
	mirror func(Line)

	mu struct {
		sync.Mutex
		w        io.Writer // nil: transcript only
		last     string
		repeated int
		lines    []Line
		dropped  int
	}
}

// NewText returns a log printing on w (nil: keep a transcript only) with
// the output options out.
func NewText(w io.Writer, out Output) *Text {
	t := &Text{out: out}
	t.mu.w = w
	return t
}

// Output returns the output options the log prints with.
func (t *Text) Output() Output { return t.out }

// Printf logs one message; a trailing newline is added.
func (t *Text) Printf(l Level, format string, args ...any) {
	if t == nil {
		return
	}
	t.Log(Line{Level: l, Text: fmt.Sprintf(format, args...)})
}

// Print prints a line whatever the verbosity, as Lua's print does in a
// sysbench script ("Creating table 'sbtest1'...").
func (t *Text) Print(format string, args ...any) {
	if t == nil {
		return
	}
	t.Log(Line{Level: LevelNotice, Text: fmt.Sprintf(format, args...), Raw: true})
}

// Log logs one line.
func (t *Text) Log(ln Line) {
	if t == nil {
		return
	}
	if t.mirror != nil {
		t.mirror(ln)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.mu.lines) < maxTranscript {
		t.mu.lines = append(t.mu.lines, ln)
	} else {
		t.mu.dropped++
	}
	shown := ln.Level <= Level(t.out.Verbosity) || ln.Raw || ln.Level == LevelNote && t.out.Notes
	if t.mu.w == nil || !shown {
		return
	}
	if ln.Raw {
		io.WriteString(t.mu.w, ln.Text+"\n")
		return
	}
	text := ln.Text + "\n"
	if !ln.Stamped {
		if text == t.mu.last {
			t.mu.repeated++
			return
		}
		if t.mu.repeated > 0 {
			fmt.Fprintf(t.mu.w, "(last message repeated %d times)\n", t.mu.repeated)
		}
		t.mu.last, t.mu.repeated = text, 0
	}
	io.WriteString(t.mu.w, ln.Level.prefix()+text)
}

// Write prints p as it is (reports, help): NOTICE level, not folded.
func (t *Text) Write(p []byte) (int, error) {
	if t == nil {
		return len(p), nil
	}
	t.Log(Line{Level: LevelNotice, Text: strings.TrimSuffix(string(p), "\n"), Stamped: true})
	return len(p), nil
}

// Lines returns the transcript so far.
func (t *Text) Lines() []Line {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Line(nil), t.mu.lines...)
}

// Replay logs lines received elsewhere (a worker's transcript).
func (t *Text) Replay(lines []Line) {
	for _, ln := range lines {
		t.Log(ln)
	}
}
