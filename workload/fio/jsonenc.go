package fio

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// kv is one member of an ordered JSON object.
type kv struct {
	k string
	v any // string, int, int64, uint64, float64, exactFloat, obj, []obj, []int64, []string
}

// exactFloat is a float written in the shortest form that reads back to
// the same bits (fio's "%f" six decimals would round), for the exact
// members of a worker's summary.
type exactFloat float64

// obj is a JSON object whose members keep their order, because fio's JSON
// is read by tools (and people) that expect fio's order and layout.
type obj []kv

// writeJSON writes o the way fio's json.c does: two-space indents,
// `"key" : value`, floats with six decimals. The result is valid JSON.
func writeJSON(w io.Writer, o obj) error {
	bw := bufio.NewWriter(w)
	writeObj(bw, o, 0)
	bw.WriteString("\n")
	return bw.Flush()
}

func writeObj(w *bufio.Writer, o obj, depth int) {
	w.WriteString("{\n")
	if len(o) == 0 {
		w.WriteString("\n") // fio's json.c ends every object's members with a newline
	}
	for i, m := range o {
		indent(w, depth+1)
		w.WriteString(strconv.Quote(m.k))
		w.WriteString(" : ")
		writeValue(w, m.v, depth+1)
		if i < len(o)-1 {
			w.WriteString(",")
		}
		w.WriteString("\n")
	}
	indent(w, depth)
	w.WriteString("}")
}

func writeValue(w *bufio.Writer, v any, depth int) {
	switch x := v.(type) {
	case obj:
		writeObj(w, x, depth)
	case []obj:
		w.WriteString("[\n")
		for i, o := range x {
			indent(w, depth+1)
			writeObj(w, o, depth+1)
			if i < len(x)-1 {
				w.WriteString(",")
			}
			w.WriteString("\n")
		}
		indent(w, depth)
		w.WriteString("]")
	case string:
		w.WriteString(strconv.Quote(x))
	case float64:
		w.WriteString(strconv.FormatFloat(x, 'f', 6, 64))
	case exactFloat:
		w.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 64))
	case []int64:
		w.WriteString("[")
		for i, n := range x {
			if i > 0 {
				w.WriteString(", ")
			}
			w.WriteString(strconv.FormatInt(n, 10))
		}
		w.WriteString("]")
	case []string:
		w.WriteString("[")
		for i, s := range x {
			if i > 0 {
				w.WriteString(", ")
			}
			w.WriteString(strconv.Quote(s))
		}
		w.WriteString("]")
	case int:
		w.WriteString(strconv.Itoa(x))
	case int64:
		w.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		w.WriteString(strconv.FormatUint(x, 10))
	default:
		// Cannot happen: every value is built by this package's report code.
		panic(fmt.Sprintf("fio json: unsupported value %T", v))
	}
}

func indent(w *bufio.Writer, depth int) {
	for i := 0; i < depth; i++ {
		w.WriteString("  ")
	}
}
