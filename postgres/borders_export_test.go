package postgres

// BorderReads is how many times the store's writer read a tenant's log
// border whole rather than use the one it kept (borders.go).
func (s *Store) BorderReads() int64 { return s.borders.reads.Load() }
