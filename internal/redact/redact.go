// Package redact blanks secrets in protobuf messages before they are
// shown: every string field marked [debug_redact = true] (the oltp
// connection's password), at any depth, inside google.protobuf.Any values
// too (a run's kind spec), when the Any's type is linked into the binary.
// An Any of a type the binary does not know (a kind of a newer or foreign
// worker, fleetsim's) cannot be searched for secrets, so its bytes are
// dropped and its type name alone is shown; Resolver prints it so. Specs
// stored before passwords left them (runs of older clients) are printed
// without them.
package redact

import (
	"errors"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"
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

// walkAny redacts inside an Any whose type this binary knows, and drops
// the bytes of one it cannot read: what cannot be searched is not shown.
func walkAny(a *anypb.Any) {
	mt, err := protoregistry.GlobalTypes.FindMessageByURL(a.GetTypeUrl())
	if err != nil {
		a.Value = nil
		return
	}
	inner := mt.New().Interface()
	if proto.Unmarshal(a.GetValue(), inner) != nil {
		a.Value = nil
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

// Resolver is protojson's resolver for a message Message returned: the
// types this binary knows, and any other as an empty message, so an Any
// Message emptied prints as its "@type" alone instead of failing the
// whole output ("unable to resolve ...").
var Resolver interface {
	protoregistry.ExtensionTypeResolver
	protoregistry.MessageTypeResolver
} = orEmpty{protoregistry.GlobalTypes}

type orEmpty struct{ *protoregistry.Types }

func (r orEmpty) FindMessageByURL(url string) (protoreflect.MessageType, error) {
	mt, err := r.Types.FindMessageByURL(url)
	if errors.Is(err, protoregistry.NotFound) {
		return (&emptypb.Empty{}).ProtoReflect().Type(), nil
	}
	return mt, err
}
