package mysqlfront

import (
	"bytes"
	"errors"
	"fmt"

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

// errAccessDenied is Doris's answer to a failed login: ErrorCode
// ERR_ACCESS_DENIED_ERROR (1045, 28000) "Access denied for user '%s'
// (using password: %s)" with user@ip as one argument, reported as is (no
// errCode prefix). An unknown user and a clear-text password always say YES;
// a native password says NO when the client sent none (fe ErrorCode.java,
// mysql/privilege/UserManager.java checkPasswordInternal,
// mysql/authenticate/DefaultAuthenticator.java).
func errAccessDenied(user, host string, usingPassword bool) *mysql.MyError {
	using := "NO"
	if usingPassword {
		using = "YES"
	}
	return mysql.NewError(mysql.ER_ACCESS_DENIED_ERROR,
		fmt.Sprintf("Access denied for user '%s@%s' (using password: %s)", user, host, using))
}

// authHandler gives go-mysql the credential of a user from the Backend. One
// is made per connection: host is the client's IP (for the access-denied
// text) and conn the connection's handler.
type authHandler struct {
	b    Backend
	host string
	conn *connHandler
}

// GetCredential implements server.AuthenticationHandler. An unknown user is
// refused here with Doris's message (go-mysql would answer 1449 "The user
// specified as a definer does not exist").
func (h authHandler) GetCredential(user string) (server.Credential, bool, error) {
	if pl, ok := h.b.(PasswordLookup); ok {
		pw, found := pl.Password(user)
		if !found {
			return server.Credential{}, false, errAccessDenied(user, h.host, true)
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

// OnAuthSuccess implements server.AuthenticationHandler: it checks the
// database the client asked for in the handshake, after the password as
// Doris does (MysqlProto.negotiate), and opens the connection to commands.
func (h authHandler) OnAuthSuccess(*server.Conn) error {
	if h.conn == nil {
		return nil
	}
	return h.conn.authenticated()
}

// OnAuthFailure implements server.AuthenticationHandler.
func (authHandler) OnAuthFailure(*server.Conn, error) {}

// authProvider verifies passwords for go-mysql. It answers Doris's
// access-denied errors and never hands go-mysql an empty stored password
// with a non-empty scramble (go-mysql v1.16.0 then indexes an empty hash in
// mysql/util.go DecodePasswordHex and panics).
type authProvider struct{ b Backend }

// Authenticate implements server.AuthenticationProvider.
func (p authProvider) Authenticate(c *server.Conn, plugin string, data []byte) error {
	user, host := c.GetUser(), hostOf(c.RemoteAddr())
	switch plugin {
	case mysql.AUTH_CLEAR_PASSWORD:
		pw := string(bytes.TrimRight(data, "\x00"))
		if p.b.CheckPassword(user, pw) {
			return nil
		}
		return errAccessDenied(user, host, true)
	case mysql.AUTH_NATIVE_PASSWORD:
		empty := len(data) == 0 || (len(data) == 1 && data[0] == 0)
		if p.storedPassword(user) == "" {
			// Doris compares the scramble's length with the stored hash's:
			// any scramble fails against an empty password.
			if empty {
				return nil
			}
			return errAccessDenied(user, host, true)
		}
		if empty {
			return errAccessDenied(user, host, false)
		}
		err := (&server.DefaultAuthenticationProvider{}).Authenticate(c, plugin, data)
		if errors.Is(err, server.ErrAccessDenied) {
			return errAccessDenied(user, host, true)
		}
		return err
	}
	return errAccessDenied(user, host, true)
}

// storedPassword is the password GetCredential gave for user: the
// PasswordLookup's, or "" (without it, native is only offered to users
// whose password is empty).
func (p authProvider) storedPassword(user string) string {
	if pl, ok := p.b.(PasswordLookup); ok {
		pw, _ := pl.Password(user)
		return pw
	}
	return ""
}

// Validate implements server.AuthenticationProvider.
func (authProvider) Validate(plugin string) bool {
	return plugin == mysql.AUTH_NATIVE_PASSWORD || plugin == mysql.AUTH_CLEAR_PASSWORD
}
