// Bench only: where a worker's time goes. Loaded by traced-sw.js before the worker's own scripts in the
// profile phase of `cargo xtask bench` (never in the timed runs), it wraps the browser APIs a worker
// awaits (Cache Storage, IndexedDB, fetch, body reads, crypto.subtle) and the fetch event's respondWith,
// and sums, per operation, how often it ran and how long its promise or request took to settle. The
// worker's code is untouched: wasm-bindgen's glue calls these methods on the objects, so it goes
// through the wrappers like Workbox's JS does. Controlled over BroadcastChannel('bench-trace'):
// 'reset' (answered 'reset-done') and 'report' (answered with {name: {count, ms, wall}} as JSON, once
// every traced operation has settled).
//
// For a cold start it also keeps the timeline of this worker instance from its start ('timeline',
// answered with {origin, events: [[name, start, end]]}, times in ms since `origin`, the worker's
// performance.timeOrigin): every span above (IndexedDB opens named by database), each importScripts,
// WebAssembly's compile and instantiate calls, the fetch event's dispatch, and the moments the engine
// reads its config (`self.CACHET_CONFIG`) and installs itself (`self.__cachet_engine`).
(() => {
  let spans = new Map();
  const timeline = [];
  // Bounded: a worker traced through thousands of operations keeps its first ones (its start).
  const mark = (name, started, ended = started) => {
    if (timeline.length < 2000) timeline.push([name, started, ended]);
  };
  mark('trace.js evaluated', performance.now());
  self.benchTraceMark = (name) => mark(name, performance.now());
  const inFlight = new Set();
  const track = (promise) => {
    const settledPromise = Promise.resolve(promise).then(() => {}, () => {});
    inFlight.add(settledPromise);
    settledPromise.then(() => inFlight.delete(settledPromise));
  };
  // Per operation: how many, their summed durations, and their intervals (for the wall time they cover
  // together: concurrent calls overlap); `as`: its name on the timeline (`null`: none).
  const add = (name, started, as = name) => {
    const ended = performance.now();
    const span = spans.get(name) || { count: 0, ms: 0, intervals: [] };
    span.count += 1;
    span.ms += ended - started;
    span.intervals.push([started, ended]);
    spans.set(name, span);
    if (as !== null) mark(as, started, ended);
  };
  const wall = (intervals) => {
    let total = 0;
    let reach = -Infinity;
    for (const [start, end] of [...intervals].sort((a, b) => a[0] - b[0])) {
      if (end > reach) {
        total += end - Math.max(start, reach);
        reach = end;
      }
    }
    return total;
  };
  const settled = (name, started) => [() => add(name, started), () => add(`${name} (failed)`, started)];

  function wrapPromise(target, method, name) {
    const original = target[method];
    if (typeof original !== 'function') return;
    target[method] = function (...args) {
      const started = performance.now();
      const result = original.apply(this, args);
      if (result && typeof result.then === 'function') {
        result.then(...settled(name, started));
        track(result);
      }
      return result;
    };
  }

  function wrapRequest(target, method, name) {
    const original = target[method];
    if (typeof original !== 'function') return;
    target[method] = function (...args) {
      const started = performance.now();
      const request = original.apply(this, args);
      track(new Promise((resolve) => {
        request.addEventListener('success', () => { add(name, started); resolve(); });
        request.addEventListener('error', resolve);
      }));
      return request;
    };
  }

  for (const method of ['open', 'delete', 'keys', 'has']) wrapPromise(CacheStorage.prototype, method, `caches.${method}`);
  // On the timeline, named by the cache it reads (a build hash left out).
  const cachesMatch = CacheStorage.prototype.match;
  CacheStorage.prototype.match = function (request, options, ...rest) {
    const started = performance.now();
    const result = cachesMatch.call(this, request, options, ...rest);
    const cache = ((options && options.cacheName) || 'every cache').replace(/-[0-9a-f]{8,}$/, '-<build>');
    result.then(() => add('caches.match', started, `caches.match (${cache})`), () => add('caches.match (failed)', started));
    track(result);
    return result;
  };
  for (const method of ['match', 'put', 'delete', 'keys']) wrapPromise(Cache.prototype, method, `cache.${method}`);
  for (const method of ['arrayBuffer', 'text', 'json']) {
    wrapPromise(Request.prototype, method, `request.${method}()`);
    wrapPromise(Response.prototype, method, `response.${method}()`);
  }
  wrapPromise(SubtleCrypto.prototype, 'digest', 'crypto.subtle.digest');
  wrapPromise(self, 'fetch', 'fetch (to the server)');
  const open = IDBFactory.prototype.open;
  IDBFactory.prototype.open = function (name, ...rest) {
    const started = performance.now();
    const request = open.call(this, name, ...rest);
    track(new Promise((resolve) => {
      request.addEventListener('success', () => { add('indexedDB.open', started, `indexedDB.open ${name}`); resolve(); });
      request.addEventListener('error', resolve);
    }));
    return request;
  };
  for (const method of ['compile', 'compileStreaming', 'instantiate', 'instantiateStreaming']) {
    wrapPromise(WebAssembly, method, `WebAssembly.${method}`);
  }
  const importScripts = self.importScripts;
  self.importScripts = function (...urls) {
    const started = performance.now();
    try {
      return importScripts.apply(this, urls);
    } finally {
      mark(`importScripts ${urls.join(', ')}`, started, performance.now());
    }
  };
  // The moments an engine reads its config and installs itself (wasm-bindgen's Reflect calls): the
  // start module (`__cachet_start_engine`), which a stopped worker loads, and the whole engine.
  const installed = { __cachet_engine: 'engine installed (self.__cachet_engine set)',
    __cachet_start_engine: 'start module installed (self.__cachet_start_engine set)' };
  for (const name of ['CACHET_CONFIG', '__cachet_engine', '__cachet_start_engine']) {
    let value;
    Object.defineProperty(self, name, {
      configurable: true,
      get() { if (name === 'CACHET_CONFIG') mark('engine reads self.CACHET_CONFIG', performance.now()); return value; },
      set(next) { if (installed[name]) mark(installed[name], performance.now()); value = next; },
    });
  }
  self.addEventListener('fetch', () => mark('fetch event dispatched', performance.now()));
  for (const method of ['get', 'put', 'add', 'delete', 'getAll', 'getAllKeys', 'count', 'clear']) {
    wrapRequest(IDBObjectStore.prototype, method, `idb store.${method}`);
  }
  for (const method of ['get', 'getAll', 'getAllKeys', 'count', 'getKey']) {
    wrapRequest(IDBIndex.prototype, method, `idb index.${method}`);
  }
  const transaction = IDBDatabase.prototype.transaction;
  IDBDatabase.prototype.transaction = function (...args) {
    const started = performance.now();
    const created = transaction.apply(this, args);
    track(new Promise((resolve) => {
      created.addEventListener('complete', () => {
        const stores = [...created.objectStoreNames].join(', ');
        add(`idb transaction (${created.mode})`, started, `idb transaction (${created.mode}: ${stores})`);
        resolve();
      });
      created.addEventListener('abort', resolve);
    }));
    return created;
  };
  const respondWith = FetchEvent.prototype.respondWith;
  FetchEvent.prototype.respondWith = function (response) {
    Promise.resolve(response).then(...settled('fetch event → respondWith settled', performance.now()));
    track(response);
    return respondWith.call(this, response);
  };
  // A page message until the worker posts its answer to the page.
  let messageAt = 0;
  self.addEventListener('message', () => { messageAt = performance.now(); });
  const postMessage = Client.prototype.postMessage;
  Client.prototype.postMessage = function (...args) {
    add('message event → answer posted', messageAt);
    return postMessage.apply(this, args);
  };

  const channel = new BroadcastChannel('bench-trace');
  // 'report' answers once every traced operation has settled (Workbox stores after answering).
  channel.onmessage = async (event) => {
    if (event.data === 'reset') {
      spans = new Map();
      timeline.length = 0;
      channel.postMessage('reset-done');
    }
    if (event.data === 'timeline') {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      channel.postMessage(JSON.stringify({ origin: performance.timeOrigin, events: timeline }));
    }
    if (event.data === 'report') {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      const report = {};
      for (const [name, span] of spans) report[name] = { count: span.count, ms: span.ms, wall: wall(span.intervals) };
      channel.postMessage(JSON.stringify(report));
    }
  };
})();
