package fio

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// keywords are fio's reserved words in option values ($pagesize,
// $mb_memory, $ncpus), replaced by this machine's values when the job is
// parsed, as fio's fio_keyword_replace does.
func keywords() [][2]string {
	var si unix.Sysinfo_t
	mb := uint64(0)
	if unix.Sysinfo(&si) == nil {
		mb = uint64(si.Totalram) * uint64(si.Unit) >> 20
	}
	var set unix.CPUSet
	ncpus := 1
	if unix.SchedGetaffinity(0, &set) == nil {
		ncpus = set.Count()
	}
	return [][2]string{
		{"$pagesize", strconv.Itoa(os.Getpagesize())},
		{"$mb_memory", strconv.FormatUint(mb, 10)},
		{"$ncpus", strconv.Itoa(ncpus)},
	}
}

// replaceKeywords substitutes the reserved words in v and reports whether
// any was found (fio then evaluates the value as arithmetic).
func replaceKeywords(v string) (string, bool) {
	if !strings.Contains(v, "$") {
		return v, false
	}
	found := false
	for _, kw := range keywords() {
		if strings.Contains(v, kw[0]) {
			v, found = strings.ReplaceAll(v, kw[0], kw[1]), true
		}
	}
	return v, found
}

// isExpr reports whether v is an arithmetic expression rather than a plain
// number with a unit. fio evaluates only values in parentheses (and,
// through bc, values with a reserved word, which expandValue puts in
// parentheses); a bare "1024*1024" is an expression here only so that
// bareExpr can refuse it, since fio 3.33 reads it as 1024.
func isExpr(v string) bool {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "(") {
		return true
	}
	// A leading sign belongs to the number; a '-' inside bs=4k-8k is a
	// range, which callers split before getting here.
	return strings.ContainsAny(strings.TrimLeft(v, "+-"), "*/+^%") && !strings.HasSuffix(v, "%")
}

// bareExpr refuses, when the job is to run, an expression outside
// parentheses: fio 3.33 reads "1024*1024" as 1024 and "4k*2" as 4096,
// ignoring what follows the first number, and a job pasted from fio must
// not silently do something else here (or what fio did). --parse-only
// accepts it, as fio's does. kilo and bareSec are fioValue's.
func bareExpr(s string, kilo, bareSec bool) error {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "(") {
		return nil
	}
	reads := "no number"
	switch v, pct, ok := fioValue(t, kilo, bareSec); {
	case ok && pct:
		reads = strconv.FormatInt(v, 10) + "%"
	case ok && kilo:
		reads = strconv.FormatInt(v, 10)
	case ok && v <= math.MaxInt64/int64(time.Microsecond) && v >= 0:
		reads = (time.Duration(v) * time.Microsecond).String()
	}
	return runRefusal(fmt.Sprintf("fio 3.33 reads %q as %s: it evaluates arithmetic only in parentheses; write (%s) for the expression", s, reads, t))
}

// evalExpr evaluates an integer expression of + - * / % ^ and parentheses
// over numbers with optional unit suffixes; unit converts one number with
// its suffix (sizes: "4k" is 4096; times: a bare number is unitless).
func evalExpr(s string, unit func(string) (float64, error)) (float64, error) {
	p := &exprParser{s: strings.TrimSpace(s), unit: unit}
	v, err := p.sum()
	if err != nil {
		return 0, err
	}
	p.skip()
	if p.i < len(p.s) {
		return 0, fmt.Errorf("%q: unexpected %q at column %d", s, p.s[p.i:], p.i+1)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: not a finite number", s)
	}
	return v, nil
}

type exprParser struct {
	s     string
	i     int
	depth int
	unit  func(string) (float64, error)
}

func (p *exprParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *exprParser) peek() byte {
	p.skip()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *exprParser) sum() (float64, error) {
	v, err := p.product()
	for err == nil {
		op := p.peek()
		if op != '+' && op != '-' {
			return v, nil
		}
		p.i++
		var r float64
		if r, err = p.product(); op == '+' {
			v += r
		} else {
			v -= r
		}
	}
	return 0, err
}

func (p *exprParser) product() (float64, error) {
	v, err := p.power()
	for err == nil {
		op := p.peek()
		if op != '*' && op != '/' && op != '%' {
			return v, nil
		}
		p.i++
		var r float64
		if r, err = p.power(); err != nil {
			break
		}
		switch {
		case op == '*':
			v *= r
		case r == 0:
			return 0, fmt.Errorf("%q: division by zero", p.s)
		case op == '/':
			v /= r
		default:
			v = math.Mod(v, r)
		}
	}
	return 0, err
}

func (p *exprParser) power() (float64, error) {
	v, err := p.unary()
	if err != nil || p.peek() != '^' {
		return v, err
	}
	p.i++
	e, err := p.power()
	return math.Pow(v, e), err
}

func (p *exprParser) unary() (float64, error) {
	switch p.peek() {
	case '-':
		p.i++
		v, err := p.unary()
		return -v, err
	case '+':
		p.i++
		return p.unary()
	case '(':
		if p.depth++; p.depth > 64 {
			return 0, fmt.Errorf("%q: nested too deeply", p.s)
		}
		p.i++
		v, err := p.sum()
		if err != nil {
			return 0, err
		}
		if p.peek() != ')' {
			return 0, fmt.Errorf("%q: missing )", p.s)
		}
		p.i++
		p.depth--
		return v, nil
	}
	start := p.i
	for p.i < len(p.s) && (isAlnum(p.s[p.i]) || p.s[p.i] == '.') {
		p.i++
	}
	if start == p.i {
		return 0, fmt.Errorf("%q: number expected at column %d", p.s, start+1)
	}
	return p.unit(p.s[start:p.i])
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
