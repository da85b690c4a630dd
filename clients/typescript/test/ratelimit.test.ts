// A principal over its rate: the client waits out the 429 and sends the
// request again (rateLimitRetries), against a real server whose limit is
// one request a second.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { CustodyClient, InvalidInputError, RateLimitedError } from '../src/index.js';
import { Server } from './server.js';

const s = new Server();
let token = '';

before(async () => {
  token = s.principal('alice', '--role', 'user', '--channel', 'user');
  await s.start('--rate-limit', '1', '--rate-burst', '1');
});
after(() => s.stop());

/** A client whose fetches are counted, with the statuses answered. */
function counted(rateLimitRetries?: number) {
  const statuses: number[] = [];
  const c = new CustodyClient({
    baseUrl: s.url, token, rateLimitRetries,
    fetch: async (input, init) => {
      const resp = await fetch(input, init);
      statuses.push(resp.status);
      return resp;
    },
  });
  return { c, statuses };
}

test('with retries off, a request over the rate throws RateLimitedError with the wait', async () => {
  const { c, statuses } = counted(0);
  await c.remember({ namespace: 'n', class: 'fact', body: 'first', channel: 'user' }).catch(() => undefined); // spends the burst
  await assert.rejects(c.remember({ namespace: 'n', class: 'fact', body: 'over the rate', channel: 'user' }),
    (e: Error) => e instanceof RateLimitedError && (e.retryAfter ?? 0) >= 1);
  assert.equal(statuses.at(-1), 429);
  assert.equal(statuses.filter((x) => x === 429).length, 1, 'a 429 is not sent again with retries off');
});

test('by default, writes over the rate wait their turn and are all made', async () => {
  const { c, statuses } = counted();
  const ids: string[] = [];
  for (const body of ['one', 'two', 'three']) {
    const d = await c.remember({ namespace: 'n', class: 'fact', body, channel: 'user' });
    assert.equal(d.state, 'admitted');
    ids.push(d.id);
  }
  assert.ok(statuses.includes(429), `no request met the limit (${statuses.join(' ')}): the test measured nothing`);
  assert.equal(statuses.filter((x) => x !== 429).length, 3, 'each write was made once');
  const page = await c.list({ namespace: 'n' });
  for (const id of ids) assert.ok(page.items.some((r) => r.id === id), `write ${id} is not in the store`);
});

test('an answer other than 429 is not sent again', async () => {
  const { c, statuses } = counted();
  await new Promise((ok) => setTimeout(ok, 1100)); // a token for this request
  await assert.rejects(c.search({ query: 'x', limit: 101 }), InvalidInputError);
  assert.deepEqual(statuses, [400]);
});
