// The checked-in types (src/openapi.ts) are what openapi-typescript makes of
// the live server's /v1/openapi.json: a route or field the server adds
// fails this test until the types are regenerated: UPDATE_OPENAPI=1 npm test
// (in clients/typescript) writes them from a server built from the checkout.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Server } from './server.js';

const PKG = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const s = new Server();

before(() => s.start());
after(() => s.stop());

test('src/openapi.ts matches the live spec', async () => {
  const resp = await fetch(`${s.url}/v1/openapi.json`);
  assert.equal(resp.status, 200);
  const spec = join(s.dir, 'openapi.json');
  writeFileSync(spec, await resp.text());
  const out = join(s.dir, 'openapi.ts');
  execFileSync(join(PKG, 'node_modules', '.bin', 'openapi-typescript'), [spec, '-o', out], { stdio: 'ignore' });
  const want = readFileSync(out, 'utf8');
  const file = join(PKG, 'src', 'openapi.ts');
  if (process.env.UPDATE_OPENAPI === '1') {
    writeFileSync(file, want);
    return;
  }
  assert.ok(readFileSync(file, 'utf8') === want,
    'src/openapi.ts is not what the live server documents: regenerate it with UPDATE_OPENAPI=1 npm test in clients/typescript, then rebuild');
});
