// The page side of `cargo xtask bench`: the same file at every variant's origin. The runner calls
// `bench.<workload>(...)` through WebDriver; each resolves to `{samples: [ms, ...], ...}` measured with
// performance.now() in this page, and throws (failing the run) when an answer is wrong.
'use strict';

const QUERY = 'query BenchItem($id: Int!, $size: Int!) { item(id: $id, size: $size) { id pad } }';
const MUTATION = 'mutation CreateNote($id: Int!) { createNote(id: $id) { id } }';

// A query document of about 1 KB, formatted as apps write theirs (a fragment of sixty fields): what
// persisted queries save on the wire. The server reads only the variables.
const TEXT_QUERY =
  'query BenchItemText($id: Int!, $size: Int!) {\n  item(id: $id, size: $size) {\n    ...ItemFields\n  }\n}\n\n' +
  'fragment ItemFields on Item {\n  id\n  pad\n' +
  Array.from({ length: 60 }, (_, i) => `  field${String(i).padStart(2, '0')}\n`).join('') +
  '}';

function queryInit(id, size, tags, text = false) {
  const [query, operationName] = text ? [TEXT_QUERY, 'BenchItemText'] : [QUERY, 'BenchItem'];
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-cachet-tags': tags },
    body: JSON.stringify({ query, variables: { id, size }, operationName }),
  };
}

function mutationInit(id, invalidate) {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-cachet-invalidate': invalidate },
    body: JSON.stringify({ query: MUTATION, variables: { id }, operationName: 'CreateNote' }),
  };
}

// The server answers BenchItem(id, size) with exactly `size` bytes carrying the id.
function checkItem(text, id, size) {
  let item = null;
  try {
    item = JSON.parse(text).data.item;
  } catch (error) {
    throw new Error(`BenchItem(${id}, ${size}): not JSON: ${text.slice(0, 120)}`);
  }
  if (item.id !== id || text.length !== size) {
    throw new Error(`BenchItem(${id}, ${size}): wrong answer (id ${item.id}, ${text.length} bytes)`);
  }
}

function checkMutation(text, id) {
  const created = JSON.parse(text).data.createNote;
  if (created.id !== id) throw new Error(`CreateNote(${id}): wrong answer ${text.slice(0, 120)}`);
}

// One timed query: the fetch and the whole body read. Returns [ms, source header]. `extraHeaders` are
// sent with it (`x-bench-delay` for a slow server).
async function timedQuery(id, size, tags, extraHeaders = {}, textEndpoint = null) {
  const init = queryInit(id, size, tags, textEndpoint !== null);
  Object.assign(init.headers, extraHeaders);
  const started = performance.now();
  const response = await fetch(textEndpoint ?? '/graphql', init);
  const text = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200) throw new Error(`BenchItem(${id}): HTTP ${response.status}`);
  checkItem(text, id, size);
  return [elapsed, response.headers.get('x-cachet-source')];
}

async function untimedQuery(id, size, tags) {
  await timedQuery(id, size, tags);
}

function sourceCounts(sources) {
  const counts = {};
  for (const source of sources) counts[source] = (counts[source] || 0) + 1;
  return counts;
}

let nextRequestId = 1;
const pendingAcks = new Map();
if ('serviceWorker' in navigator) {
  navigator.serviceWorker.addEventListener('message', (event) => {
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    const resolve = pendingAcks.get(message.requestId);
    if (resolve) {
      pendingAcks.delete(message.requestId);
      resolve(message);
    }
  });
  navigator.serviceWorker.startMessages();
}

function sendToWorker(message) {
  const requestId = nextRequestId++;
  return new Promise((resolve) => {
    pendingAcks.set(requestId, resolve);
    navigator.serviceWorker.controller.postMessage(JSON.stringify({ v: 1, requestId, ...message }));
  });
}

