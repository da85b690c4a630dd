package sqlite

// mmapSize is how much of the database file every connection maps:
// SQLite's own limit (SQLITE_MAX_MMAP_SIZE, 0x7fff0000 bytes), so that a
// store of up to about a million records (the benchmarks' seeded store
// takes 1.8 KB a record) is read through the map whole. A page beyond the
// map is read with pread into the connection's small page cache instead,
// as every page was before reads mapped the file, when that was a fifth of
// a search (benchmarks.md). With 1 GB mapped, as before, a store past
// 1 GB read the rest of its pages that way, its newest records' and log
// nodes' among them.
const mmapSize = 0x7fff0000
