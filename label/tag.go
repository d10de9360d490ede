package label

import (
	"crypto/sha256"
	"encoding/hex"
)

// hashTagHexLen is the number of hex digits of a hashed table tag.
const hashTagHexLen = 16

// TableTag returns the label field naming table db.table: "db-table" when
// both names are made of [A-Za-z0-9_] and the result has at most
// MaxTableTagLen characters, else "h" + 16 hex digits of
// SHA-256(db + "\x00" + table). Names are used as given (Doris table names
// are case-sensitive). Distinct pairs give distinct verbatim tags; hashed
// tags differ from every verbatim tag and collide only with probability
// about n²/2⁶⁵ for n hashed tables.
func TableTag(db, table string) string {
	if len(db)+1+len(table) <= MaxTableTagLen && isWord(db) && isWord(table) {
		return db + "-" + table
	}
	return HashTableTag(db, table)
}

// HashTableTag returns the hashed form of the table tag of db.table: "h" +
// 16 hex digits of SHA-256(db + "\x00" + table), 17 characters. TableTag
// returns it for names it cannot take verbatim; BuildSub for a sub-load
// label that would be too long with the verbatim tag.
func HashTableTag(db, table string) string {
	sum := sha256.Sum256([]byte(db + "\x00" + table))
	return "h" + hex.EncodeToString(sum[:])[:hashTagHexLen]
}

// validTableTag reports whether tag is one TableTag can return.
func validTableTag(tag string) bool {
	if len(tag) == 1+hashTagHexLen && tag[0] == 'h' && isLowerHex(tag[1:]) {
		return true
	}
	if len(tag) > MaxTableTagLen {
		return false
	}
	dashes := 0
	for i := 0; i < len(tag); i++ {
		switch c := tag[i]; {
		case c == '-':
			dashes++
		case !isWordByte(c):
			return false
		}
	}
	return dashes == 1
}

func isWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return true
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9') && !('a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
