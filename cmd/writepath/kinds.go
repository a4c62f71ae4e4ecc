package main

import (
	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/workload"
)

// kindOf is what client reads of the kind named name, from its Meta: the
// readers link no kind. A name this binary does not link (a stored run
// of another build's kind) reads as the zero Kind: I/O operations.
func kindOf(name string) client.Kind {
	m, ok := workload.ByName(name)
	if !ok {
		return client.Kind{}
	}
	return clientKind(m)
}

func clientKind(m workload.Meta) client.Kind {
	return client.Kind{Txn: m.Tables.Txn, Unit: m.Tables.Unit, Columns: m.Tables.Columns, Figures: m.Figures}
}
