package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

// schemaChange is the SchemaChange fault: while the sinks load, an
// operator changes the tables with light schema changes: ADD COLUMN a
// nullable column (every cycle), and with an even N also lengthens payload
// (MODIFY COLUMN to a longer VARCHAR). Loads precommitted before the change
// and committed after it must still commit (Doris checks the schema at
// commit only for partial updates, docs/doris-facts.md §13); rows are
// compared by column name, so the added columns do not disturb the
// checker. Then more events arrive and the sinks drain.
func (k *campaign) schemaChange(ctx context.Context, st Step) error {
	return k.produceAndSettle(ctx, st, func(ps []*Process) error {
		sleep(ctx, time.Duration(st.Delay)*time.Millisecond)
		if err := k.alterTables(ctx, st); err != nil {
			return err
		}
		return k.produce(ctx, st.Events/2+1, 0)
	})
}

func (k *campaign) alterTables(ctx context.Context, st Step) error {
	db, err := sql.Open("mysql", (&mysql.Config{User: "root", Net: "tcp", Addr: k.c.Doris.MySQLAddr(), DBName: Database,
		AllowNativePasswords: true}).FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	tables := []string{EventsTable, StateTable}
	if st.Table != "" {
		tables = []string{st.Table}
	}
	for _, t := range tables {
		stmt := fmt.Sprintf("ALTER TABLE %s ADD COLUMN chaos_c%d INT NULL", t, st.Cycle)
		if st.N%2 == 0 {
			stmt += fmt.Sprintf(", MODIFY COLUMN payload VARCHAR(%d) NULL", 64+st.Cycle)
		}
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("schema change %q: %w", stmt, err)
		}
	}
	return nil
}
