package mysqlstatus

import "errors"

// ErrNoLogSection is returned for SHOW ENGINE INNODB STATUS text without a
// parsable LOG section.
var ErrNoLogSection = errors.New("no LOG section with a log sequence number and last checkpoint")
