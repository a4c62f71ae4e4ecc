package oltp

import (
	"errors"
	"strings"
	"testing"
)

// TestUserErrorsAreOneActionableLine covers the three problems a user
// meets first: no server, wrong password, no tables.
func TestUserErrorsAreOneActionableLine(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(o *Options)
		want   error
		advice string
	}{
		{"unreachable", func(o *Options) { o.Conn.Socket = "/nonexistent/mysqld.sock" }, ErrUnreachable, "--mysql-socket"},
		{"unreachable tcp", func(o *Options) { o.Conn.Socket, o.Conn.Host, o.Conn.Port = "", "127.0.0.1", 1 }, ErrUnreachable, "--mysql-port"},
		{"access denied", func(o *Options) { o.Conn.Password = "wrong" }, ErrAccessDenied, "--mysql-password"},
		{"no database", func(o *Options) { o.Conn.DB = "wp_no_such_db" }, ErrNoDatabase, "CREATE DATABASE"},
		{"missing tables", func(o *Options) { o.Conn.DB = "mysql" }, ErrNoTable, "prepare"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustOptions(t, testSpec(t, "wp_errors", 2, 100))
			tt.edit(&o)
			_, _, err := runFor(t, t.Context(), o)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Run = %v; want %v", err, tt.want)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, tt.advice) {
				t.Errorf("Run error %q; want one line that mentions %q", msg, tt.advice)
			}
		})
	}
}
