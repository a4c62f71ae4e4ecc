package crash

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// TableCheck is CHECK TABLE's verdict on one table.
type TableCheck struct {
	Table string `json:"table"`
	OK    bool   `json:"ok"`
	// Messages are every row CHECK TABLE returned ("status: OK", or the
	// errors and warnings of a damaged table).
	Messages []string `json:"messages"`
}

// checkTables runs CHECK TABLE on every base table of the current
// database, one by one (a failure of one does not hide the others).
func checkTables(ctx context.Context, db *sql.DB) ([]TableCheck, error) {
	tables, err := baseTables(ctx, db)
	if err != nil {
		return nil, err
	}
	out := make([]TableCheck, 0, len(tables))
	for _, t := range tables {
		c, err := checkTable(ctx, db, t)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

func baseTables(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx,
		"SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' ORDER BY table_name")
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return out, nil
}

// checkTable reads CHECK TABLE's (Table, Op, Msg_type, Msg_text) rows: the
// table is OK when the last row is "status OK" and no row is an error.
func checkTable(ctx context.Context, db *sql.DB, table string) (TableCheck, error) {
	rows, err := db.QueryContext(ctx, "CHECK TABLE `"+strings.ReplaceAll(table, "`", "``")+"`")
	if err != nil {
		return TableCheck{}, fmt.Errorf("check table %s: %w", table, err)
	}
	defer rows.Close()
	c := TableCheck{Table: table}
	var lastStatusOK, sawError bool
	for rows.Next() {
		var tbl, op, typ, text string
		if err := rows.Scan(&tbl, &op, &typ, &text); err != nil {
			return c, fmt.Errorf("check table %s: %w", table, err)
		}
		c.Messages = append(c.Messages, typ+": "+text)
		lastStatusOK = strings.EqualFold(typ, "status") && strings.EqualFold(text, "OK")
		sawError = sawError || strings.EqualFold(typ, "error")
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("check table %s: %w", table, err)
	}
	c.OK = lastStatusOK && !sawError
	return c, nil
}
