// Package all links every workload kind into a binary. Only commands and
// tests import it.
package all

import ()
