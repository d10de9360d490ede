// Package doris is a client for Apache Doris: Stream Load with a streamed
// body (FE 307 to a BE, Basic auth re-sent by hand), two-phase commit and
// abort by transaction id or label, label state (get_load_state), and the
// FE MySQL protocol statements a loader needs (SHOW TRANSACTION, SHOW CREATE
// TABLE, ADMIN SHOW FRONTEND CONFIG).
//
// Every Doris answer is parsed: HTTP 200 does not mean success. Refusals come
// back as *LoadError (stream load) or *TxnError (2PC) that match the
// sentinels of this package with errors.Is. A transport failure after a
// request may have reached Doris is "ambiguous" (see IsAmbiguous): the caller
// must look the label up rather than retry blindly.
//
// The facts this package relies on are in docs/doris-facts.md; comments cite its
// sections (§n).
package doris
