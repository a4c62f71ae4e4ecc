// Package echo quotes user input back in messages, bounded: an error about
// a 5 MB name must not be 10 MB long. Every message that repeats what a
// user, a job file or a peer sent goes through Quote (or Clip).
package echo

import (
	"strconv"
	"unicode/utf8"
)

// MaxEcho is how many bytes of an input a message repeats.
const MaxEcho = 64

// Quote is strconv.Quote of s, or of its first MaxEcho bytes (cut at a
// rune boundary) followed by how long s was.
func Quote(s string) string {
	if len(s) <= MaxEcho {
		return strconv.Quote(s)
	}
	return strconv.Quote(head(s)) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// Clip is s itself, or its first MaxEcho bytes followed by how long s
// was, for messages that print input unquoted.
func Clip(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	return head(s) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

func head(s string) string {
	n := MaxEcho
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
