// Interop test server for cachet's end-to-end tests.
//
//   node tests/interop/server.mjs --server <apollo|yoga|graphql-http> --static <dir>
//        [--port 0] [--token-ttl-ms 900000] [--ignore-stdin]
//   node tests/interop/server.mjs --write-clients FILE   (only writes /__interop/clients.js to FILE)
//
// Serves a static web app, a GraphQL endpoint at /graphql run by a *foreign*
// GraphQL server library with its default options, small bearer-auth routes
// under /api/*, and test hooks under /__interop/*. See README.md.
//
// Prints exactly one line `LISTENING http://127.0.0.1:<port>` when ready.
// Exits with code 0 when stdin ends (so a dying parent ends it) or on SIGTERM.

import http from 'node:http';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GraphQLError, buildSchema, parse as parseGraphQL, visit, Kind } from 'graphql';

const HERE = path.dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------------------
// Arguments

function fail(message) {
  process.stderr.write(`server.mjs: ${message}\n`);
  process.exit(2);
}

let args;
try {
  ({ values: args } = parseArgs({
    options: {
      server: { type: 'string' },
      static: { type: 'string' },
      port: { type: 'string', default: '0' },
      'token-ttl-ms': { type: 'string', default: '900000' },
      'ignore-stdin': { type: 'boolean', default: false },
      'write-clients': { type: 'string' },
    },
    strict: true,
  }));
} catch (err) {
  fail(err.message);
}

// `--write-clients FILE`: only writes the clients' browser bundle to FILE and exits (for a server that
// is not this one, such as the example backend, to serve it from its static files).
if (args['write-clients']) {
  const file = path.resolve(args['write-clients']);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, await buildClientsBundle());
  process.exit(0);
}

const SERVER_KIND = args.server;
if (!['apollo', 'yoga', 'graphql-http'].includes(SERVER_KIND)) {
  fail('--server must be one of apollo, yoga, graphql-http');
}
if (!args.static) fail('--static DIR is required');
const STATIC_ROOT = path.resolve(args.static);
if (!fs.existsSync(STATIC_ROOT) || !fs.statSync(STATIC_ROOT).isDirectory()) {
  fail(`--static ${STATIC_ROOT} is not a directory`);
}
const PORT = Number(args.port);
if (!Number.isInteger(PORT) || PORT < 0 || PORT > 65535) fail('--port must be 0..65535');
const TOKEN_TTL_MS = Number(args['token-ttl-ms']);
if (!Number.isFinite(TOKEN_TTL_MS) || TOKEN_TTL_MS < 0) fail('--token-ttl-ms must be >= 0');

// ---------------------------------------------------------------------------
// In-memory state: users, tokens, todos, counters

const users = new Map(); // username -> { id, username }
let nextUserId = 1;
function userFor(username) {
  let user = users.get(username);
  if (!user) {
    user = { id: String(nextUserId++), username };
    users.set(username, user);
  }
  return user;
}
userFor('alice'); // id 1
userFor('bob'); // id 2

const tokens = new Map(); // token -> { user, expiresAt, revoked }
let failRefresh = false;

function issueToken(user) {
  const token = crypto.randomBytes(24).toString('hex');
  const entry = { user, expiresAt: Date.now() + TOKEN_TTL_MS, revoked: false };
  tokens.set(token, entry);
  return { token, entry };
}

/** Parses `Authorization: Bearer X`. Returns undefined without a bearer token. */
function bearerToken(req) {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : undefined;
}

/** The token's entry if known, not revoked and not expired; else null. */
function validToken(token) {
  const entry = tokens.get(token);
  if (!entry || entry.revoked || entry.expiresAt <= Date.now()) return null;
  return entry;
}

const todoLists = new Map(); // user id or 'anonymous' -> [{ id, title, done }]
let nextTodoId = 1;
function todosOf(user) {
  const key = user ? user.id : 'anonymous';
  let list = todoLists.get(key);
  if (!list) {
    list = [];
    todoLists.set(key, list);
  }
  return list;
}

let counts;
function resetCounts() {
  counts = { routes: {}, operations: {}, idempotencyKeys: [], mutationTimes: [] };
}
resetCounts();
function bump(map, key) {
  map[key] = (map[key] ?? 0) + 1;
}

// ---------------------------------------------------------------------------
// GraphQL schema and resolvers (shared by the three servers)

