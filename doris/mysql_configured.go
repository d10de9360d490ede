package doris

// MySQLConfigured reports whether the client has an FE MySQL address
// (Config.MySQL): only then can TransactionByLabel, TransactionByID and
// TransactionsByLabelLike answer. The loader asks it before it relies on
// SHOW TRANSACTION for its identity checks (loader.TxnInspector).
func (c *Client) MySQLConfigured() bool { return c.cfg.MySQL != "" }
