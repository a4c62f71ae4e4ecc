package transport

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/writepath/writepath/internal/echo"
)

// resolveTimeout bounds the name lookup of CheckPlaintext.
const resolveTimeout = 2 * time.Second

// CheckPlaintext refuses to dial target in plaintext unless it is on this
// host (a loopback address, a name resolving only to loopback, a unix
// socket) or insecure is set: across hosts plaintext hands a worker's jobs
// (passwords included) and the bearer token to the network. Call it
// before dialling without TLS.
func CheckPlaintext(ctx context.Context, target string, insecure bool) error {
	if insecure {
		return nil
	}
	host, local, err := isLocal(ctx, target)
	if local {
		return nil
	}
	why := "is not on this host"
	if err != nil {
		why = fmt.Sprintf("may not be on this host (%s)", echo.Clip(err.Error()))
	}
	return fmt.Errorf("coordinator %s %s: plaintext would carry jobs and tokens across the network; "+
		"give --tls-cert/--tls-key/--tls-ca, or --insecure to dial it in plaintext anyway", echo.Quote(host), why)
}

// isLocal reports whether target names this host.
func isLocal(ctx context.Context, target string) (string, bool, error) {
	if strings.HasPrefix(target, "unix:") || strings.HasPrefix(target, "unix-abstract:") {
		return target, true, nil
	}
	if _, rest, ok := strings.Cut(target, ":///"); ok { // dns:///host:port, passthrough:///...
		target = rest
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		host = target
	}
	host = strings.Trim(host, "[]")
	switch {
	case host == "":
		return target, true, nil // ":7470" dials this host
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return host, true, nil
	}
	if ip := net.ParseIP(host); ip != nil {
		return host, ip.IsLoopback(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return host, false, err
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return host, false, nil
		}
	}
	return host, len(addrs) > 0, nil
}
