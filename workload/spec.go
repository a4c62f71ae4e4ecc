package workload

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Bounds every decoded spec must keep, whatever its kind: what a raw spec
// (sent without the CLI, whose parsers bound their inputs) could otherwise
// use to make a worker allocate or loop without limit.
const (
	// MaxSpecString bounds one string field (names, paths, options).
	MaxSpecString = 64 << 10
	// MaxSpecList bounds one repeated field.
	MaxSpecList = 1 << 16
)

// CheckSpec checks m field by field: strings at most MaxSpecString bytes
// and without NUL (no path or name holds one), lists at most MaxSpecList
// entries, enums set to a defined value, floating-point numbers finite.
// Every problem is reported (at most 20), naming the field.
func CheckSpec(m proto.Message) error {
	var errs []error
	walkSpec(m.ProtoReflect(), "", &errs)
	return errors.Join(errs...)
}

func walkSpec(m protoreflect.Message, at string, errs *[]error) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := at + string(fd.Name())
		switch {
		case fd.IsList():
			l := v.List()
			if l.Len() > MaxSpecList {
				addSpecErr(errs, "%s: %d entries; at most %d", name, l.Len(), MaxSpecList)
				return len(*errs) < 20
			}
			for i := range l.Len() {
				checkValue(fd, l.Get(i), fmt.Sprintf("%s[%d]", name, i), errs)
			}
		case fd.IsMap():
			if v.Map().Len() > MaxSpecList {
				addSpecErr(errs, "%s: %d entries; at most %d", name, v.Map().Len(), MaxSpecList)
			}
		default:
			checkValue(fd, v, name, errs)
		}
		return len(*errs) < 20
	})
}

func checkValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, name string, errs *[]error) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		s := v.String()
		if len(s) > MaxSpecString {
			addSpecErr(errs, "%s: %d bytes; at most %d", name, len(s), MaxSpecString)
		} else if strings.IndexByte(s, 0) >= 0 {
			addSpecErr(errs, "%s: contains a NUL byte", name)
		}
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByNumber(v.Enum()) == nil {
			addSpecErr(errs, "%s: %d is not a value of %s", name, v.Enum(), fd.Enum().Name())
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			addSpecErr(errs, "%s: %v is not a finite number", name, f)
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		walkSpec(v.Message(), name+".", errs)
	}
}

func addSpecErr(errs *[]error, format string, a ...any) {
	*errs = append(*errs, fmt.Errorf("spec field "+format, a...))
}
