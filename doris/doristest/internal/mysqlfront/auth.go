package mysqlfront

import (
	"bytes"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
)

// PasswordLookup may be implemented by a Backend that can reveal a user's
// password. mysql_native_password (the default of Doris FE and of every
// MySQL client) proves the password with a salted hash, which cannot be
// checked by Backend.CheckPassword alone. Without PasswordLookup:
//   - a user for whom CheckPassword(user, "") holds logs in with an empty
//     password over mysql_native_password;
//   - any other user is asked to switch to mysql_clear_password and the
//     plain password is checked with CheckPassword. Clients must allow it
//     (go-sql-driver: allowCleartextPasswords=true; mysql CLI:
//     --enable-cleartext-plugin).
type PasswordLookup interface {
	// Password returns the password of user and whether the user exists.
	Password(user string) (password string, ok bool)
}

// authHandler gives go-mysql the credential of a user from the Backend.
type authHandler struct{ b Backend }

// GetCredential implements server.AuthenticationHandler.
func (h authHandler) GetCredential(user string) (server.Credential, bool, error) {
	if pl, ok := h.b.(PasswordLookup); ok {
		pw, found := pl.Password(user)
		if !found {
			return server.Credential{}, false, nil
		}
		return server.Credential{Passwords: []string{pw}, AuthPluginName: mysql.AUTH_NATIVE_PASSWORD}, true, nil
	}
	if h.b.CheckPassword(user, "") {
		return server.Credential{Passwords: []string{""}, AuthPluginName: mysql.AUTH_NATIVE_PASSWORD}, true, nil
	}
	// The placeholder is never compared: authProvider checks clear-text
	// passwords with Backend.CheckPassword.
	return server.Credential{Passwords: []string{"\x00"}, AuthPluginName: mysql.AUTH_CLEAR_PASSWORD}, true, nil
}

// OnAuthSuccess implements server.AuthenticationHandler.
func (authHandler) OnAuthSuccess(*server.Conn) error { return nil }

// OnAuthFailure implements server.AuthenticationHandler.
func (authHandler) OnAuthFailure(*server.Conn, error) {}

// authProvider verifies mysql_clear_password with Backend.CheckPassword and
// leaves the hashed methods to go-mysql.
type authProvider struct{ b Backend }

// Authenticate implements server.AuthenticationProvider.
func (p authProvider) Authenticate(c *server.Conn, plugin string, data []byte) error {
	if plugin == mysql.AUTH_CLEAR_PASSWORD {
		pw := string(bytes.TrimRight(data, "\x00"))
		if p.b.CheckPassword(c.GetUser(), pw) {
			return nil
		}
		return server.ErrAccessDenied
	}
	return (&server.DefaultAuthenticationProvider{}).Authenticate(c, plugin, data)
}

// Validate implements server.AuthenticationProvider.
func (authProvider) Validate(plugin string) bool {
	return plugin == mysql.AUTH_NATIVE_PASSWORD || plugin == mysql.AUTH_CLEAR_PASSWORD
}