// The next `cache-invalidated` on BroadcastChannel('cachet') naming `tag`, with its arrival time.
function nextInvalidation(tag) {
  return new Promise((resolve) => {
    const channel = new BroadcastChannel('cachet');
    channel.onmessage = (event) => {
      const arrived = performance.now();
      const message = JSON.parse(event.data);
      if (message.type === 'cache-invalidated' && message.tags.includes(tag)) {
        channel.close();
        resolve(arrived);
      }
    };
  });
}

async function inBatches(ids, concurrency, each) {
  for (let start = 0; start < ids.length; start += concurrency) {
    await Promise.all(ids.slice(start, start + concurrency).map(each));
  }
}

const range = (from, count) => Array.from({ length: count }, (_, i) => from + i);
// The URL `bench.seed` stores entry `id` at in `storage` (and `bench.holdsSeeded` looks it up at).
const seededUrl = async (storage, id) => storage.url(await sha256Hex(`entry-${id}`));

const idbRequest = (request) => new Promise((resolve, reject) => {
  request.onsuccess = () => resolve(request.result);
  request.onerror = () => reject(request.error);
});

// Where each worker keeps its entries: the bench seeds filler entries straight into them, in the worker's
// own format (cachet: cachet-worker/src/sw/{graphql,tag_index}.rs; Workbox: bench/sw/workbox-sw.js). The
// floor keeps its entries in memory and seeds itself on a bench-only message.
const STORAGE = {
  cachet: {
    cache: 'cachet-graphql-v2',
    database: 'cachet',
    // Filler entries: any URL of the worker's shape (`/__cachet/gql/<partition>/<endpoint>/<key>`).
    url: (key) => `${location.origin}/__cachet/gql/anonymous/efiller/${key}`,
    // The generation a request beginning now records (cachet-worker/src/sw/generations.rs), stamped on
    // the response and on the record as the worker does.
    record: (url, tags, now, generation) =>
      ({ url, cache: 'cachet-graphql-v2', tags, generation, storedAt: now, usedAt: now }),
    headers: (tags, generation) => ({ 'x-cachet-generation': `${generation} ${tags.join(',')}` }),
    async generation(db) {
      if (!db.objectStoreNames.contains('generations')) return 0;
      const clock = await idbRequest(db.transaction('generations').objectStore('generations').get(''));
      return clock ? clock.clock : 0;
    },
  },
  workbox: {
    cache: 'workbox-graphql',
    database: 'workbox-tags',
    url: (key) => `${location.origin}/__workbox/gql/${key}`,
    record: (url, tags) => ({ url, tags }),
    headers: () => ({}),
    generation: async () => 0,
  },
};

async function sha256Hex(text) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

// A 1 KB BenchItem answer, as the server sends it.
function itemText(id, size) {
  const head = `{"data":{"item":{"id":${id},"rev":0,"pad":"`;
  return head + 'x'.repeat(size - head.length - 4) + '"}}}';
}

// The traced worker's spans (see bench/sw/trace.js): `command` is 'reset' or 'report'.
function traceCommand(command) {
  return new Promise((resolve, reject) => {
    const channel = new BroadcastChannel('bench-trace');
    const timer = setTimeout(() => {
      channel.close();
      reject(new Error(`the traced worker did not answer '${command}'`));
    }, 10000);
    channel.onmessage = (event) => {
      clearTimeout(timer);
      channel.close();
      resolve(command === 'reset' ? event.data : JSON.parse(event.data));
    };
    channel.postMessage(command);
  });
}

