package oltp

// The campaign planner (and the crash kind) name a managed server's
// options --binary and --set; the oltp kind has spelt them --mysqld-binary
// and --mysqld-set since before campaigns. Both spellings fill the same
// Spec.Server, so a campaign's server settings reach an oltp run's spec.
// Kept in an init of its own file so args.go's table stays sysbench's.
func init() {
	options["binary"] = options["mysqld-binary"]
	options["set"] = options["mysqld-set"]
}
