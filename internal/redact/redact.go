// Package redact blanks secrets in protobuf messages before they are
// shown: every string field marked [debug_redact = true] (the oltp
// connection's password), at any depth, inside google.protobuf.Any values
// too (a run's kind spec), when the Any's type is linked into the binary.
// Specs stored before passwords left them (runs of older clients) are
// printed without them.
package redact

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/anypb"
)

// Mask replaces a redacted value.
const Mask = "<redacted>"

// Message returns a copy of m with every secret replaced by Mask; m itself
// is not changed.
func Message[M proto.Message](m M) M {
	c := proto.Clone(m).(M)
	walk(c.ProtoReflect())
	return c
}

func walk(m protoreflect.Message) {
	if a, ok := m.Interface().(*anypb.Any); ok {
		walkAny(a)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case secret(fd) && fd.Kind() == protoreflect.StringKind && !fd.IsList() && !fd.IsMap():
			if v.String() != "" {
				m.Set(fd, protoreflect.ValueOfString(Mask))
			}
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := range l.Len() {
				walk(l.Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				walk(mv.Message())
				return true
			})
		case fd.Message() != nil && !fd.IsList() && !fd.IsMap():
			walk(v.Message())
		}
		return true
	})
}

// walkAny redacts inside an Any whose type this binary knows.
func walkAny(a *anypb.Any) {
	mt, err := protoregistry.GlobalTypes.FindMessageByURL(a.GetTypeUrl())
	if err != nil {
		return
	}
	inner := mt.New().Interface()
	if proto.Unmarshal(a.GetValue(), inner) != nil {
		return
	}
	walk(inner.ProtoReflect())
	if b, err := (proto.MarshalOptions{Deterministic: true}).Marshal(inner); err == nil {
		a.Value = b
	}
}

func secret(fd protoreflect.FieldDescriptor) bool {
	o, ok := fd.Options().(*descriptorpb.FieldOptions)
	return ok && o.GetDebugRedact()
}