const typeDefs = /* GraphQL */ `
  type User { id: ID!, username: String! }
  type Todo { id: ID!, title: String!, done: Boolean! }
  type Query { me: User, todos: [Todo!]!, todo(id: ID!): Todo }
  type Mutation {
    createTodo(title: String!): Todo!
    updateTodo(id: ID!, title: String, done: Boolean): Todo!
    deleteTodo(id: ID!): Boolean!
  }
`;

const toTodo = (t) => ({ id: String(t.id), title: t.title, done: t.done });

// Operation implementations: (args, user) -> value. GraphQLError so that
// servers which mask unexpected errors (Yoga) still show the message.
const ops = {
  me: (_args, user) => user ?? null,
  todos: (_args, user) => todosOf(user).map(toTodo),
  todo: ({ id }, user) => {
    const t = todosOf(user).find((t) => String(t.id) === String(id));
    return t ? toTodo(t) : null;
  },
  createTodo: ({ title }, user) => {
    if (typeof title !== 'string' || title.trim() === '') {
      throw new GraphQLError('title must not be blank', { extensions: { code: 'BAD_USER_INPUT' } });
    }
    const t = { id: nextTodoId++, title, done: false };
    todosOf(user).push(t);
    return toTodo(t);
  },
  updateTodo: ({ id, title, done }, user) => {
    const t = todosOf(user).find((t) => String(t.id) === String(id));
    if (!t) throw new GraphQLError(`todo ${id} not found`, { extensions: { code: 'NOT_FOUND' } });
    if (title !== undefined && title !== null) {
      if (title.trim() === '') {
        throw new GraphQLError('title must not be blank', { extensions: { code: 'BAD_USER_INPUT' } });
      }
      t.title = title;
    }
    if (done !== undefined && done !== null) t.done = done;
    return toTodo(t);
  },
  deleteTodo: ({ id }, user) => {
    const list = todosOf(user);
    const i = list.findIndex((t) => String(t.id) === String(id));
    if (i < 0) return false;
    list.splice(i, 1);
    return true;
  },
};

// graphql-tools style resolvers (Apollo Server, Yoga).
const resolvers = { Query: {}, Mutation: {} };
for (const name of ['me', 'todos', 'todo']) {
  resolvers.Query[name] = (_parent, a, ctx) => ops[name](a, ctx.user ?? null);
}
for (const name of ['createTodo', 'updateTodo', 'deleteTodo']) {
  resolvers.Mutation[name] = (_parent, a, ctx) => ops[name](a, ctx.user ?? null);
}

// graphql-js root value style (graphql-http): field(args, context, info).
const rootValue = {};
for (const name of Object.keys(ops)) {
  rootValue[name] = (a, ctx) => ops[name](a, ctx?.user ?? null);
}

// ---------------------------------------------------------------------------
// Request inspection (for counters and the cache-tag header)

/** Returns [{ query, operationName }] found in a GraphQL request. */
function graphqlParams(method, url, bodyText) {
  if (method === 'GET' || method === 'HEAD') {
    return [{
      query: url.searchParams.get('query') ?? undefined,
      operationName: url.searchParams.get('operationName') || undefined,
    }];
  }
  let body;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return [{}];
  }
  const list = Array.isArray(body) ? body : [body];
  return list.map((b) =>
    b && typeof b === 'object'
      ? {
          query: typeof b.query === 'string' ? b.query : undefined,
          operationName: typeof b.operationName === 'string' && b.operationName ? b.operationName : undefined,
        }
      : {},
  );
}

