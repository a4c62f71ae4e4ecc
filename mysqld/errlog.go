package mysqld

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
)

// ErrorLogSize is the current size of the error log in bytes (0 when it
// does not exist yet). Take it before an event and pass it to
// ReadErrorLog afterwards to see only the lines that event wrote.
func (in *Instance) ErrorLogSize() int64 {
	st, err := os.Stat(in.ErrorLogPath())
	if err != nil {
		return 0
	}
	return st.Size()
}

// ReadErrorLog returns the complete lines written to the error log from
// byte offset on, and the offset just past the last returned line (a line
// still being written is left for the next call). An offset beyond the
// end (the log was truncated or rotated) restarts from 0.
func (in *Instance) ReadErrorLog(offset int64) (lines []string, next int64, err error) {
	f, err := os.Open(in.ErrorLogPath())
	if os.IsNotExist(err) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, offset, fmt.Errorf("read error log: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < offset {
		offset = 0
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, fmt.Errorf("read error log: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, offset, fmt.Errorf("read error log: %w", err)
	}
	end := bytes.LastIndexByte(data, '\n') + 1
	for _, l := range strings.Split(string(data[:end]), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines, offset + int64(end), nil
}

// ErrorLogTail returns up to n last lines of the error log.
func (in *Instance) ErrorLogTail(n int) []string {
	lines, _, _ := in.ReadErrorLog(0)
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// tailSince is the last n lines written since offset, indented, for errors.
func (in *Instance) tailSince(offset int64, n int) string {
	lines, _, _ := in.ReadErrorLog(offset)
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return "  (error log is empty)"
	}
	return "  " + strings.Join(lines, "\n  ")
}
