package sqlite

// mmapSize is how much of the database file a connection maps: none.
// Every connection reads pages with pread into its own page cache (2 MB
// for a reader and for the writer).
//
// Mapping the whole file (SQLite's limit, 0x7fff0000 bytes, as before)
// made reads of a store at rest a little faster, but a store that is
// written grows its file at nearly every commit, and each reader then
// maps the file again and faults its pages back in: at 100k records the
// gate took twice as long (1.47 ms p50 against 0.72 ms) and writes a
// quarter longer, and each connection's mapping counted the same pages
// again in the server's resident memory (3 connections × the file: 149
// MB resident at 10k records against 91 MB with the writer's page cache
// cut from 64 MB to 2 MB as well). docs/benchmarks.md has the figures.
const mmapSize = 0
