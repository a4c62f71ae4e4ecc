package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/internal/echo"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
)

// Source is where stored runs are read from: a coordinator, or a store
// file opened directly when no coordinator runs. Read a run's results with
// results.Read(ctx, src, id, ...).
type Source interface {
	results.Source
	ListRuns(ctx context.Context, limit int) ([]*writepathv1.Run, error)
	// GetRun returns a run's record.
	GetRun(ctx context.Context, id string) (*writepathv1.Run, error)
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

// GetRun reads a run's record.
func (c *Client) GetRun(ctx context.Context, id string) (*writepathv1.Run, error) {
	resp, err := c.ctl.GetRun(ctx, &writepathv1.GetRunRequest{RunId: id})
	if err != nil {
		return nil, rpcErr("run "+id, err)
	}
	return resp.GetRun(), nil
}

// ReadRun streams a stored run from the coordinator, calling fn per item.
func (c *Client) ReadRun(ctx context.Context, req *writepathv1.ReadRunRequest, fn func(*writepathv1.ReadRunResponse) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream if fn gives up
	stream, err := c.ctl.ReadRun(ctx, req)
	if err != nil {
		return rpcErr("run "+req.GetRunId(), err)
	}
	for {
		item, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return rpcErr("run "+req.GetRunId(), err)
		}
		if err := fn(item); err != nil {
			return err
		}
	}
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

// GetRun reads a run's record from the file.
func (f *File) GetRun(_ context.Context, id string) (*writepathv1.Run, error) {
	r, err := f.st.GetRun(id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", results.ErrRunNotFound, echo.Clip(id))
	}
	return r, err
}

// ReadRun reads a stored run from the file, calling fn per item.
func (f *File) ReadRun(ctx context.Context, req *writepathv1.ReadRunRequest, fn func(*writepathv1.ReadRunResponse) error) error {
	return results.Scan(ctx, f.st, req, fn)
}

// Close closes the file.
func (f *File) Close() error { return f.st.Close() }
