package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// resolve makes path absolute against base and follows every symlink and
// ".." in order, as the kernel would. Components that do not exist yet are
// taken literally (they cannot be symlinks), so a file a job will create is
// judged by where it would be created.
func resolve(base, path string) (string, error) {
	if !filepath.IsAbs(path) {
		// Not filepath.Join: it would clean ".." lexically, before the
		// symlinks it may follow are resolved.
		path = base + "/" + path
	}
	return walk("/", strings.Split(path, "/"), 0)
}

const maxLinks = 40 // the kernel's MAXSYMLINKS

func walk(prefix string, comps []string, links int) (string, error) {
	for i, c := range comps {
		switch c {
		case "", ".":
			continue
		case "..":
			prefix = filepath.Dir(prefix)
			continue
		}
		next := filepath.Join(prefix, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			prefix = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			prefix = "/"
		}
		return walk(prefix, append(strings.Split(target, "/"), comps[i+1:]...), links)
	}
	return prefix, nil
}
