package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// A chat turn's write (RecordTurn) runs the same few INSERTs every time:
// the usage rows and the citation events of the turns in a batch, one
// statement per table whose text depends only on the number of rows.
// Executed as text, SQLite parses and plans each of them again (about a
// third of the write's CPU). stmtCache keeps them prepared: each query
// text is prepared once on the database and, by database/sql, once per
// connection it runs on; a transaction runs it through Tx.StmtContext.
// The statements are the same SQL with the same arguments, so what is
// stored is the same.

// maxPreparedStatements bounds the statements kept prepared. The turn
// writes need one per row count seen (a batch of 64 turns at most, each
// with a few citations); a query past the bound runs as text.
const maxPreparedStatements = 64

// stmtCache holds prepared statements by query text.
type stmtCache struct {
	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	closed bool
}

// get returns the statement of query, preparing it on db the first time,
// or nil when the cache is full or closed, or the statement fails to
// prepare (the caller then runs the query as text, which reports any
// error).
func (c *stmtCache) get(ctx context.Context, db *sql.DB, query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[query]; ok || c.closed || len(c.stmts) >= maxPreparedStatements {
		return st
	}
	st, err := db.PrepareContext(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil
	}
	if c.stmts == nil {
		c.stmts = map[string]*sql.Stmt{}
	}
	c.stmts[query] = st
	return st
}

// close closes every statement; get prepares none after it.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts, c.closed = nil, true
}

// preparedTx runs a transaction's statements through the DB's prepared
// statements (an execer, as insertUsage and insertCitations take).
type preparedTx struct {
	s  *DB
	tx *sql.Tx
}

// ExecContext runs query in the transaction, prepared when the cache
// holds or takes it.
func (p preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := p.s.stmts.get(ctx, p.s.db, query); st != nil {
		return p.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return p.tx.ExecContext(ctx, query, args...)
}
