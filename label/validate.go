package label

import "fmt"

// Regexp is Doris's rule for a load label with the default
// label_regex_length of 128 (FE FeNameFormat, docs/doris-facts.md §4). Doris
// rejects any other label with "Label format error. regex: <Regexp>, label:
// <label>".
const Regexp = `^[-_A-Za-z0-9:]{1,128}$`

// Length bounds of a label and of its fields. They add up to MaxLen:
// MaxPrefixLen + MaxTableTagLen + MaxScopeLen + MaxCheckpointLen + 3
// separators = 128.
const (
	// MaxLen is Doris's default label_regex_length (docs/doris-facts.md §4).
	MaxLen = 128
	// MaxTableTagLen bounds a verbatim table tag ("db-table"); longer pairs
	// are hashed into a 17-character tag.
	MaxTableTagLen = 40
	// MaxScopeLen bounds the writer-instance name.
	MaxScopeLen = 16
	// MaxCheckpointLen is the number of decimal digits of the largest
	// uint64 (18446744073709551615).
	MaxCheckpointLen = 20
	// MaxPrefixLen is the room left for the job name (49).
	MaxPrefixLen = MaxLen - MaxTableTagLen - MaxScopeLen - MaxCheckpointLen - 3
)

// Validate reports whether l satisfies Doris's label rule Regexp. The error
// names the label and says which character or which length is wrong.
func Validate(l string) error {
	if l == "" {
		return &Error{Field: "label", Input: l, Reason: "empty; Doris requires " + Regexp}
	}
	if len(l) > MaxLen {
		return &Error{Field: "label", Input: l, Reason: fmt.Sprintf(
			"%d characters, Doris allows at most %d (%s)", len(l), MaxLen, Regexp)}
	}
	for i := 0; i < len(l); i++ {
		if c := l[i]; !isNameByte(c) && c != ':' {
			return &Error{Field: "label", Input: l, Reason: fmt.Sprintf(
				"character %s at byte %d is not allowed; Doris requires %s", describeByte(l, i), i, Regexp)}
		}
	}
	return nil
}

// ValidatePrefix reports whether p can be a label prefix (the job name):
// 1..MaxPrefixLen characters of [A-Za-z0-9_-]. The error says what is
// allowed and how much room the other label fields leave.
func ValidatePrefix(p string) error {
	return validateName("prefix", p, MaxPrefixLen, fmt.Sprintf(
		"a label is at most %d characters and table tag, scope, checkpoint and separators take up to %d",
		MaxLen, MaxLen-MaxPrefixLen))
}

// ValidateScope reports whether s can be a scope (writer instance name):
// 1..MaxScopeLen characters of [A-Za-z0-9_-].
func ValidateScope(s string) error {
	return validateName("scope", s, MaxScopeLen, "")
}

func validateName(field, s string, maxLen int, why string) error {
	allowed := fmt.Sprintf("1 to %d characters of [A-Za-z0-9_-]", maxLen)
	if why != "" {
		allowed += " (" + why + ")"
	}
	if s == "" {
		return &Error{Field: field, Input: s, Reason: "empty; want " + allowed}
	}
	if len(s) > maxLen {
		return &Error{Field: field, Input: s, Reason: fmt.Sprintf(
			"%d characters, %d too many; want %s", len(s), len(s)-maxLen, allowed)}
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return &Error{Field: field, Input: s, Reason: fmt.Sprintf(
				"character %s at byte %d is not allowed; want %s", describeByte(s, i), i, allowed)}
		}
	}
	return nil
}

// isNameByte reports whether c is in [A-Za-z0-9_-].
func isNameByte(c byte) bool {
	return c == '-' || isWordByte(c)
}

// isWordByte reports whether c is in [A-Za-z0-9_].
func isWordByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// describeByte quotes the character starting at byte i of s (a whole UTF-8
// rune when it is one).
func describeByte(s string, i int) string {
	for j, r := range s[i:] {
		if j == 0 {
			return fmt.Sprintf("%q", r)
		}
	}
	return fmt.Sprintf("%q", s[i])
}
