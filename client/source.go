package client

import (
	"context"
	"fmt"
	"os"

	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/coordinator/store"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// Source is where stored runs are read from: a coordinator, or a store
// file opened directly when no coordinator runs.
type Source interface {
	ListRuns(ctx context.Context, limit int) ([]*writepathv1.Run, error)
	// GetRun returns a run with its merged intervals and worker snapshots.
	GetRun(ctx context.Context, id string) (*writepathv1.GetRunResponse, error)
	Close() error
}

var (
	_ Source = (*Client)(nil)
	_ Source = (*File)(nil)
)

// ListRuns lists the coordinator's runs, newest first.
func (c *Client) ListRuns(ctx context.Context, limit int) ([]*writepathv1.Run, error) {
	resp, err := c.ctl.ListRuns(ctx, &writepathv1.ListRunsRequest{Limit: uint32(limit)})
	if err != nil {
		return nil, rpcErr("list runs", err)
	}
	return resp.GetRuns(), nil
}

// GetRun reads a run and everything stored with it.
func (c *Client) GetRun(ctx context.Context, id string) (*writepathv1.GetRunResponse, error) {
	resp, err := c.ctl.GetRun(ctx, &writepathv1.GetRunRequest{RunId: id, Intervals: true, WorkerIntervals: true})
	if err != nil {
		return nil, rpcErr("run "+id, err)
	}
	return resp, nil
}

// File reads a store file directly.
type File struct{ st *store.Store }

// OpenFile opens a store file. It fails (after a second) while a
// coordinator holds the file: read through that coordinator instead.
func OpenFile(path string) (*File, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no store at %s (pass --db FILE or --coordinator ADDR): %w", path, err)
	}
	st, err := store.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w (if a coordinator is using it, pass --coordinator)", err)
	}
	return &File{st: st}, nil
}

// ListRuns lists the file's runs, newest first.
func (f *File) ListRuns(_ context.Context, limit int) ([]*writepathv1.Run, error) {
	return f.st.ListRuns(limit)
}

// GetRun reads a run and everything stored with it.
func (f *File) GetRun(_ context.Context, id string) (*writepathv1.GetRunResponse, error) {
	return coordinator.ReadRun(f.st, &writepathv1.GetRunRequest{RunId: id, Intervals: true, WorkerIntervals: true})
}

// Close closes the file.
func (f *File) Close() error { return f.st.Close() }
