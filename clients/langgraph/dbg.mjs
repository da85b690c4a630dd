import { InMemoryStore } from '@langchain/langgraph-checkpoint';
import { CustodyClient } from '@custody/client';
import { CustodyStore } from './dist/src/index.js';
import { answer } from './dist/test/compare.js';
import { Server } from './dist/test/server.js';
const s = new Server();
const tok = s.principal('alice', '--role', 'user');
await s.start();
const client = new CustodyClient({ baseUrl: s.url, token: tok });
const calls = JSON.parse(process.argv[2]);
const [a, b] = [new CustodyStore({ client, channel: 'user', root: 'dbg' }), new InMemoryStore()];
for (const c of calls) { console.log(JSON.stringify(c)); console.log(' ours  ', JSON.stringify(await answer(a, c))); console.log(' theirs', JSON.stringify(await answer(b, c))); }
await s.stop();
