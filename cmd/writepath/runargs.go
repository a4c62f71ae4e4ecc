package main

import "strings"

// splitOwnFlags separates writepath's own flags (named in own, with
// whether each takes a value) from a kind's arguments, which pass through
// untouched in their order. Everything after "--" belongs to the kind.
// Own flags are accepted as --flag=value or --flag value.
func splitOwnFlags(args []string, own map[string]bool) (mine, kind []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return mine, append(kind, args[i+1:]...)
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		takesValue, ok := own[name]
		if !strings.HasPrefix(a, "--") || !ok {
			kind = append(kind, a)
			continue
		}
		mine = append(mine, a)
		if takesValue && !hasValue && i+1 < len(args) {
			i++
			mine = append(mine, args[i])
		}
	}
	return mine, kind
}

// leadingPhases takes the words at the start of args that name phases.
func leadingPhases(args []string, isPhase func(string) bool) (phases, rest []string) {
	i := 0
	for i < len(args) && isPhase(args[i]) {
		i++
	}
	return args[:i], args[i:]
}
