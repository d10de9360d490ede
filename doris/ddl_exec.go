package doris

import (
	"context"
	"fmt"
)

// ExecDDL runs one DDL statement (CREATE TABLE, ALTER TABLE) over the FE
// MySQL protocol. Light schema changes (ADD COLUMN of a value column,
// a longer VARCHAR, on a table with light_schema_change) are done when it
// returns; heavy ones only started (Doris runs them as an ALTER job). The
// statement is sent as is (no arguments): callers build it with
// doris/schema's printer. Errors name the statement's first words, never
// the credentials; Doris refusals carry their sentinel (ErrNotFound,
// ErrUnauthorized).
func (c *Client) ExecDDL(ctx context.Context, stmt string) error {
	db, err := c.mysqlDB()
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		if r := c.mysqlRefused.Swap(nil); r != nil {
			return *r
		}
		return fmt.Errorf("doris: %s: %w", ddlHead(stmt), classifySQL(err))
	}
	return nil
}

// ddlHead is the statement cut to its first 80 bytes, for errors.
func ddlHead(stmt string) string {
	if len(stmt) > 80 {
		return stmt[:80] + "…"
	}
	return stmt
}
