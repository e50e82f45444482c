// Package assistant is the domain of the assistant service: the knowledge
// entities the assistant cites, citation tokens, citation events, the error
// vocabulary shared by every surface, and the storage interfaces that the
// adapters (internal/sqlite, internal/postgres) implement and that
// internal/storetest holds them to.
//
// It depends on the standard library only. Everything else in the module
// depends on it, never the other way round.
package assistant
