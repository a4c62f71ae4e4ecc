// Package all links every workload kind into a binary. Only commands and
// tests import it.
package all

import (
	_ "github.com/writepath/writepath/workload/crash" // crash-recovery timing rounds
	_ "github.com/writepath/writepath/workload/fio"   // fio-equivalent direct-IO jobs
	_ "github.com/writepath/writepath/workload/oltp"  // sysbench oltp_write_only (crash links it too; named here so no kind depends on another to be registered)
)
