package fio

import (
	"fmt"
	"strconv"
)

var (
	siPrefix  = []string{"", "k", "M", "G", "T", "P", "E"}
	iecPrefix = []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
)

// num2str renders num in at most maxlen digits with a unit prefix, as
// fio's lib/num2str.c does ("36.8k", "144MiB", "8192KiB"): divide by the
// base until the integer part fits, then spend the remaining width on
// decimals when at least two places are free.
func num2str(num uint64, maxlen int, pow2 bool, unit string) string {
	base, prefix := uint64(1000), siPrefix
	if pow2 {
		base, prefix = 1024, iecPrefix
	}
	post, modulo, divided := 0, uint64(0), false
	for len(strconv.FormatUint(num, 10)) > maxlen && post < len(prefix)-1 {
		modulo = num % base
		num /= base
		post++
		divided = true
	}
	if !divided {
		return fmt.Sprintf("%d%s%s", num, prefix[post], unit)
	}
	decimals := maxlen - len(strconv.FormatUint(num, 10))
	if decimals <= 1 {
		if modulo >= base/2 {
			num++
		}
		return fmt.Sprintf("%d%s%s", num, prefix[post], unit)
	}
	frac := fmt.Sprintf("%.*f", decimals-1, float64(modulo)/float64(base))
	if frac[0] == '1' { // rounded up to a whole unit
		num++
		frac = fmt.Sprintf("%.*f", decimals-1, 0.0)
	}
	return fmt.Sprintf("%d.%s%s%s", num, frac[2:], prefix[post], unit)
}
