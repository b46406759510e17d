// A real OpenID provider for yeyak's tests: panva's `oidc-provider` (npm),
// installed under `target/node` by the tests. Started by `tests/api/sso_oidc.rs`
// as `node provider.mjs` with NODE_MODULES (where it is installed),
// OIDC_USERS (JSON: account id -> claims) and PORT (0: any free one); it
// listens on 127.0.0.1 and prints `listening <port>` once.
//
// Test-only routes beside the provider (never part of a real one):
//   POST /__test/clients  JSON array of client metadata: replaces the clients
//   POST /__test/users    JSON object as OIDC_USERS: replaces the accounts
//   POST /__test/rotate   new RS256 and ES256 keys (new `kid`s): key rotation
// Both rebuild the provider with the same issuer; the old keys are gone from
// the JWKS at once, as after an emergency rotation.
//
// The login and consent pages are oidc-provider's own development
// interactions: any login name signs in as that account (the password is
// not checked), then a consent form grants the scopes.

import http from 'node:http';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const { default: Provider } = await import(
  pathToFileURL(join(process.env.NODE_MODULES, 'oidc-provider/lib/index.js')).href
);

let users = JSON.parse(process.env.OIDC_USERS || '{}');
let clients = [];
let keys = freshKeys();
let provider;
let issuer;

function freshKeys() {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  return [
    { ...rsa, kid: `rs-${randomUUID()}`, alg: 'RS256', use: 'sig' },
    { ...ec, kid: `es-${randomUUID()}`, alg: 'ES256', use: 'sig' },
  ];
}

function build() {
  provider = new Provider(issuer, {
    clients,
    jwks: { keys },
    cookies: { keys: ['yeyak-test-cookie-key'] },
    claims: {
      openid: ['sub'],
      profile: ['name', 'preferred_username'],
      email: ['email', 'email_verified'],
      groups: ['groups'],
    },
    scopes: ['openid', 'profile', 'email', 'groups'],
    features: {
      devInteractions: { enabled: true },
      rpInitiatedLogout: { enabled: true },
    },
    async findAccount(_ctx, id) {
      const claims = users[id];
      if (!claims) return undefined;
      return { accountId: id, async claims() { return { sub: id, ...claims }; } };
    },
  });
  // Quiet: the tests read yeyak's answers, not the provider's warnings.
  provider.on('server_error', (_ctx, err) => console.error('provider error', err));
}

async function readJson(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  return JSON.parse(body || 'null');
}

const server = http.createServer(async (req, res) => {
  if (req.method === 'POST' && req.url === '/__test/clients') {
    clients = await readJson(req);
    build();
    res.writeHead(204).end();
    return;
  }
  if (req.method === 'POST' && req.url === '/__test/users') {
    users = await readJson(req);
    res.writeHead(204).end();
    return;
  }
  if (req.method === 'POST' && req.url === '/__test/rotate') {
    keys = freshKeys();
    build();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kids: keys.map((k) => k.kid) }));
    return;
  }
  provider.callback()(req, res);
});

server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  const { port } = server.address();
  issuer = `http://127.0.0.1:${port}`;
  build();
  console.log(`listening ${port}`);
});
