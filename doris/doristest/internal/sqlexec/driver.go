package sqlexec

import (
	"context"
	"database/sql/driver"
	"sync"

	"modernc.org/sqlite"
)

// The engine opens its connections through a private modernc Driver rather
// than the package-level "sqlite" one, so the Doris dialect functions it
// registers (functions.go) reach only this package's connections and never
// leak into another user of modernc.org/sqlite in the same process.
// Registrations on a Driver live as long as the program (modernc never frees
// them), so the driver is built once; this is the package's only global.
var (
	privateDriverOnce sync.Once
	privateDriver     *sqlite.Driver
	privateDriverErr  error
)

// dialectDriver returns the private driver with the dialect functions
// registered.
func dialectDriver() (*sqlite.Driver, error) {
	privateDriverOnce.Do(func() {
		d := &sqlite.Driver{}
		funcs := dialectFunctions()
		for name, impl := range timeFunctions() {
			funcs[name] = impl
		}
		for name, impl := range funcs {
			if err := d.RegisterFunction(name, impl); err != nil {
				privateDriverErr = err
				return
			}
		}
		if err := d.RegisterCollationUtf8(datetimeCollation, compareDatetime); err != nil {
			privateDriverErr = err
			return
		}
		if err := d.RegisterModule(moduleName, vtabModule{}); err != nil {
			privateDriverErr = err
			return
		}
		privateDriver = d
	})
	return privateDriver, privateDriverErr
}

// connector opens connections to dsn with drv; it lets sql.OpenDB use the
// private driver without the process-global sql.Register.
type connector struct {
	drv *sqlite.Driver
	dsn string
}

// Connect implements driver.Connector.
func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }

// Driver implements driver.Connector.
func (c connector) Driver() driver.Driver { return c.drv }
