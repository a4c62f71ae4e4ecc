package oltp

// stmtKind is one of the statements of oltp_write_only's event().
type stmtKind uint8

const (
	kBegin stmtKind = iota
	kIndexUpdate
	kNonIndexUpdate
	kDelete
	kInsert
	kCommit
	nKinds
)

// step is one statement of a transaction with its arguments.
type step struct {
	kind  stmtKind
	table uint32 // 1-based; 0 for BEGIN and COMMIT
	id, k int64
	// c and pad are this step's own buffers (c for non-index updates and
	// inserts, pad for inserts), refilled in place by every draw.
	c, pad []byte
}

// plan is one transaction of oltp_write_only.lua, drawn ahead of sending:
// the steps in order, with every random choice made in the order
// sysbench makes it, so that a stream of draws maps to the same
// statements on either execution path.
type plan struct {
	steps []step
}

// newPlan lays out the steps o's transactions have; only their tables and
// arguments change from one draw to the next.
func newPlan(o *Options) *plan {
	p := &plan{}
	add := func(k stmtKind) *step {
		p.steps = append(p.steps, step{kind: k})
		return &p.steps[len(p.steps)-1]
	}
	if !o.SkipTrx {
		add(kBegin)
	}
	for range o.IndexUpdates {
		add(kIndexUpdate)
	}
	for range o.NonIndexUpdates {
		add(kNonIndexUpdate).c = []byte(cTemplate)
	}
	for range o.DeleteInserts {
		add(kDelete)
		s := add(kInsert)
		s.c, s.pad = []byte(cTemplate), []byte(padTemplate)
	}
	if !o.SkipTrx {
		add(kCommit)
	}
	return p
}

// draw makes the random choices of one transaction, as event() does: per
// statement group one table (uniform, drawn even when the group is empty),
// then per statement its ids and strings (execute_index_updates,
// execute_non_index_updates, execute_delete_inserts in oltp_common.lua).
func (p *plan) draw(rnd *Rand, o *Options) {
	table := func() uint32 { return rnd.Uniform(1, uint32(o.Tables)) }
	id := func() int64 { return int64(rnd.Default(1, uint32(o.TableSize))) }
	i := 0
	if !o.SkipTrx {
		i++ // BEGIN
	}
	t := table()
	for range o.IndexUpdates {
		s := &p.steps[i]
		s.table, s.id = t, id()
		i++
	}
	t = table()
	for range o.NonIndexUpdates {
		s := &p.steps[i]
		rnd.FillDigits(s.c)
		s.table, s.id = t, id()
		i++
	}
	t = table()
	for range o.DeleteInserts {
		del, ins := &p.steps[i], &p.steps[i+1]
		del.table, ins.table = t, t
		del.id, ins.k = id(), id()
		ins.id = del.id
		rnd.FillDigits(ins.c)
		rnd.FillDigits(ins.pad)
		i += 2
	}
}