/** { name, type, selectsTodos } of the operation that would run. */
function inspectOperation({ query, operationName }) {
  const info = { name: operationName ?? null, type: null, selectsTodos: false };
  if (typeof query !== 'string') return info;
  let doc;
  try {
    doc = parseGraphQL(query);
  } catch {
    // Unparseable: fall back to simple regexes on the text.
    const m = /^\s*(query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(query);
    info.type = m ? m[1] : /^\s*(mutation|subscription)\b/.exec(query)?.[1] ?? 'query';
    if (!info.name && m) info.name = m[2];
    info.selectsTodos = info.type === 'query' && /\btodos\b/.test(query);
    return info;
  }
  const operations = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const op = operationName
    ? operations.find((o) => o.name?.value === operationName)
    : operations.length === 1 ? operations[0] : undefined;
  if (!op) return info;
  info.type = op.operation;
  if (!info.name && op.name) info.name = op.name.value;
  if (op.operation === 'query') {
    // Look through the operation and the fragments (cheap over-approximation).
    visit(doc, {
      Field(node) {
        if (node.name.value === 'todos') info.selectsTodos = true;
      },
    });
  }
  return info;
}

// ---------------------------------------------------------------------------
// GraphQL servers

let graphqlHandler; // (req, res, { user, bodyBuffer, url }) => void

function replayRequest(req, bodyBuffer) {
  // The middleware consumed the body; hand the server an equivalent request
  // stream that yields the same bytes.
  let pushed = false;
  const replay = new Readable({
    read() {
      if (!pushed) {
        pushed = true;
        if (bodyBuffer.length) this.push(bodyBuffer);
      }
      this.push(null);
    },
  });
  for (const key of ['method', 'url', 'headers', 'rawHeaders', 'httpVersion', 'httpVersionMajor',
    'httpVersionMinor', 'socket', 'trailers', 'rawTrailers']) {
    replay[key] = req[key];
  }
  Object.defineProperty(replay, 'connection', { get: () => req.socket });
  return replay;
}

async function setupApollo() {
  const { ApolloServer, HeaderMap } = await import('@apollo/server');
  const server = new ApolloServer({ typeDefs, resolvers });
  await server.start();
  graphqlHandler = async (req, res, { user, bodyBuffer, url }) => {
    const headers = new HeaderMap();
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
    }
    let body;
    if (req.method === 'POST') {
      const text = bodyBuffer.toString('utf8');
      const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (type === 'application/json' || type.endsWith('+json')) {
        if (text.trim() === '') {
          body = {};
        } else {
          try {
            body = JSON.parse(text);
          } catch (err) {
            sendJson(res, 400, { errors: [{ message: `invalid JSON body: ${err.message}` }] });
            return;
          }
        }
      } else {
        body = text;
      }
    }
    const response = await server.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method.toUpperCase(), headers, search: url.search, body },
      context: async () => ({ user }),
    });
    for (const [key, value] of response.headers) res.setHeader(key, value);
    res.statusCode = response.status || 200;
    if (response.body.kind === 'complete') {
      res.end(response.body.string);
      return;
    }
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
  };
}

async function setupYoga() {
  const { createYoga, createSchema } = await import('graphql-yoga');
  const yoga = createYoga({
    schema: createSchema({ typeDefs, resolvers }),
    graphqlEndpoint: '/graphql',
    context: ({ user }) => ({ user: user ?? null }),
  });
  graphqlHandler = (req, res, { user, bodyBuffer }) => {
    // Yoga's node request listener; the extra object joins its server context.
    yoga(replayRequest(req, bodyBuffer), res, { user });
  };
}

async function setupGraphqlHttp() {
  const { createHandler } = await import('graphql-http/lib/use/http');
  const schema = buildSchema(typeDefs);
  const handler = createHandler({
    schema,
    rootValue,
    context: (request) => ({ user: request.raw.interopUser ?? null }),
  });
  graphqlHandler = (req, res, { user, bodyBuffer }) => {
    const replay = replayRequest(req, bodyBuffer);
    replay.interopUser = user;
    handler(replay, res);
  };
}

// ---------------------------------------------------------------------------
// Browser bundle of foreign GraphQL clients

async function buildClientsBundle() {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [path.join(HERE, 'clients.mjs')],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    minify: false,
    logLevel: 'silent',
  });
  await esbuild.stop?.();
  return Buffer.from(result.outputFiles[0].contents);
}

// ---------------------------------------------------------------------------
// HTTP helpers

function sendJson(res, status, value, extraHeaders = {}) {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...extraHeaders,
  });
  res.end(body);
}

function sendEmpty(res, status, extraHeaders = {}) {
  res.writeHead(status, extraHeaders);
  res.end();
}

function sendText(res, status, text) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function notFound(res) {
  sendText(res, 404, 'not found\n');
}

function methodNotAllowed(res, allow) {
  res.writeHead(405, { allow, 'content-type': 'text/plain; charset=utf-8' });
  res.end('method not allowed\n');
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function readJson(req) {
  const buf = await readBody(req);
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch {
    return undefined;
  }
}

const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.mjs': 'application/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

async function serveStatic(req, res, url) {
  if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res, 'GET, HEAD');
  let rel;
  try {
    rel = decodeURIComponent(url.pathname);
  } catch {
    return notFound(res);
  }
  if (rel.includes('\0')) return notFound(res);
  let file = path.resolve(STATIC_ROOT, '.' + path.posix.normalize('/' + rel));
  if (file !== STATIC_ROOT && !file.startsWith(STATIC_ROOT + path.sep)) return notFound(res);
  let stat;
  try {
    stat = await fsp.stat(file);
  } catch {
    return notFound(res);
  }
  if (stat.isDirectory()) {
    if (!url.pathname.endsWith('/')) {
      return sendEmpty(res, 301, { location: url.pathname + '/' + url.search, 'content-length': 0 });
    }
    file = path.join(file, 'index.html');
    try {
      stat = await fsp.stat(file);
    } catch {
      return notFound(res);
    }
  }
  if (!stat.isFile()) return notFound(res);
  const type = CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
  res.writeHead(200, { 'content-type': type, 'content-length': stat.size });
  if (req.method === 'HEAD') return res.end();
  fs.createReadStream(file).on('error', () => res.destroy()).pipe(res);
}

