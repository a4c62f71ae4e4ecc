package oltp

import (
	"fmt"
	"strings"
)

// createTableSQL is oltp_common.lua's CREATE TABLE for MySQL, byte for byte
// apart from the engine name's case.
func createTableSQL(o Options, n int) string {
	id := "INTEGER NOT NULL"
	if o.AutoInc {
		id = "INTEGER NOT NULL AUTO_INCREMENT"
	}
	key := "PRIMARY KEY"
	if o.Secondary {
		key = "KEY xid" // --secondary: id is a secondary key, InnoDB clusters on its own row id
	}
	return fmt.Sprintf(`CREATE TABLE sbtest%d(
  id %s,
  k INTEGER DEFAULT '0' NOT NULL,
  c CHAR(120) DEFAULT '' NOT NULL,
  pad CHAR(60) DEFAULT '' NOT NULL,
  %s (id)
) /*! ENGINE = %s */ `, n, id, key, o.Engine)
}

// createIndexSQL is the secondary index sysbench adds after the load.
func createIndexSQL(n int) string { return fmt.Sprintf("CREATE INDEX k_%d ON sbtest%d(k)", n, n) }

// dropTableSQL is cleanup's statement.
func dropTableSQL(n int) string { return fmt.Sprintf("DROP TABLE IF EXISTS sbtest%d", n) }

// bulkInsertSQL is a multi-row INSERT of rows rows into table n, with a
// placeholder for every value.
func bulkInsertSQL(n, rows int) string {
	var b strings.Builder
	b.Grow(40 + 10*rows)
	fmt.Fprintf(&b, "INSERT INTO sbtest%d(id, k, c, pad) VALUES ", n)
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?,?)")
	}
	return b.String()
}

// bulkInsert builds multi-row INSERT statements for rows [from, to] of
// table n, appending to buf. Rows carry explicit ids even with auto_inc,
// so that parallel chunks still give every table exactly ids 1..size,
// which run's id draws assume (sysbench gets the same ids by loading each
// table from one thread). k is drawn as sysbench draws it, from the
// --rand-type distribution.
type bulkInsert struct {
	rnd      *Rand
	size     uint32
	c, pad   []byte
	maxBytes int
}

// next appends one INSERT covering rows from.. and returns the statement
// and the first row it did not cover.
func (b *bulkInsert) next(buf []byte, table int, from, to int) ([]byte, int) {
	buf = append(buf[:0], "INSERT INTO sbtest"...)
	buf = appendInt(buf, table)
	buf = append(buf, "(id, k, c, pad) VALUES "...)
	i := from
	for ; i <= to && (i == from || len(buf) < b.maxBytes); i++ {
		if i != from {
			buf = append(buf, ',')
		}
		b.rnd.FillDigits(b.c)
		b.rnd.FillDigits(b.pad)
		buf = append(buf, '(')
		buf = appendInt(buf, i)
		buf = append(buf, ',')
		buf = appendInt(buf, int(b.rnd.Default(1, b.size)))
		buf = append(buf, ",'"...)
		buf = append(buf, b.c...)
		buf = append(buf, "','"...)
		buf = append(buf, b.pad...)
		buf = append(buf, "')"...)
	}
	return buf, i
}

func appendInt(buf []byte, n int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(buf, tmp[i:]...)
}

// quoteIdent quotes a database name for DDL.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
