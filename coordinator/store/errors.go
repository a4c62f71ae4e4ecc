package store

import "errors"

var (
	// ErrNotFound is returned for a run or interval that is not stored.
	ErrNotFound = errors.New("not found")
	// ErrSchema is returned when the file has another schema version.
	ErrSchema = errors.New("unsupported store schema")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("store closed")
)