// ---------------------------------------------------------------------------
// Routes

let clientsBundle;

async function handleApi(req, res, url) {
  const route = url.pathname;
  if (route === '/api/login') {
    if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
    const body = await readJson(req);
    const username = body?.username;
    const password = body?.password;
    if (typeof username !== 'string' || username === '' || password !== `${username}-password`) {
      return sendJson(res, 401, { error: 'invalid username or password' });
    }
    const user = userFor(username);
    const { token, entry } = issueToken(user);
    return sendJson(res, 200, { user, token, expiresAt: entry.expiresAt });
  }
  if (route === '/api/refresh') {
    if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
    await readBody(req);
    const old = bearerToken(req);
    const entry = old === undefined ? undefined : tokens.get(old);
    if (!entry) return sendJson(res, 401, { error: 'missing or unknown token' });
    if (entry.revoked) return sendJson(res, 401, { error: 'token revoked' });
    if (failRefresh) return sendJson(res, 401, { error: 'refresh refused' });
    entry.revoked = true;
    const { token, entry: fresh } = issueToken(entry.user);
    return sendJson(res, 200, { token, expiresAt: fresh.expiresAt, user: entry.user });
  }
  if (route === '/api/me') {
    if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res, 'GET, HEAD');
    const token = bearerToken(req);
    const entry = token === undefined ? null : validToken(token);
    if (!entry) return sendJson(res, 401, { error: token === undefined ? 'missing token' : 'token expired or unknown' });
    return sendJson(res, 200, { user: entry.user, expiresAt: entry.expiresAt });
  }
  if (route === '/api/logout') {
    if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
    await readBody(req);
    const token = bearerToken(req);
    const entry = token === undefined ? undefined : tokens.get(token);
    if (entry) entry.revoked = true;
    return sendEmpty(res, 204);
  }
  return notFound(res);
}

