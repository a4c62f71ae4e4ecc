package main

import (
	"fmt"
	"github.com/writepath/writepath/internal/echo"
	"strconv"
	"strings"
)

// sizeFlag is a byte count given as a number with an optional binary
// suffix (k, m, g, t: powers of 1024, as fio reads them).
type sizeFlag int64

func (s *sizeFlag) String() string {
	n := int64(*s)
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func (s *sizeFlag) Set(v string) error {
	t := strings.ToLower(strings.TrimSpace(v))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "b"), "i")
	shift := uint(0)
	if t != "" {
		switch t[len(t)-1] {
		case 'k':
			shift = 10
		case 'm':
			shift = 20
		case 'g':
			shift = 30
		case 't':
			shift = 40
		}
		if shift > 0 {
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return fmt.Errorf("%s: want a positive size such as 512M or 2G", echo.Quote(v))
	}
	*s = sizeFlag(n << shift)
	return nil
}

func (s *sizeFlag) Type() string { return "size" }
