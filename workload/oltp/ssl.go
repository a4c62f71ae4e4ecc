package oltp

import (
	"context"
	"crypto/tls"
	"fmt"
)

// checkSSL is --mysql-ssl. sysbench's client then encrypts if the server
// offers TLS and connects in plaintext if it does not (libmariadb's
// behaviour without an SSL mode). writepath's client cannot encrypt: after
// login its run phase reads and writes the socket itself. So a phase logs
// in once with TLS preferred and asks the server whether the session is
// encrypted: if it is, the phase is refused, saying why; if not, it goes
// on in plaintext, as sysbench's would.
func checkSSL(ctx context.Context, c ConnOptions) error {
	if !c.SSL {
		return nil
	}
	cfg := mysqlConfig(c, false)
	// Only to learn whether the server speaks TLS: nothing is sent over it.
	cfg.TLS = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // see above
	cfg.AllowFallbackToPlaintext = true
	cn, err := dialConfig(ctx, cfg)
	if err != nil {
		return connectError(c, err)
	}
	defer cn.close()
	v, err := cn.queryStrings("SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'SSL_CIPHER'")
	if err != nil {
		v, err = cn.queryStrings("SELECT VARIABLE_VALUE FROM performance_schema.session_status WHERE VARIABLE_NAME = 'Ssl_cipher'")
	}
	if err != nil {
		return fmt.Errorf("--mysql-ssl: ask %s whether it speaks TLS: %w", c.where(), err)
	}
	if len(v) > 0 && v[0] != "" {
		return fmt.Errorf("--mysql-ssl: the server at %s offers TLS (%s), which writepath's MySQL client does not speak (after login its run phase drives the socket itself); connect without --mysql-ssl", c.where(), v[0])
	}
	return nil
}
