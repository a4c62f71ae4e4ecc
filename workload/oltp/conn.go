package oltp

import (
	"context"
	"database/sql/driver"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// conn is one client connection owned by one goroutine: the driver-level
// connection (no database/sql pool, no per-call locks or context watcher)
// and its socket, so that cancelling the owner's context unblocks a
// statement at once by expiring the socket's deadline.
type conn struct {
	dc driver.Conn
	ex driver.Execer
	nc atomic.Pointer[net.Conn] // the socket, set by the dialer
}

// mysqlConfig is the driver configuration for c.
func mysqlConfig(c ConnOptions, withDB bool) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = c.User, c.Password
	if withDB {
		cfg.DBName = c.DB
	}
	if c.Socket != "" {
		cfg.Net, cfg.Addr = "unix", c.Socket
	} else {
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	}
	// Only for the text-protocol fallback: prepared statements never
	// interpolate.
	cfg.InterpolateParams = true
	cfg.Timeout = 10 * time.Second
	// The driver logs every broken connection to stderr; a killed server
	// is an expected event here, counted as a reconnect instead.
	cfg.Logger = quietLogger{}
	if c.Compress {
		_ = cfg.Apply(mysql.EnableCompression(true)) // sets a field; never fails
	}
	return cfg
}

// dial opens a connection. Use interruptOn to make a context end its
// statements. Sockets stay with Go's poller: blocking reads (as
// libmysqlclient does them) were measured slower here, since each of
// dozens of threads blocked in read(2) makes the scheduler hand its P off.
func dial(ctx context.Context, c ConnOptions, withDB bool) (*conn, error) {
	return dialConfig(ctx, mysqlConfig(c, withDB))
}

// dialConfig is dial with a driver configuration.
func dialConfig(ctx context.Context, cfg *mysql.Config) (*conn, error) {
	cn := &conn{}
	var d net.Dialer
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err == nil {
			cn.nc.Store(&nc)
		}
		return nc, err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql config: %w", err)
	}
	dc, err := connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cn.dc = dc
	cn.ex = dc.(driver.Execer)
	return cn, nil
}

// interruptOn expires the socket's deadline when ctx is done, which ends
// a statement in flight at once; the returned stop function detaches it.
// (The driver's own context watcher would cost two channel operations and
// a goroutine wake-up per statement.)
func (c *conn) interruptOn(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		if p := c.nc.Load(); p != nil {
			_ = (*p).SetDeadline(time.Unix(1, 0))
		}
	})
}

// exec runs a text query and returns the rows it affected.
func (c *conn) exec(query string, args ...driver.Value) (int64, error) {
	if len(args) == 0 {
		args = nil
	}
	res, err := c.ex.Exec(query, args) //nolint:staticcheck // the context-free call skips the driver's per-call watcher
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// close ends the connection (COM_QUIT when still healthy).
func (c *conn) close() {
	if c != nil && c.dc != nil {
		_ = c.dc.Close()
	}
}

// queryStrings runs a query and returns the first column of every row.
func (c *conn) queryStrings(query string) ([]string, error) {
	rows, err := c.dc.(driver.Queryer).Query(query, nil) //nolint:staticcheck // see conn.exec
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	var out []string
	for rows.Next(dest) == nil {
		switch v := dest[0].(type) {
		case []byte:
			out = append(out, string(v))
		case string:
			out = append(out, v)
		default:
			out = append(out, fmt.Sprint(v))
		}
	}
	return out, nil
}

// quietLogger drops the driver's log lines.
type quietLogger struct{}

func (quietLogger) Print(...any) {}
