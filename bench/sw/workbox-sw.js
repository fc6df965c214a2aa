// The Workbox 7 peer of cachet's Service Worker, as a careful Workbox user would write it for GraphQL
// document caching (bundled by `cargo xtask bench` with esbuild, NODE_ENV=production).
//
// - Queries: POST /graphql, CacheFirst. Cache Storage keys are GET requests, so a `cacheKeyWillBeUsed`
//   plugin hashes the request body (SHA-256 with crypto.subtle) into a synthetic GET URL
//   `/__workbox/gql/<hex>`. The key computed for the cache read is kept in the plugin's per-request `state`
//   and reused for the write (by then the body has gone to the network).
// - Tags: the page sends them as `X-Cachet-Tags` on queries (the same header cachet reads). A
//   `cacheDidUpdate` plugin records `{url, tags}` in IndexedDB (through `idb`), in an object store with a
//   multi-entry index on `tags`: the same tag index cachet keeps.
// - Mutations: POST /graphql carrying `X-Cachet-Invalidate` (the page marks them; Workbox's synchronous
//   route matching cannot read a body, so no GraphQL parsing at all), NetworkOnly; a `fetchDidSucceed`
//   plugin invalidates the listed tags on a 2xx answer.
// - Invalidation: waits for the stores still in flight (CacheFirst stores after answering), then the tag
//   index gives the URLs, every cache entry and record is deleted (in parallel), and
//   `{"v":1,"type":"cache-invalidated","tags":[...]}` is posted on BroadcastChannel('cachet'), as cachet does.
// - Page messages: cachet's `invalidate-tags {requestId, tags}`, answered with `ack {requestId}`.
// - Navigations and their assets (the bench's pages under `/nav/`): NetworkFirst, as cachet answers a GET
//   by default, with navigation preload enabled (`workbox-navigation-preload`), which NetworkFirst uses
//   for a navigation: what Workbox's docs tell a user to do for pages served from the network.
import { clientsClaim } from 'workbox-core';
import * as navigationPreload from 'workbox-navigation-preload';
import { registerRoute } from 'workbox-routing';
import { CacheFirst, NetworkFirst, NetworkOnly } from 'workbox-strategies';
import { openDB } from 'idb';

self.skipWaiting();
clientsClaim();

const CACHE_NAME = 'workbox-graphql';
const database = openDB('workbox-tags', 1, {
  upgrade(db) {
    const store = db.createObjectStore('entries', { keyPath: 'url' });
    store.createIndex('tags', 'tags', { multiEntry: true });
  },
});

const tagList = (value) => (value || '').split(',').map((tag) => tag.trim()).filter((tag) => tag !== '');

async function sha256Hex(buffer) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', buffer));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

const bodyHashKey = {
  async cacheKeyWillBeUsed({ request, state }) {
    if (!state.key) {
      const hash = await sha256Hex(await request.clone().arrayBuffer());
      state.key = new Request(`${self.location.origin}/__workbox/gql/${hash}`);
    }
    return state.key;
  },
};

const recordTags = {
  async cacheDidUpdate({ request, event }) {
    const tags = tagList(event.request.headers.get('x-cachet-tags'));
    await (await database).put('entries', { url: request.url, tags });
  },
};

// CacheFirst answers a miss before it stores it (the put runs in `waitUntil`): an invalidation right after
// would miss the entries still being written and leave stale data behind. So each CacheFirst handler is
// tracked until all its work is done, and an invalidation first waits for the ones in flight.
const writesInFlight = new Set();
const trackWrites = {
  async handlerWillStart({ state }) {
    state.done = new Promise((resolve) => { state.resolve = resolve; });
    writesInFlight.add(state.done);
  },
  async handlerDidComplete({ state }) {
    writesInFlight.delete(state.done);
    state.resolve();
  },
};

async function invalidate(tags) {
  await Promise.all([...writesInFlight]);
  const db = await database;
  const index = db.transaction('entries').store.index('tags');
  const urls = new Set();
  for (const keys of await Promise.all(tags.map((tag) => index.getAllKeys(tag)))) {
    for (const url of keys) urls.add(url);
  }
  const cache = await caches.open(CACHE_NAME);
  await Promise.all([...urls].map((url) => cache.delete(url)));
  const write = db.transaction('entries', 'readwrite');
  await Promise.all([...[...urls].map((url) => write.store.delete(url)), write.done]);
  const channel = new BroadcastChannel('cachet');
  channel.postMessage(JSON.stringify({ v: 1, type: 'cache-invalidated', tags }));
  channel.close();
  return urls.size;
}

const invalidateOnSuccess = {
  async fetchDidSucceed({ request, response }) {
    if (response.ok) await invalidate(tagList(request.headers.get('x-cachet-invalidate')));
    return response;
  },
};

const isGraphql = ({ url, request }) => url.origin === self.location.origin && url.pathname === '/graphql';
registerRoute(
  (options) => isGraphql(options) && options.request.headers.has('x-cachet-invalidate'),
  new NetworkOnly({ plugins: [invalidateOnSuccess] }),
  'POST',
);
registerRoute(isGraphql, new CacheFirst({ cacheName: CACHE_NAME, plugins: [bodyHashKey, recordTags, trackWrites] }), 'POST');

navigationPreload.enable();
registerRoute(
  ({ url }) => url.origin === self.location.origin && url.pathname.startsWith('/nav/'),
  new NetworkFirst({ cacheName: 'workbox-pages' }),
);

self.addEventListener('message', (event) => {
  let message;
  try {
    message = JSON.parse(event.data);
  } catch {
    return;
  }
  if (message.type !== 'invalidate-tags') return;
  event.waitUntil(invalidate(message.tags).then(() =>
    event.source.postMessage(JSON.stringify({ v: 1, type: 'ack', requestId: message.requestId }))));
});
