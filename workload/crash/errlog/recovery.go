package errlog

// Recovery is what the error log says about one server start: which
// markers appeared, when they arrived, and the redo figures they carry.
type Recovery struct {
	// Crash is true when a crash-recovery marker appeared: InnoDB's
	// "Starting crash recovery", MySQL's "not shutdown normally", or
	// transactions left to roll back (MariaDB's rollback-only recovery
	// prints no "Starting crash recovery" line).
	Crash bool `json:"crash"`
	// ProcessStart, RecoveryStart, RedoApplied and Ready are the timeline's
	// log points; nil when the line did not appear.
	ProcessStart  *Event `json:"process_start,omitempty"`
	RecoveryStart *Event `json:"recovery_start,omitempty"`
	RedoApplied   *Event `json:"redo_applied,omitempty"`
	Ready         *Event `json:"ready,omitempty"`
	// CheckpointLSN is where redo replay started; EndLSN the end of the
	// redo log; RedoSpan = EndLSN - CheckpointLSN (0 when either is unknown).
	CheckpointLSN uint64 `json:"checkpoint_lsn,omitempty"`
	EndLSN        uint64 `json:"end_lsn,omitempty"`
	RedoSpan      uint64 `json:"redo_span,omitempty"`
	// Batches counts recovery batches (MariaDB "To recover" lines, MySQL
	// "Applying a batch"); MultiBatch is MariaDB's "Multi-batch recovery
	// needed" (the buffer pool could not hold all pages at once).
	Batches    int  `json:"batches,omitempty"`
	MultiBatch bool `json:"multi_batch,omitempty"`
	// PagesToRecover sums the pages of every MariaDB batch; RedoRecords
	// sums MySQL's redo records per batch.
	PagesToRecover int64 `json:"pages_to_recover,omitempty"`
	RedoRecords    int64 `json:"redo_records,omitempty"`
	// RollbackTrx is the number of recovered transactions to roll back.
	RollbackTrx int64 `json:"rollback_trx,omitempty"`
	// OtherReady counts ready lines on another port (0: an init server).
	OtherReady int `json:"other_ready,omitempty"`
	// Events are every matched line of this start, in log order.
	Events []Event `json:"events"`
}

// Scanner folds events into a Recovery. It keeps the last start when the
// input holds several (an init server, then the real one).
type Scanner struct {
	// Port is the instance's real port: only a ready line on it counts.
	// 0 accepts any non-zero port.
	Port int
	// Socket, if set, also makes a ready line on it count: a server
	// without TCP reports port 0, as a temporary init server does.
	Socket string
	rec    Recovery
	// at holds indexes into rec.Events of the timeline points (-1: none),
	// because the slice moves as it grows.
	at struct{ start, recov, redo, ready int }
}

// none marks a timeline point not seen yet.
const none = -1

func (s *Scanner) reset() {
	s.rec = Recovery{}
	s.at.start, s.at.recov, s.at.redo, s.at.ready = none, none, none, none
}

// Add folds one event in.
func (s *Scanner) Add(ev Event) {
	if s.rec.Events == nil || ev.Marker == MarkProcessStart && s.at.start != none {
		s.reset() // first event, or a later start of the server: keep only it
	}
	s.rec.Events = append(s.rec.Events, ev)
	i := len(s.rec.Events) - 1
	switch ev.Marker {
	case MarkProcessStart:
		s.at.start = i
	case MarkNotShutdownNormally, MarkRecoveryStart:
		s.recoveryStart(i)
	case MarkRollback:
		s.rollback(i)
	case MarkCheckpoint:
		// MySQL prints the explicit checkpoint_lsn before "progressed past
		// the checkpoint LSN" (which names where parsing began): first wins.
		if s.rec.CheckpointLSN == 0 {
			s.rec.CheckpointLSN = ev.LSN
		}
	case MarkEndOfLog:
		s.rec.EndLSN = max(s.rec.EndLSN, ev.LSN)
	default:
		s.progress(i)
	}
}

func (s *Scanner) recoveryStart(i int) {
	s.rec.Crash = true
	if s.at.recov == none {
		s.at.recov = i
	}
	if lsn := s.rec.Events[i].LSN; lsn != 0 {
		s.rec.CheckpointLSN = lsn
	}
}

func (s *Scanner) rollback(i int) {
	n := s.rec.Events[i].Count
	if n == 0 {
		return // progress of a rollback already counted
	}
	s.rec.RollbackTrx += n
	s.recoveryStart(i)
}

// progress handles batches, redo-applied and ready lines.
func (s *Scanner) progress(i int) {
	ev := s.rec.Events[i]
	switch ev.Marker {
	case MarkMultiBatch:
		s.rec.MultiBatch = true
	case MarkToRecover:
		s.rec.Batches++
		s.rec.PagesToRecover += ev.Count
		s.rec.EndLSN = max(s.rec.EndLSN, ev.EndLSN)
	case MarkApplyBatch:
		s.rec.Batches++
		s.rec.RedoRecords += ev.Count
	case MarkApplyDone:
		// Also printed on clean starts: it marks the end of redo only
		// after a recovery start.
		if s.rec.Crash {
			s.at.redo = i
		}
	case MarkInnoDBStarted:
		if s.at.redo == none || s.rec.Events[s.at.redo].Marker != MarkApplyDone {
			s.at.redo = i
		}
	case MarkReady:
		s.ready(i)
	}
}

func (s *Scanner) ready(i int) {
	port := s.rec.Events[i].Port
	ok := port > 0 && (port == s.Port || s.Port == 0) || s.Socket != "" && s.rec.Events[i].Socket == s.Socket
	if !ok || s.at.ready != none {
		s.rec.OtherReady++
		return
	}
	s.at.ready = i
}

// Recovery returns the summary so far, with the redo span computed. The
// returned value shares nothing with the Scanner.
func (s *Scanner) Recovery() Recovery {
	r := s.rec
	r.Events = append([]Event(nil), s.rec.Events...)
	at := func(i int) *Event {
		if i == none || r.Events == nil {
			return nil
		}
		return &r.Events[i]
	}
	r.ProcessStart, r.RecoveryStart = at(s.at.start), at(s.at.recov)
	r.RedoApplied, r.Ready = at(s.at.redo), at(s.at.ready)
	if r.CheckpointLSN != 0 && r.EndLSN >= r.CheckpointLSN {
		r.RedoSpan = r.EndLSN - r.CheckpointLSN
	}
	return r
}

// Scan folds a list of events (ParseLog's) into a Recovery for port.
func Scan(events []Event, port int) Recovery {
	s := Scanner{Port: port}
	for _, ev := range events {
		s.Add(ev)
	}
	return s.Recovery()
}
