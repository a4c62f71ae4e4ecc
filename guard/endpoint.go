package guard

import (
	"fmt"
	"net"
	"slices"
	"strings"
)

// endpoint normalises an --allow-mysql entry: "host:port" (host lower
// case) or a socket path, resolved.
func endpoint(cwd, e string) (string, error) {
	if strings.Contains(e, "/") {
		return resolve(cwd, e)
	}
	host, port, err := net.SplitHostPort(e)
	if err != nil || host == "" || port == "" {
		return "", fmt.Errorf("want HOST:PORT or a socket path")
	}
	return net.JoinHostPort(strings.ToLower(host), port), nil
}

// endpoint allows a database server by default when it is on loopback
// (an IP literal or "localhost") or a socket inside an allowed root; any
// other needs --allow-mysql.
func (p *Policy) endpoint(name string) error {
	if strings.HasPrefix(name, "/") {
		r, err := resolve("/", name)
		if err != nil {
			return fmt.Errorf("socket %s: %w", name, err)
		}
		if slices.Contains(p.endpoints, r) {
			return nil
		}
		if _, err := p.Path(r); err == nil {
			return nil
		}
		return fmt.Errorf("socket %s (%s): %w (outside the allowed paths; allow it with --allow-mysql %s)", name, r, ErrNotAllowed, r)
	}
	norm, err := endpoint("/", name)
	if err != nil {
		return fmt.Errorf("database endpoint %q: %w", name, err)
	}
	host, _, _ := net.SplitHostPort(norm)
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	if slices.Contains(p.endpoints, norm) {
		return nil
	}
	return fmt.Errorf("database endpoint %s: %w (not on loopback; allow it with --allow-mysql %s)", norm, ErrNotAllowed, norm)
}
