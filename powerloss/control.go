package powerloss

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
)

// The control channel is one unix-socket connection carrying JSON lines:
// each request gets exactly one response line, in order.
//
//	{"cmd":"stats"}                       -> {"ok":true,"stats":{...}}
//	{"cmd":"sync"}                        -> make everything durable now
//	{"cmd":"cut","torn":true,"seed":42}   -> {"ok":true,"cut":{...}}, then the server unmounts and exits
//	{"cmd":"unmount"}                     -> sync, unmount, exit
//
// Closing the connection is "unmount" without the answer.
type request struct {
	Cmd string `json:"cmd"`
	CutOptions
}

type response struct {
	OK    bool       `json:"ok"`
	Error string     `json:"error,omitempty"`
	Stats *Stats     `json:"stats,omitempty"`
	Cut   *CutReport `json:"cut,omitempty"`
	Lazy  bool       `json:"lazy,omitempty"` // the unmount was lazy: something still had the mount busy
}

// serveConn answers requests until the client ends the session.
func (s *server) serveConn(ctx context.Context, conn net.Conn) error {
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	in := bufio.NewScanner(conn)
	enc := json.NewEncoder(conn)
	for in.Scan() {
		var req request
		resp, done := response{}, false
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			resp.Error = fmt.Sprintf("bad request: %v", err)
		} else {
			resp, done = s.handle(req)
		}
		if err := enc.Encode(resp); err != nil {
			return fmt.Errorf("control reply: %w", err)
		}
		if done {
			return nil
		}
	}
	return nil // hung up, or ctx ended: shutdown syncs and unmounts
}

// handle runs one request; done means the session is over.
func (s *server) handle(req request) (response, bool) {
	switch req.Cmd {
	case "stats":
		st := s.layer.Stats()
		return response{OK: true, Stats: &st}, false
	case "sync":
		if err := s.layer.SyncAll(); err != nil {
			return response{Error: err.Error()}, false
		}
		st := s.layer.Stats()
		return response{OK: true, Stats: &st}, false
	case "cut":
		rep, err := s.layer.Cut(req.CutOptions)
		uerr := s.unmount()
		resp := response{OK: err == nil && uerr == nil, Cut: &rep, Lazy: s.lazy}
		if err != nil || uerr != nil {
			resp.Error = errors.Join(err, uerr).Error()
		}
		return resp, true
	case "unmount":
		if err := s.unmount(); err != nil {
			return response{Error: err.Error(), Lazy: s.lazy}, true
		}
		return response{OK: true, Lazy: s.lazy}, true
	}
	return response{Error: fmt.Sprintf("unknown command %q", req.Cmd)}, false
}
