package mysqlfront

import "strings"

// likeMatch reports whether s matches the SQL LIKE pattern p (`%` any run,
// `_` one character, `\` escapes), case-insensitively as MySQL's default
// collation compares.
func likeMatch(p, s string) bool {
	return likeRunes([]rune(strings.ToLower(p)), []rune(strings.ToLower(s)))
}

func likeRunes(p, s []rune) bool {
	for len(p) > 0 {
		switch p[0] {
		case '%':
			for len(p) > 0 && p[0] == '%' {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if likeRunes(p, s[i:]) {
					return true
				}
			}
			return false
		case '_':
			if len(s) == 0 {
				return false
			}
			p, s = p[1:], s[1:]
		default:
			c := p[0]
			if c == '\\' && len(p) > 1 {
				p = p[1:]
				c = p[0]
			}
			if len(s) == 0 || s[0] != c {
				return false
			}
			p, s = p[1:], s[1:]
		}
	}
	return len(s) == 0
}
