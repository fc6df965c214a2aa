// The floor: the least a Service Worker can do to answer GraphQL POSTs from a cache. No storage, no
// hashing, no parsing: an in-memory Map from the request body text to a prebuilt Response, answered with
// `response.clone()`. A miss goes to the network and keeps the answer in the Map. Tags come from the
// `X-Cachet-Tags` header into an in-memory tag → bodies Map; a mutation (marked `X-Cachet-Invalidate`) and
// cachet's `invalidate-tags` message delete from both Maps, post `cache-invalidated` on
// BroadcastChannel('cachet') and ack like cachet does. The browser stops an idle worker after ~30 s and the
// Maps are gone: after a cold start the floor answers from the network.
const entries = new Map(); // body text -> prebuilt Response
const byTag = new Map(); // tag -> Set of body texts

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

const tagList = (value) => (value || '').split(',').map((tag) => tag.trim()).filter((tag) => tag !== '');

function invalidate(tags) {
  let removed = 0;
  for (const tag of tags) {
    for (const key of byTag.get(tag) || []) removed += entries.delete(key) ? 1 : 0;
    byTag.delete(tag);
  }
  const channel = new BroadcastChannel('cachet');
  channel.postMessage(JSON.stringify({ v: 1, type: 'cache-invalidated', tags }));
  channel.close();
  return removed;
}

// Bench only (messages `bench-seed` and `bench-count`, whose acks carry how many entries the Map holds):
// `count` entries (the bench page's `seed` does the same for the other workers' storage), keyed by a
// text the page never sends as a body, tagged `tag` or else `filler-<id % 100>`.
function seed(firstId, count, tag) {
  for (let id = firstId; id < firstId + count; id++) {
    const key = `entry-${id}`;
    const head = `{"data":{"item":{"id":${id},"rev":0,"pad":"`;
    const body = head + 'x'.repeat(1024 - head.length - 4) + '"}}}';
    entries.set(key, new Response(body, { headers: { 'content-type': 'application/json' } }));
    const entryTag = tag || `filler-${id % 100}`;
    if (!byTag.has(entryTag)) byTag.set(entryTag, new Set());
    byTag.get(entryTag).add(key);
  }
}

async function answer(request) {
  const invalidates = request.headers.get('x-cachet-invalidate');
  if (invalidates !== null) {
    const response = await fetch(request);
    if (response.ok) invalidate(tagList(invalidates));
    return response;
  }
  const key = await request.clone().text();
  const hit = entries.get(key);
  if (hit) return hit.clone();
  const response = await fetch(request);
  if (!response.ok) return response;
  const prebuilt = new Response(await response.arrayBuffer(), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  entries.set(key, prebuilt);
  for (const tag of tagList(request.headers.get('x-cachet-tags'))) {
    if (!byTag.has(tag)) byTag.set(tag, new Set());
    byTag.get(tag).add(key);
  }
  return prebuilt.clone();
}

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'POST' || url.origin !== self.location.origin || url.pathname !== '/graphql') return;
  event.respondWith(answer(event.request));
});

self.addEventListener('message', (event) => {
  let message;
  try {
    message = JSON.parse(event.data);
  } catch {
    return;
  }
  if (message.type === 'invalidate-tags') {
    invalidate(message.tags);
  } else if (message.type === 'bench-seed') {
    seed(message.firstId, message.count, message.tag);
  } else if (message.type !== 'bench-count') {
    return;
  }
  const answer = { v: 1, type: 'ack', requestId: message.requestId, count: entries.size };
  event.source.postMessage(JSON.stringify(answer));
});