async function handleGraphql(req, res, url) {
  const arrivedMs = performance.now();
  const bodyBuffer = req.method === 'GET' || req.method === 'HEAD' ? Buffer.alloc(0) : await readBody(req);

  const params = graphqlParams(req.method, url, bodyBuffer.toString('utf8'));
  let tagTodos = false;
  for (const p of params) {
    const info = inspectOperation(p);
    bump(counts.operations, info.name ?? '(anonymous)');
    if (info.type === 'mutation') {
      const key = req.headers['idempotency-key'];
      if (key !== undefined) counts.idempotencyKeys.push(Array.isArray(key) ? key.join(', ') : key);
      // When it came and when its answer was written out (ms on this server's clock): the gap from one
      // answer to the next mutation's arrival is the client's turnaround (a queue replay records the
      // outcome, then sends the next).
      const times = { arrivedMs, answeredMs: null };
      counts.mutationTimes.push(times);
      res.on('finish', () => { times.answeredMs = performance.now(); });
    }
    if (info.type === 'query' && info.selectsTodos) tagTodos = true;
  }

  let user = null;
  const token = bearerToken(req);
  if (token !== undefined) {
    const entry = validToken(token);
    if (!entry) {
      const body = JSON.stringify({ errors: [{ message: 'token expired or unknown' }] });
      res.writeHead(401, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      return res.end(body);
    }
    user = entry.user;
  }

  if (tagTodos) res.setHeader('X-SW-Cache-Tags', 'todos');
  if (slowMs > 0) holdAnswer(res, slowMs);
  await graphqlHandler(req, res, { user, bodyBuffer, url });
}

// `POST /__interop/slow {"ms": N}`: every GraphQL answer leaves N ms after the operation ran (applied but
// not yet answered: the window in which a stopped Service Worker loses the answer of an applied
// mutation). The answer's head and body are held together, whichever server writes them.
let slowMs = 0;

function holdAnswer(res, ms) {
  const held = [];
  for (const name of ['writeHead', 'write', 'end']) {
    const original = res[name].bind(res);
    res[name] = (...args) => {
      held.push(() => original(...args));
      if (name === 'end') setTimeout(() => { for (const call of held) call(); }, ms);
      return res;
    };
  }
}

async function handleInterop(req, res, url) {
  const route = url.pathname;
  const post = (fn) => (req.method === 'POST' ? fn() : methodNotAllowed(res, 'POST'));
  const get = (fn) => (req.method === 'GET' || req.method === 'HEAD' ? fn() : methodNotAllowed(res, 'GET, HEAD'));
  switch (route) {
    case '/__interop/clients.js':
      return get(() => {
        res.writeHead(200, {
          'content-type': 'application/javascript; charset=utf-8',
          'content-length': clientsBundle.length,
        });
        res.end(req.method === 'HEAD' ? undefined : clientsBundle);
      });
    case '/__interop/expire-tokens':
      return post(async () => {
        await readBody(req);
        const past = Date.now() - 1;
        for (const entry of tokens.values()) entry.expiresAt = past;
        sendEmpty(res, 204);
      });
    case '/__interop/unreachable':
      return post(async () => {
        const body = await readJson(req);
        if (typeof body?.unreachable !== 'boolean') {
          return sendJson(res, 400, { error: 'expected {"unreachable": true|false}' });
        }
        unreachable = body.unreachable;
        sendEmpty(res, 204);
      });
    case '/__interop/slow':
      return post(async () => {
        const body = await readJson(req);
        if (!Number.isInteger(body?.ms) || body.ms < 0) return sendJson(res, 400, { error: 'expected {"ms": N >= 0}' });
        slowMs = body.ms;
        sendEmpty(res, 204);
      });
    case '/__interop/fail-refresh':
      return post(async () => {
        const body = await readJson(req);
        if (typeof body?.fail !== 'boolean') return sendJson(res, 400, { error: 'expected {"fail": true|false}' });
        failRefresh = body.fail;
        sendEmpty(res, 204);
      });
    case '/__interop/counts':
      return get(() => sendJson(res, 200, counts));
    case '/__interop/reset-counts':
      return post(async () => {
        await readBody(req);
        resetCounts();
        sendEmpty(res, 204);
      });
    case '/__interop/todos':
      return get(() => {
        const name = url.searchParams.get('user') ?? 'anonymous';
        let list;
        if (name === 'anonymous') list = todoLists.get('anonymous') ?? [];
        else {
          const user = users.get(name);
          list = user ? todoLists.get(user.id) ?? [] : [];
        }
        sendJson(res, 200, list.map((t) => t.title));
      });
    default:
      return notFound(res);
  }
}

let unreachable = false;

async function handle(req, res) {
  let url;
  try {
    url = new URL(req.url, 'http://127.0.0.1');
  } catch {
    return sendText(res, 400, 'bad request\n');
  }
  const p = url.pathname;
  // `POST /__interop/unreachable {"unreachable": true}`: every request but the test hooks' is cut (the
  // socket destroyed, no answer), as a lost network looks to the browser, while the server keeps its
  // state (a restarted process would forget its todos).
  if (unreachable && !p.startsWith('/__interop/')) {
    req.socket.destroy();
    return;
  }
  if (p === '/graphql' || p.startsWith('/api/')) bump(counts.routes, `${req.method} ${p}`);
  if (p === '/graphql') return handleGraphql(req, res, url);
  if (p.startsWith('/api/')) return handleApi(req, res, url);
  if (p.startsWith('/__interop/')) return handleInterop(req, res, url);
  return serveStatic(req, res, url);
}

// ---------------------------------------------------------------------------
// Start

try {
  clientsBundle = await buildClientsBundle();
} catch (err) {
  fail(`esbuild failed to bundle clients.mjs: ${err.message}`);
}

if (SERVER_KIND === 'apollo') await setupApollo();
else if (SERVER_KIND === 'yoga') await setupYoga();
else await setupGraphqlHttp();

const httpServer = http.createServer((req, res) => {
  handle(req, res).catch((err) => {
    process.stderr.write(`server.mjs: ${req.method} ${req.url}: ${err.stack || err}\n`);
    if (!res.headersSent) sendText(res, 500, 'internal error\n');
    else res.destroy();
  });
});

function shutdown() {
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

httpServer.on('error', (err) => fail(`listen failed: ${err.message}`));
httpServer.listen(PORT, '127.0.0.1', () => {
  const { port } = httpServer.address();
  process.stdout.write(`LISTENING http://127.0.0.1:${port}\n`);
  if (!args['ignore-stdin']) {
    process.stdin.on('end', shutdown);
    process.stdin.on('close', shutdown);
    process.stdin.on('error', shutdown);
    process.stdin.resume();
  }
});
