package custody

// SetPrepared runs fn after each write's decision is prepared (ahead says
// whether it could be decided ahead) and before its transaction (see
// prepare.go), so that a test can change the store between the two.
func SetPrepared(s *Service, fn func(ahead bool)) { s.prepared = fn }
