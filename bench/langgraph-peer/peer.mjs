// The peer of custody's PostgreSQL write benchmark (docs/benchmarks.md,
// "PostgreSQL against LangGraph's PostgresStore"): keyed puts of a short
// text into LangGraph.js's PostgresStore by CLIENTS concurrent clients
// (1 by default), N writes in all, on the server PEER_DSN names. Run it
// alternated with `go test ./postgres -bench HTTPWrite` on the same server:
//
//	npm ci && PEER_DSN=postgres://... node peer.mjs [N] [CLIENTS]
//
// `node peer.mjs search [N]` puts N texts (100,000 by default; in one
// INSERT into the store's table, the rows its put writes) and then times
// ten searches of two words among them: what LangGraph's PostgresStore does for a query without an
// embedding index (its text mode: to_tsvector of every item's value, or
// ILIKE, no index), as a LangGraph user pays it.
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import pg from "pg";
import { readFileSync } from "node:fs";

const dsn = process.env.PEER_DSN;
if (!dsn) {
  console.error("set PEER_DSN to a PostgreSQL connection string (a database the peer may create tables in)");
  process.exit(2);
}
const store = PostgresStore.fromConnString(dsn);
await store.setup();
if (process.argv[2] === "search") {
  await search(Number(process.argv[3] ?? 100000));
  await store.stop();
  process.exit(0);
}
const n = Number(process.argv[2] ?? 2000);
const clients = Number(process.argv[3] ?? 1);
const run = `r${Date.now()}`;
const lat = [];
let next = 0;
const host0 = hostCPU();
const start = process.hrtime.bigint();
await Promise.all(
  Array.from({ length: clients }, async () => {
    for (let i = next++; i < n; i = next++) {
      const t = process.hrtime.bigint();
      await store.put(["bench", run], `k${i}`, { text: `benchmark memory number ${i} about invoices and payees` });
      lat.push(Number(process.hrtime.bigint() - t) / 1e3);
    }
  }),
);
const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
const host = hostCPU() - host0;
lat.sort((a, b) => a - b);
const p = (q) => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))];
console.log(`${n} puts, ${clients} clients: ${(n / elapsed).toFixed(0)} writes/s, p50 ${p(0.5).toFixed(0)} µs, p99 ${p(0.99).toFixed(0)} µs` +
  (host > 0 ? `, host CPU ${(host / n).toFixed(0)} µs a put` : ""));
await store.stop();

// hostCPU is the machine's busy CPU time in µs (user, nice, system,
// interrupts; Linux's /proc/stat, in hundredths of a second), or 0 where
// it cannot be read: across a run on an otherwise idle machine, what the
// puts cost this process and PostgreSQL together, as custody's benchmark
// reports it (host-cpu-µs/op).
function hostCPU() {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/);
    return [1, 2, 3, 6, 7].reduce((t, i) => t + Number(f[i]), 0) * 1e4;
  } catch {
    return 0;
  }
}

// search puts n texts and times searches among them (see above).
async function search(n) {
  const ns = ["search", `r${Date.now()}`];
  const words = ["invoices", "payees", "travel", "receipts", "contracts", "salaries", "vendors", "refunds", "taxes", "audits"];
  // The rows the store's put writes (namespace_path, key, value), in one
  // statement: a put at a time would take minutes for what is measured
  // here, the search.
  const db = new pg.Client({ connectionString: dsn });
  await db.connect();
  const t0 = process.hrtime.bigint();
  await db.query(
    `INSERT INTO store (namespace_path, key, value)
     SELECT $1, 'k' || i, jsonb_build_object('text', 'memory number ' || i || ' about ' || ($2::text[])[i % 10 + 1] || ' and ' || ($2::text[])[(i * 7 + 3) % 10 + 1])
     FROM generate_series(0, $3::int - 1) AS i`,
    [ns.join(":"), words, n],
  );
  await db.query("ANALYZE store");
  await db.end();
  const put = Number(process.hrtime.bigint() - t0) / 1e9;
  await store.put(ns, "one more", { text: "put through the store, so that its search sees a namespace it wrote" });
  const lat = [];
  let hits = 0;
  for (let i = 0; i < 10; i++) {
    const t = process.hrtime.bigint();
    const res = await store.search(ns, { query: `${words[i % 10]} ${words[(i + 1) % 10]}`, limit: 10 });
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
    hits += res.length;
  }
  lat.sort((a, b) => a - b);
  console.log(`${n} items (inserted in ${put.toFixed(1)} s); 10 two-word searches, limit 10 (${hits} hits): p50 ${lat[5].toFixed(0)} ms, min ${lat[0].toFixed(0)} ms, max ${lat[9].toFixed(0)} ms`);
}
