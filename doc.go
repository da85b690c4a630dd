// Package custody is the domain of a long-term memory server for LLM agents
// that cannot be quietly poisoned.
//
// Every write is a candidate. Its channel comes from the caller's credential,
// never from the content; an admission policy (Cedar) decides whether it is
// admitted, quarantined for review, held for the owner's confirmation or
// rejected, and the decision is kept as a receipt. Retrieval only ever sees
// admitted, unexpired records whose audience includes the subject. Derived
// records keep the lowest authority and the narrowest audience of their
// parents, and withdrawing a source suspends everything built from it. Every
// state transition is an entry in a signed RFC 6962 Merkle log (package tlog),
// written in the same transaction as the change.
//
// The Service type is the entry point: transports (httpapi, mcpserver, the
// CLI) authenticate a caller, resolve the subject, and call it. Storage
// backends (sqlite, postgres) implement Store.
package custody
