// Bench only: where a worker's time goes. Loaded by traced-sw.js before the worker's own scripts in the
// profile phase of `cargo xtask bench` (never in the timed runs), it wraps the browser APIs a worker
// awaits (Cache Storage, IndexedDB, fetch, body reads, crypto.subtle) and the fetch event's respondWith,
// and sums, per operation, how often it ran and how long its promise or request took to settle. The
// worker's code is untouched: wasm-bindgen's glue calls these methods on the objects, so it goes
// through the wrappers like Workbox's JS does. Controlled over BroadcastChannel('bench-trace'):
// 'reset' (answered 'reset-done') and 'report' (answered with {name: {count, ms, wall}} as JSON, once
// every traced operation has settled).
(() => {
  let spans = new Map();
  const inFlight = new Set();
  const track = (promise) => {
    const settledPromise = Promise.resolve(promise).then(() => {}, () => {});
    inFlight.add(settledPromise);
    settledPromise.then(() => inFlight.delete(settledPromise));
  };
  // Per operation: how many, their summed durations, and their intervals (for the wall time they cover
  // together: concurrent calls overlap).
  const add = (name, started) => {
    const ended = performance.now();
    const span = spans.get(name) || { count: 0, ms: 0, intervals: [] };
    span.count += 1;
    span.ms += ended - started;
    span.intervals.push([started, ended]);
    spans.set(name, span);
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

  for (const method of ['open', 'match', 'delete', 'keys', 'has']) wrapPromise(CacheStorage.prototype, method, `caches.${method}`);
  for (const method of ['match', 'put', 'delete', 'keys']) wrapPromise(Cache.prototype, method, `cache.${method}`);
  for (const method of ['arrayBuffer', 'text', 'json']) {
    wrapPromise(Request.prototype, method, `request.${method}()`);
    wrapPromise(Response.prototype, method, `response.${method}()`);
  }
  wrapPromise(SubtleCrypto.prototype, 'digest', 'crypto.subtle.digest');
  wrapPromise(self, 'fetch', 'fetch (to the server)');
  wrapRequest(IDBFactory.prototype, 'open', 'indexedDB.open');
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
        add(`idb transaction (${created.mode})`, started);
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
      channel.postMessage('reset-done');
    }
    if (event.data === 'report') {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      const report = {};
      for (const [name, span] of spans) report[name] = { count: span.count, ms: span.ms, wall: wall(span.intervals) };
      channel.postMessage(JSON.stringify(report));
    }
  };
})();
