// The checked-in types (src/openapi.ts) are what openapi-typescript makes of
// the live server's /v1/openapi.json: a route or field the server adds
// fails this test until `npm run generate` is run against it.

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
  const have = readFileSync(join(PKG, 'src', 'openapi.ts'), 'utf8');
  assert.ok(have === want,
    'src/openapi.ts is stale: regenerate it with `CUSTODY_OPENAPI=<saved /v1/openapi.json> npm run generate` in clients/typescript');
});