window.bench = {
  // Registers `swUrl` (none: makes sure no worker controls the page) and resolves once it controls the page.
  async setup(swUrl) {
    if (!self.crossOriginIsolated) throw new Error('the page is not cross-origin isolated: coarse timers');
    if (!swUrl) {
      if (navigator.serviceWorker && navigator.serviceWorker.controller) throw new Error('unexpected controller');
      return { controlled: false };
    }
    await navigator.serviceWorker.register(swUrl);
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve));
    }
    return { controlled: true, script: navigator.serviceWorker.controller.scriptURL };
  },

  // A cache hit: one query fetched once, then `warmup` + `iterations` timed repeats (warm-up discarded).
  async hit(id, size, iterations, warmup) {
    await untimedQuery(id, size, 'bench-hit');
    const samples = [];
    const sources = [];
    for (let i = 0; i < warmup + iterations; i++) {
      const [elapsed, source] = await timedQuery(id, size, 'bench-hit');
      if (i >= warmup) {
        samples.push(elapsed);
        sources.push(source);
      }
    }
    return { samples, sources: sourceCounts(sources) };
  },

  // A miss: a new query each time (ids from `firstId`), answered by the server and stored.
  async miss(firstId, size, iterations, warmup) {
    const samples = [];
    const sources = [];
    for (let i = 0; i < warmup + iterations; i++) {
      const [elapsed, source] = await timedQuery(firstId + i, size, 'bench-miss');
      if (i >= warmup) {
        samples.push(elapsed);
        sources.push(source);
      }
    }
    return { samples, sources: sourceCounts(sources) };
  },

  // A miss of the ~1 KB query text (`TEXT_QUERY`) at `endpoint`: `/graphql` sends it whole,
  // `/graphql-apq` (persisted queries on, in the bench's config) as its hash, a GET once the server holds
  // it (the warm-up registers it).
  async missText(firstId, size, iterations, warmup, endpoint) {
    const samples = [];
    const sources = [];
    for (let i = 0; i < warmup + iterations; i++) {
      const [elapsed, source] = await timedQuery(firstId + i, size, 'bench-miss', {}, endpoint);
      if (i >= warmup) {
        samples.push(elapsed);
        sources.push(source);
      }
    }
    return { samples, sources: sourceCounts(sources) };
  },

  // A mutation that invalidates one cached query: the query is stored (untimed, and it must come from
  // the network: the previous mutation removed it), then the mutation is timed.
  async mutation(id, iterations, warmup) {
    const samples = [];
    const sources = [];
    for (let i = 0; i < warmup + iterations; i++) {
      const [, source] = await timedQuery(id, 1024, 'notes');
      sources.push(source);
      const init = mutationInit(id, 'notes');
      const started = performance.now();
      const response = await fetch('/graphql', init);
      const text = await response.text();
      const elapsed = performance.now() - started;
      checkMutation(text, id);
      if (i >= warmup) samples.push(elapsed);
    }
    return { samples, querySources: sourceCounts(sources) };
  },

  // Writes `count` entries (ids from `firstId`, 1 KB each) straight into `kind`'s storage, as if the
  // worker had stored them itself, each tagged `tag`, or `filler-<id % 100>` when `tag` is null. The
  // store path is timed by the miss workloads; storing ten thousand entries through it would take too
  // long (see BENCHMARKS.md).
  async seed(kind, firstId, count, tag = null) {
    const tagOf = (id) => tag || `filler-${id % 100}`;
    const started = performance.now();
    if (kind === 'floor') {
      const reply = await sendToWorker({ type: 'bench-seed', firstId, count, tag });
      if (reply.type !== 'ack') throw new Error(`bench-seed answered ${JSON.stringify(reply)}`);
      return { ms: performance.now() - started };
    }
    const storage = STORAGE[kind];
    const cache = await caches.open(storage.cache);
    const now = Date.now();
    // The worker created its database with its first store: open it as it is (no version, no upgrade).
    const db = await idbRequest(indexedDB.open(storage.database));
    const generation = await storage.generation(db);
    const entries = [];
    for (const id of range(firstId, count)) entries.push([id, await seededUrl(storage, id), [tagOf(id)]]);
    // The records first, then the entries, as the worker stores (cachet's sweep, which may run meanwhile,
    // deletes an entry without its record, and leaves a record without its entry alone for a while).
    const transaction = db.transaction('entries', 'readwrite');
    const done = new Promise((resolve, reject) => {
      transaction.oncomplete = resolve;
      transaction.onerror = () => reject(transaction.error);
    });
    for (const [, url, tags] of entries) {
      transaction.objectStore('entries').put(storage.record(url, tags, now, generation));
    }
    await done;
    await inBatches(entries, 32, async ([id, url, tags]) => {
      const headers =
        { 'content-type': 'application/json', 'x-cachet-stored-at': String(now), ...storage.headers(tags, generation) };
      await cache.put(url, new Response(itemText(id, 1024), { headers }));
    });
    db.close();
    return { ms: performance.now() - started };
  },

  // Fails unless `kind` holds the `count` entries `seed` wrote from `firstId` (the floor, whose count is
  // a number in its memory: `expected` entries).
  async holdsSeeded(kind, firstId, count, expected) {
    if (kind === 'floor') {
      const held = await this.storedCount(kind);
      if (held !== expected) throw new Error(`${held} entries after seeding, expected ${expected}`);
      return;
    }
    const storage = STORAGE[kind];
    const cache = await caches.open(storage.cache);
    for (const id of range(firstId, count)) {
      const url = await seededUrl(storage, id);
      if (!(await cache.match(url))) throw new Error(`entry ${id} (${url}) not there after seeding`);
    }
  },

  // How many entries `kind` holds: its Cache Storage cache, or the floor's memory.
  async storedCount(kind) {
    if (kind === 'floor') return (await sendToWorker({ type: 'bench-count' })).count;
    const cache = await caches.open(STORAGE[kind].cache);
    return (await cache.keys()).length;
  },

  // Invalidating `tag`, carried by `count` entries, with cachet's `invalidate-tags` message, timed until
  // the worker's ack. Two of the entries are real queries stored through the worker (ids `queries[0]`,
  // `queries[1]`), the others are seeded again before each round (ids from `firstId`, untimed). Checked
  // each round, not timed: the query sent as the `cache-invalidated` broadcast arrives and the one sent
  // right after the ack both reach the network (the state changed before either); then the worker
  // holds, once it has swept, exactly what it held before the seeding (the seeded entries are gone
  // from storage, the two queries were stored again).
  async invalidate(kind, firstId, count, tag, queries, iterations, warmup) {
    const samples = [];
    const sources = [];
    for (const id of queries) await untimedQuery(id, 1024, tag);
    const baseline = (await this.stable(kind)).held; // Workbox stores after answering

    for (let i = 0; i < warmup + iterations; i++) {
      await this.seed(kind, firstId, count - queries.length, tag);
      // Every seeded entry is there, read one by one: counting the whole cache here (`cache.keys()`:
      // ten thousand Requests made in the page) slowed the timed message that follows (10k cached: about
      // 7 ms where it takes 3 without the count). The count is checked after each round (`settled`).
      await this.holdsSeeded(kind, firstId, count - queries.length, baseline + count - queries.length);
      const onBroadcast = nextInvalidation(tag).then(() => timedQuery(queries[0], 1024, tag));
      const started = performance.now();
      const reply = await sendToWorker({ type: 'invalidate-tags', tags: [tag] });
      const elapsed = performance.now() - started;
      if (reply.type !== 'ack') throw new Error(`invalidate-tags answered ${JSON.stringify(reply)}`);
      const [, afterAck] = await timedQuery(queries[1], 1024, tag);
      const [, heard] = await onBroadcast;
      sources.push(heard, afterAck);
      await this.settled(kind, baseline, `invalidating ${tag}`);
      if (i >= warmup) samples.push(elapsed);
    }
    return { samples, entries: baseline, sources: sourceCounts(sources) };
  },

  // Waits until `kind` holds `expected` entries (a worker's sweep runs after its ack; Workbox stores
  // after answering), reading every 20 ms for at most 20 s.
  async settled(kind, expected, what) {
    const until = performance.now() + 20000;
    for (;;) {
      const held = await this.storedCount(kind);
      if (held === expected) return { held };
      if (performance.now() > until) throw new Error(`${held} entries after ${what}, expected ${expected}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  },

  // How many entries `kind` holds once two reads 100 ms apart agree (at most 20 s).
  async stable(kind) {
    let held = await this.storedCount(kind);
    const until = performance.now() + 20000;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const now = await this.storedCount(kind);
      if (now === held) return { held };
      if (performance.now() > until) throw new Error(`${kind} never settled: ${held}, then ${now} entries`);
      held = now;
    }
  },

  // Stores query `id` tagged `tag` through the worker and seeds `count - 1` more entries tagged `tag`:
  // what `invalidateOnly` then invalidates. Returns how many entries the worker held before.
  async storeTagged(kind, id, firstId, count, tag) {
    await untimedQuery(id, 1024, tag);
    const before = (await this.stable(kind)).held;
    await this.seed(kind, firstId, count - 1, tag);
    return { before };
  },

  // `invalidate-tags [tag]`, until the ack (the runner may stop the worker after it).
  async invalidateOnly(tag) {
    const reply = await sendToWorker({ type: 'invalidate-tags', tags: [tag] });
    if (reply.type !== 'ack') throw new Error(`invalidate-tags answered ${JSON.stringify(reply)}`);
    return { ack: true };
  },

  // One query, untimed: its source.
  async query(id, tag) {
    const [, source] = await timedQuery(id, 1024, tag);
    return { source };
  },

  // A mutation invalidates a stored query: timed from the mutation's fetch to the `cache-invalidated`
  // broadcast received here (what a hook listens to), and to the fresh data read again (what a hook would
  // render).
  async invalidationToFresh(id, iterations, warmup) {
    const toEvent = [];
    const toFresh = [];
    const sources = [];
    for (let i = 0; i < warmup + iterations; i++) {
      await untimedQuery(id, 1024, 'live');
      const init = mutationInit(id, 'live');
      const invalidated = nextInvalidation('live');
      const started = performance.now();
      const response = await fetch('/graphql', init);
      checkMutation(await response.text(), id);
      const arrived = await invalidated;
      const [, source] = await timedQuery(id, 1024, 'live');
      const fresh = performance.now();
      sources.push(source);
      if (i >= warmup) {
        toEvent.push(arrived - started);
        toFresh.push(fresh - started);
      }
    }
    return { samples: toEvent, toFresh, refetchSources: sourceCounts(sources) };
  },

  // The profile phase, against a traced worker: the spans of `iterations` hits (and of the first read,
  // itself a hit after the warm-up).
  async traceHits(id, size, iterations, warmup) {
    await this.hit(id, size, 0, warmup);
    await traceCommand('reset');
    const out = await this.hit(id, size, iterations, 0);
    return { samples: out.samples, requests: iterations + 1, spans: await traceCommand('report') };
  },

  async traceMisses(firstId, size, iterations) {
    await traceCommand('report'); // what ran before settles
    await traceCommand('reset');
    const out = await this.miss(firstId, size, iterations, 0);
    return { samples: out.samples, requests: iterations, spans: await traceCommand('report') };
  },

  // Each round seeds the tagged entries again (untraced), then traces the invalidation alone.
  async traceInvalidations(kind, firstId, count, tag, rounds) {
    const spans = {};
    const samples = [];
    const baseline = await this.storedCount(kind);
    for (let round = 0; round < rounds; round++) {
      await this.settled(kind, baseline, 'the previous round'); // its sweep, untraced
      await this.seed(kind, firstId, count, tag);
      await traceCommand('report'); // what ran before settles
      await traceCommand('reset');
      const started = performance.now();
      const reply = await sendToWorker({ type: 'invalidate-tags', tags: [tag] });
      samples.push(performance.now() - started);
      if (reply.type !== 'ack') throw new Error(`invalidate-tags answered ${JSON.stringify(reply)}`);
      for (const [name, span] of Object.entries(await traceCommand('report'))) {
        const total = spans[name] || { count: 0, ms: 0, wall: 0 };
        spans[name] = { count: total.count + span.count, ms: total.ms + span.ms, wall: total.wall + span.wall };
      }
    }
    return { samples, requests: rounds, spans };
  },

  // On hook.html (the use_cachet_gql app): from a mutation's fetch until `#item` shows the next revision
  // of the item, i.e. the hook heard the invalidation, fetched again and re-rendered; and until the
  // `cache-invalidated` broadcast reached this page, for comparison with `invalidationToFresh`.
  async hookRerender(id, iterations, warmup) {
    const revision = () => {
      const match = /^rev (\d+) live$/.exec((document.querySelector('#item') || {}).textContent || '');
      return match ? Number(match[1]) : null;
    };
    const rendered = (predicate, what) => new Promise((resolve, reject) => {
      if (predicate()) return resolve(performance.now());
      const timer = setTimeout(() => {
        observer.disconnect();
        reject(new Error(`the hook never rendered ${what}; #item reads ${revision()}`));
      }, 10000);
      const observer = new MutationObserver(() => {
        if (!predicate()) return;
        const at = performance.now();
        clearTimeout(timer);
        observer.disconnect();
        resolve(at);
      });
      observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await rendered(() => revision() !== null, 'its first data');
    const first = revision();
    const samples = [];
    const toEvent = [];
    for (let i = 0; i < warmup + iterations; i++) {
      const before = revision();
      const invalidated = nextInvalidation('hook');
      const init = mutationInit(id, 'hook');
      const started = performance.now();
      const response = await fetch('/graphql', init);
      checkMutation(await response.text(), id);
      const done = await rendered(() => revision() === before + 1, `rev ${before + 1}`);
      const heard = await invalidated;
      if (i >= warmup) {
        samples.push(done - started);
        toEvent.push(heard - started);
      }
    }
    return { samples, toEvent, first, last: revision() };
  },

  // A cold start against a traced worker (the runner stops it first): the query as `once` times it, with
  // the page's fetch start and body end on the clock the worker's timeline uses (Unix ms,
  // performance.timeOrigin based), and that timeline (see bench/sw/trace.js).
  async traceCold(id, size) {
    const started = performance.timeOrigin + performance.now();
    const [elapsed, source] = await timedQuery(id, size, 'bench-cold');
    const ended = performance.timeOrigin + performance.now();
    const timeline = await traceCommand('timeline');
    return { started, ended, samples: [elapsed], sources: sourceCounts([source]), timeline };
  },

  // One query timed alone: the runner stops the worker before each call (cold start).
  async once(id, size) {
    const [elapsed, source] = await timedQuery(id, size, 'bench-cold');
    return { samples: [elapsed], sources: sourceCounts([source]) };
  },

  // One query nobody stored, timed alone, the server answering `delay` ms late (the runner stops the
  // worker before each call: a cold miss).
  async coldMiss(id, size, delay) {
    const [elapsed, source] = await timedQuery(id, size, 'bench-cold-miss', { 'x-bench-delay': String(delay) });
    return { samples: [elapsed], sources: sourceCounts([source]) };
  },

  // One GET of `url` (a script), timed until its body arrived (the runner stops the worker first).
  async coldAsset(url, expected) {
    const started = performance.now();
    const response = await fetch(url);
    const text = await response.text();
    const elapsed = performance.now() - started;
    if (response.status !== 200 || text !== expected) {
      throw new Error(`${url}: HTTP ${response.status}, ${text.length} bytes`);
    }
    return { samples: [elapsed], sources: sourceCounts([response.headers.get('x-cachet-source')]) };
  },
};
