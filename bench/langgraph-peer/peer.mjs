// The peer of custody's PostgreSQL write benchmark (docs/benchmarks.md,
// "PostgreSQL against LangGraph's PostgresStore"): keyed puts of a short
// text into LangGraph.js's PostgresStore by CLIENTS concurrent clients
// (1 by default), N writes in all, on the server PEER_DSN names. Run it
// alternated with `go test ./postgres -bench HTTPWrite` on the same server:
//
//	npm ci && PEER_DSN=postgres://... node peer.mjs [N] [CLIENTS]
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";

const dsn = process.env.PEER_DSN;
if (!dsn) {
  console.error("set PEER_DSN to a PostgreSQL connection string (a database the peer may create tables in)");
  process.exit(2);
}
const n = Number(process.argv[2] ?? 2000);
const clients = Number(process.argv[3] ?? 1);
const store = PostgresStore.fromConnString(dsn);
await store.setup();
const run = `r${Date.now()}`;
const lat = [];
let next = 0;
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
lat.sort((a, b) => a - b);
const p = (q) => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))];
console.log(`${n} puts, ${clients} clients: ${(n / elapsed).toFixed(0)} writes/s, p50 ${p(0.5).toFixed(0)} µs, p99 ${p(0.99).toFixed(0)} µs`);
await store.stop();
