package postgres

// EmptyLeads is how many times a writer slot was taken with no write
// queued (writer.go).
func (s *Store) EmptyLeads() int64 { return s.emptyLeads.Load() }

// Queued is how many writes wait for a batch.
func (s *Store) Queued() int { return len(s.queue) }

// SetAhead says whether the writer first runs a batch ahead, in one
// round trip (ahead.go).
func SetAhead(s *Store, on bool) { s.noAhead = !on }
