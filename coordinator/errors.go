package coordinator

import "errors"

// Domain errors. RPC handlers translate them to status codes (control.go).
var (
	// ErrUnknownKind: no connected worker advertises the spec's kind.
	ErrUnknownKind = errors.New("unknown workload kind")
	// ErrBadRequest: the request itself is malformed (no spec, unknown phase).
	ErrBadRequest = errors.New("bad run request")
	// ErrNoWorkers: no connected, idle worker matches the selection.
	ErrNoWorkers = errors.New("no matching workers")
	// ErrRejected: a selected worker refused the spec.
	ErrRejected = errors.New("spec rejected by worker")
	// ErrRunNotFound: no run with that id.
	ErrRunNotFound = errors.New("run not found")
	// ErrClosed: the coordinator is shutting down.
	ErrClosed = errors.New("coordinator closed")
	// ErrLimit: the request would take the coordinator past one of its
	// limits (the message names it).
	ErrLimit = errors.New("limit reached")
	// ErrBadInterval: a worker sent an interval that fails validation.
	ErrBadInterval = errors.New("bad interval")
	// errStale marks an interval that arrived after its phase's merge ended:
	// a race of a slow worker, not a fault, so the worker is not evicted.
	errStale = errors.New("stale")
)

// Campaign errors.
var (
	// ErrCampaignNotFound: no campaign with that id.
	ErrCampaignNotFound = errors.New("campaign not found")
	// errCampaignCancelled is the cause of a cancelled campaign.
	errCampaignCancelled = errors.New("campaign cancelled")
)
