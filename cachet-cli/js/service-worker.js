// cachet Service Worker shim. Generic: the same file for every app; what differs per app lives in
// cachet-sw-config.js (generated from cachet.config.json) and cachet-build.js (the build's stamp and its
// list of files, written at build time).
//
// Browsers only honour listeners added during the script's first evaluation, and wasm loads
// asynchronously, so this shim adds every listener synchronously and awaits the engine inside them.
// It routes synchronously: a request it does not route gets no respondWith and goes to the network
// untouched, paying nothing.
/* global wasm_bindgen, cachet_sw_start */
// One at a time, so that a file that does not load is named (the page's registration fails with the
// browser's generic reason; <CachetProvider> then fetches each file and names the missing ones too).
function importAll(scripts) {
  for (const script of scripts) {
    try {
      importScripts(script);
    } catch (error) {
      console.error('cachet: ' + new URL(script, self.location).href + ' did not load: ' + error);
      throw error;
    }
  }
}
// The start module's glue (`cachet-sw-start.js`, whose global the build-stamp hook renamed
// `cachet_sw_start`) only where the build has one (`self.CACHET_START`, written by that hook). The whole
// engine's glue (`cachet-sw.js`) is evaluated as the script is in the worker's first evaluation (its
// install's: `self.serviceWorker.state` is `parsed`, or the browser does not say), and otherwise when the
// whole engine takes over (`importWholeGlue`): the Service Worker spec lets a later start import what
// the install imported, and nothing else. A stopped worker's start then evaluates one glue, not two
// (BENCHMARKS.md, sessions 29 and 32). Tested: restarted workers in Chromium take over this way; each
// browser's rule (Chromium, Firefox ESR, WebKit) by a probe worker of the suite. Firefox ESR has no
// `self.serviceWorker`: it evaluates both glues at every start, as before.
importAll(['./cachet-sw-config.js', './cachet-build.js']);
const START = self.CACHET_START === true;
const FIRST_EVALUATION = !self.serviceWorker || self.serviceWorker.state === 'parsed';
let wholeGlue = false;
function importWholeGlue() {
  if (!wholeGlue) importAll(['./cachet-sw.js']);
  wholeGlue = true;
}
if (!START || FIRST_EVALUATION) importWholeGlue();
// The start module's glue likewise: at the install's evaluation, else when the start module is first
// needed (`start`), so that a hit the shim answers from its name (`servedAlone`) evaluates no glue.
let startGlue = false;
function importStartGlue() {
  if (!startGlue) importAll(['./cachet-sw-start.js']);
  startGlue = true;
}
if (START && FIRST_EVALUATION) importStartGlue();

const ROUTES = self.CACHET_ROUTES || { passThrough: [], graphqlEndpoints: [], fetchEarly: false };
const BUILD = self.CACHET_BUILD || 'unstamped';
const WASM_URL = new URL('./cachet-sw_bg.wasm', self.location).href;
const START_WASM_URL = new URL('./cachet-sw-start_bg.wasm', self.location).href;
const WASM_CACHE_PREFIX = 'cachet-sw-wasm-';
const WASM_CACHE = WASM_CACHE_PREFIX + BUILD;

// The .wasm is not stored with the SW script (importScripts files are; fetched files are not), so it
// is kept in Cache Storage under the build hash: a stopped SW restarts even while the server is down.
// One read when it is there (caches.match naming the cache opens nothing); the Response goes to
// wasm-bindgen as it is, which compiles it while it streams (WebAssembly.instantiateStreaming).
const fetchedWasm = new Set();
async function wasmSource(url) {
  const stored = await caches.match(url, { cacheName: WASM_CACHE });
  if (stored) return stored;
  const fetched = await fetch(url, { cache: 'no-store' });
  if (!fetched.ok) throw new Error('cachet: loading ' + url + ' failed with HTTP ' + fetched.status);
  await (await caches.open(WASM_CACHE)).put(url, fetched.clone());
  fetchedWasm.add(url);
  return fetched;
}

// Whether this build's engine lets the shim hand what the browser loads to the page before the engine
// runs (`handOver`; the engine's `handsOver()`: no plugin of the app's may change network answers), kept
// next to the build's wasm when the wasm is kept (at install, or after the copy was lost) and read as
// the script is evaluated (only where a request can be handed over: ROUTES.fetchEarly, the config's
// default strategy begins with the network). No record: every routed request waits for the engine.
const HANDS_OVER_URL = new URL('./cachet-sw-hands-over', self.location).href;
async function keepHandsOver(engine) {
  const cache = await caches.open(WASM_CACHE);
  if (engine.handsOver()) await cache.put(HANDS_OVER_URL, new Response('1'));
  else await cache.delete(HANDS_OVER_URL);
}
const handsOverKept = ROUTES.fetchEarly
  ? caches.match(HANDS_OVER_URL, { cacheName: WASM_CACHE }).then((kept) => kept !== undefined, () => false)
  : Promise.resolve(false);

// The app shell: the build's own files (`self.CACHET_PRECACHE`, listed by the build-stamp hook), kept
// at install as one set named after the build, as Workbox precaches. The engine answers from it when the
// network fails and its own cache has nothing (`cachet.config.json`'s bounds apply to what the engine
// stores as it runs, not to this set). A file that does not load fails the install, naming it: the
// worker already installed keeps serving, and the browser tries again at its next update check.
const PRECACHE = self.CACHET_PRECACHE || [];
const SHELL_CACHE_PREFIX = 'cachet-shell-';
const SHELL_CACHE = SHELL_CACHE_PREFIX + BUILD;
async function precache() {
  const cache = await caches.open(SHELL_CACHE);
  await Promise.all(PRECACHE.map(async (path) => {
    const url = new URL(path, self.location).href;
    if (await cache.match(url)) return; // an install that was interrupted and started again
    const response = await fetch(url, { cache: 'no-cache' });
    if (!response.ok) throw new Error('cachet: the app shell\'s ' + url + ' answered HTTP ' + response.status);
    await cache.put(url, response);
  }));
}

// Two engines where the build has a start module (`START`; cachet-worker's `sw::start`): the start
// module, the engine's fetch path alone, loaded at the first fetch event that needs an engine (`start`),
// takes the fetch events of a worker that just started; the whole engine (`cachet-sw_bg.wasm`) takes over at the first event the
// start module does not handle (a message, a push, a sync, an activation, a request it leaves: a
// mutation; a network answer to store, which the start module hands over: `storeLater`), or after a
// second without fetch events (`upkeepWhenQuiet`: the start-up work no answer waits for), and keeps
// every event after that. One engine at a time: the whole
// engine gets its first event once the start module is idle (everything it took has settled, but for a
// request waiting on the network: cachet-worker's `sw::busy`), and the start module gets none after. Without a start module, the whole engine takes every event.
let wholePromise = null;
let tookOver = false; // once the whole engine takes every event
let startPromise = null; // the start module's load, once begun (`start`)
let startEngine = null; // once it has loaded
let engineReady = false; // once either engine has loaded: the shim answers nothing from names then
let wholeEngine = null; // once the whole engine takes its first event (`invalidationsSoFar`)
function whole() {
  if (wholePromise === null) {
    const before = startEngine === null ? undefined : startEngine.idle();
    tookOver = true; // no event goes to the start module from now on
    // A glue that does not import is the whole engine's failure to load (reported below, tried again).
    const loaded = Promise.resolve().then(() => {
      importWholeGlue();
      return wasm_bindgen({ module_or_path: wasmSource(WASM_URL) });
    }).then(async () => {
      const loaded = self.__cachet_engine;
      if (fetchedWasm.delete(WASM_URL)) {
        await keepHandsOver(loaded).catch((error) => console.warn('cachet: ' + HANDS_OVER_URL + ' not kept: ' + error));
      }
      return loaded;
    });
    // The start module's `idle()` resolves to the marks of use its hits kept (cachet-worker's
    // `sw::store_later`) and the namings of its hits served alone (`sw::names`), written by the whole
    // engine before its first event, the marks with those of the hits the shim answered from names
    // (`servedAlone`).
    wholePromise = Promise.all([loaded, before]).then(async ([loaded, handed]) => {
      engineReady = true;
      wholeEngine = loaded;
      const [touched, named] = handed || [[], []];
      const marks = touched.concat(Array.from(aloneTouches));
      aloneTouches.clear();
      if (marks.length > 0 || named.length > 0) {
        await loaded.touch(marks, named).catch((error) => console.warn('cachet: marks of use or request names not kept: ' + error));
      }
      return loaded;
    });
    wholePromise.catch((error) => {
      console.error('cachet: the engine ' + WASM_URL + ' did not load: ' + error);
      wholePromise = null; // try again on the next event
    });
  }
  return wholePromise;
}

// `call(engine)` on the engine whose turn it is for a fetch event, called in the same step as the check
// (the whole engine may take over while the start module loads: a fetch not yet given to it goes to the
// whole engine). A start module that did not load leaves it to the whole engine. Resolves to
// `{ result }`, so that a caller tells an engine that did not load (a rejection) from a `result` that
// rejects.
async function onEngine(call) {
  if (START && !tookOver) {
    const engine = await start().catch(() => null);
    if (engine !== null && !tookOver) return { result: call(engine) };
  }
  return { result: call(await whole()) };
}

// A network answer the start module gave, for the whole engine to store (cachet-worker's
// `sw::store_later`: the start module links no store): the whole engine takes over for it, and stores
// it before it gets any later event (this `then` is registered first), so that a lookup of the entry
// waits for the store. The start module keeps the worker alive until the promise settles.
self.__cachet_store_later = (job) => whole().then((engine) => engine.store(job)).catch((error) => {
  console.warn('cachet: ' + job.url + ' was answered, not stored: ' + error);
});

// The start module, loaded at the first fetch event that needs an engine: one the shim cannot answer
// from a name (`servedAlone`). A hit answered from a name then waits for no wasm: loading the engine as
// the script is evaluated cost such a hit 3-4 ms of the worker's one thread (BENCHMARKS.md, session 33).
// One that does not load leaves every event to the whole engine.
function start() {
  if (startPromise === null) {
    startPromise = Promise.resolve().then(() => {
      importStartGlue();
      return cachet_sw_start({ module_or_path: wasmSource(START_WASM_URL) });
    }).then(() => {
      startEngine = self.__cachet_start_engine;
      engineReady = true;
      return startEngine;
    });
    startPromise.catch((error) => {
      console.warn('cachet: the start module ' + START_WASM_URL + ' did not load, the whole engine answers: ' + error);
    });
  }
  return startPromise;
}
if (!START) whole();

// Request names (cachet-worker's `sw::names`): the engine names a hit it served alone (a fresh
// cache-first or cache-only entry: cachet_core::engine::plan::served_alone_until) with the name the
// shim gave the request, in the build's names cache: a body-less response whose headers point at the
// entry (its cache, its URL, its stored-at mark) and say until when. Until an engine has loaded, the
// shim answers a request whose name it finds, still fresh, whose entry is there with the same stored-at
// mark, with that entry: the stored response the engine would answer with. It decides nothing else: the
// engine writes only what it would answer alone, and forgets every name before a change of answers
// (an invalidation, an identity written, clear-all) is acknowledged; a new build has its own cache.
const NAMES_CACHE_PREFIX = 'cachet-names-';
const NAMES_CACHE = NAMES_CACHE_PREFIX + BUILD;
const NAME_ENTRY_CACHE = 'x-cachet-entry-cache';
const NAME_ENTRY_URL = 'x-cachet-entry-url';
const NAME_UNTIL = 'x-cachet-served-alone-until';
const STORED_AT = 'x-cachet-stored-at';
const SOURCE = 'x-cachet-source';
const NAMES_URL = new URL('./cachet-name/', self.location).href;
const CAN_NAME = typeof crypto === 'object' && crypto !== null && typeof crypto.subtle === 'object'
  && typeof TextEncoder === 'function';
// The name of a request: the SHA-256 of the whole request as the browser gives it (its method, URL and
// every header, in the Headers order, as JSON text, which has no 0 byte; a 0 byte; the body), as a URL.
// The same bytes name the same answer whatever the engine reads of them.
async function nameOf(request, body) {
  const head = new TextEncoder().encode(JSON.stringify([request.method, request.url, [...request.headers]]));
  const bytes = new Uint8Array(head.length + 1 + (body ? body.length : 0));
  bytes.set(head);
  if (body) bytes.set(body, head.length + 1);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return NAMES_URL + Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
// The marks of use of the hits answered from names (entry URL -> time), handed to the whole engine with
// the start module's as it takes over.
const aloneTouches = new Map();
async function servedAlone(name) {
  const pointer = await caches.match(name, { cacheName: NAMES_CACHE });
  if (!pointer || !(Date.now() < Number(pointer.headers.get(NAME_UNTIL)))) return undefined;
  const url = pointer.headers.get(NAME_ENTRY_URL);
  const entry = await caches.match(url, { cacheName: pointer.headers.get(NAME_ENTRY_CACHE) });
  // The engine answers an entry stored marked as it is, and wraps one stored before the mark: that one
  // is the engine's to answer.
  if (!entry || entry.headers.get(STORED_AT) !== pointer.headers.get(STORED_AT)
    || entry.headers.get(SOURCE) !== 'cache') return undefined;
  aloneTouches.set(url, Date.now());
  return entry;
}

// The engine's IndexedDB database (`self.CACHET_DATABASE`: its name, its version and what a first
// answer reads, written by `cachet generate` from cachet_core::protocol::storage), opened and read as
// the script is evaluated, for the same reason: a stopped worker's first answer from the engine needs
// the signed-in user and the generations, and their open and read (4-8 ms) then run while the wasm
// compiles instead of after. (Opened only once an engine is needed, a hit answered from a name was no
// faster: BENCHMARKS.md, session 34.) Only a database already at that version is opened here: an
// upgrade (the first start, a build with a new layout) is aborted and left to the engine, which opens the database itself whenever
// this gives it nothing (null). The engine takes the promise once (`self.__cachet_database`: the
// connection and the records read, in the order of `reads`, or null when the read failed) and checks
// what it gets (name, version, stores).
// <openDatabaseEarly> (to here and </openDatabaseEarly>: what cachet-worker's test
// service_worker_shim_database.rs evaluates on its own)
function openDatabaseEarly() {
  const wanted = self.CACHET_DATABASE;
  if (!wanted || typeof indexedDB === 'undefined') return null;
  const settled = (request) => new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const read = async (database) => {
    try {
      const reads = wanted.reads || [];
      const transaction = database.transaction([...new Set(reads.map(([store]) => store))], 'readonly');
      return await Promise.all(reads.map(([store, key]) => {
        const source = transaction.objectStore(store);
        return settled(key === null ? source.getAll() : source.get(key));
      }));
    } catch (error) {
      return null; // the engine reads them itself
    }
  };
  return new Promise((resolve) => {
    let given = false;
    const give = (opened) => {
      if (!given) resolve(opened);
      else if (opened) opened.database.close(); // opened after the engine was told there is nothing
      given = true;
    };
    let request;
    try {
      request = indexedDB.open(wanted.name, wanted.version);
    } catch (error) {
      give(null);
      return;
    }
    request.onupgradeneeded = () => request.transaction.abort();
    request.onblocked = () => give(null);
    request.onerror = (event) => {
      event.preventDefault();
      give(null);
    };
    request.onsuccess = async () => {
      const database = request.result;
      // As the engine's own connections do: a later build's upgrade must not wait for this one.
      database.onversionchange = () => database.close();
      give({ database, records: await read(database) });
    };
  });
}
// </openDatabaseEarly>
self.__cachet_database = openDatabaseEarly();

// The rule of cachet_core::config::SwRoutes: same origin, and either a GET not at or below a
// pass-through path, or a POST to a GraphQL endpoint.
function routed(request) {
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return false;
  if (request.method === 'POST') return ROUTES.graphqlEndpoints.includes(url.pathname);
  if (request.method !== 'GET') return false;
  return !ROUTES.passThrough.some((path) => url.pathname === path || url.pathname.startsWith(path + '/'));
}

// Whether a routed request's job begins with the network whatever the engine reads: a GET, not to a
// GraphQL endpoint (a GraphQL GET is a query), none of cachet's request headers, the config's default
// strategy network-first or network-only (ROUTES.fetchEarly). The core's rules below build on it.
function beginsWithTheNetwork(request) {
  if (!ROUTES.fetchEarly || request.method !== 'GET') return false;
  if (ROUTES.graphqlEndpoints.includes(new URL(request.url).pathname)) return false;
  for (const name of request.headers.keys()) {
    if (name === 'x-sw-strategy' || name.startsWith('x-cachet-')) return false;
  }
  return true;
}

// The rule of cachet_core::config::SwRoutes::fetches_early: such a request, not a navigation (which the
// browser preloads). It is sent now, and the engine's network step takes this answer, as it takes a
// navigation's preload: sent once, while a stopped worker starts.
function fetchesEarly(request) {
  return request.mode !== 'navigate' && beginsWithTheNetwork(request);
}

// The rule of cachet_core::config::SwRoutes::hands_over: such a request that the browser makes for a
// document, a script, a stylesheet, an image... (a `destination`; not a `fetch()` or an XHR, whose code
// reads the answer's headers, `X-Cachet-Not-Stored` among them). Its 2xx answer (a navigation's
// preload, another's early send) goes to the page as it streams in (`handOver`).
function handsOver(request) {
  return request.destination !== '' && beginsWithTheNetwork(request);
}

// Work that would hold the page's burst of requests up, done once no routed request's answer is open
// (its `respondWith` settled) and the worker has had no fetch event for QUIET_MS, or at the latest
// MOST_MS after the first piece, in order: the copies of the answers handed over, run through the
// engine (which stores them as network-first does). A page asks for its scripts, stylesheets and images
// as its document arrives, and the engine's work on each copy (its wasm's first calls compiled, the
// whole engine loaded, the store read and written) would hold those requests' answers up: with QUIET_MS
// counted from the last fetch event alone, a network's round trip of about QUIET_MS made the work run as
// the page's scripts' answers came in (BENCHMARKS.md: a navigation's load at 50 ms 1.08-1.12x -> 1.03-
// 1.08x no worker, session 35). Each piece keeps its event alive (waitUntil) until it is done.
const QUIET_MS = 50;
const MOST_MS = 1000;
const quietWork = [];
let quietTimer = null;
let firstQueuedAt = 0;
let openAnswers = 0; // routed requests whose answer is not given yet
function whenQuiet(event, work) {
  event.waitUntil(new Promise((resolve) => {
    quietWork.push({ work, resolve });
    armQuietTimer();
  }));
}
function armQuietTimer() {
  if (quietWork.length === 0) return;
  if (firstQueuedAt === 0) firstQueuedAt = Date.now();
  clearTimeout(quietTimer);
  const most = Math.max(0, firstQueuedAt + MOST_MS - Date.now());
  quietTimer = setTimeout(async () => {
    quietTimer = null;
    firstQueuedAt = 0;
    for (const { work, resolve } of quietWork.splice(0)) {
      await work();
      resolve();
    }
  }, openAnswers > 0 ? most : Math.min(QUIET_MS, most));
}
// `answered` (a routed request's answer) counted open until it settles.
function whileOpen(answered) {
  openAnswers += 1;
  armQuietTimer();
  answered.then(() => undefined, () => undefined).then(() => {
    openAnswers -= 1;
    armQuietTimer();
  });
  return answered;
}
// The whole engine's start-up work (`upkeep()`: the queue's start replay, the sweep), which loads it, once
// a worker whose start module takes its fetch events has had none for UPKEEP_QUIET_MS: later than the
// work above, so that the whole engine's compile does not compete with a page that is still loading
// (BENCHMARKS.md, session 29). The first such event keeps the worker alive until it is done.
const UPKEEP_QUIET_MS = 1000;
let upkeepTimer = null;
let upkeepDone = null;
function upkeepWhenQuiet(event) {
  if (upkeepDone === null) event.waitUntil(new Promise((resolve) => { upkeepDone = resolve; }));
  clearTimeout(upkeepTimer);
  upkeepTimer = setTimeout(() => {
    whole().then((engine) => engine.upkeep()).catch((error) => {
      console.warn('cachet: the start-up work did not run: ' + error);
    }).then(upkeepDone);
  }, UPKEEP_QUIET_MS);
}

// An answer without waiting for the engine, where this build's engine allows it (`handsOverKept`):
// `sent` (a navigation's preload, sent by the browser as the worker started, or the early send), when it
// is a 2xx, marked `X-Cachet-Source: network` as the engine marks a network answer
// (cachet_core::protocol::headers); the engine runs the request's job on a copy and stores it as
// network-first does, once the page's burst of requests has passed (`whenQuiet`). Anything
// else (nothing sent, a failure, another status, not allowed) is the engine's, as every routed request is.
async function handOver(event, sent) {
  const given = event.request.mode === 'navigate' ? undefined : sent; // a navigation's: the preload
  if (!(await handsOverKept)) return answer(event, given);
  const response = await sent.catch(() => undefined);
  if (!response || !response.ok) return answer(event, given);
  const copy = response.clone();
  // The copy's job runs later: an invalidation or a clear-all the whole engine begins meanwhile covers
  // it, as it covers an answer on its way (cachet-worker's `Target::begun`), so that nothing received
  // before a purge is stored after it.
  const begun = invalidationsSoFar();
  // A job the start module leaves (the generations' clock to read again, a database to move in) is the
  // whole engine's (`toWhole`), with the copy the start module did not read.
  whenQuiet(event, () => onEngine((engine) => engine.fetch(event, Promise.resolve(copy.clone()), undefined, undefined, begun)).then(({ result }) => result).then((answered) => toWhole(event, answered, Promise.resolve(copy), undefined, begun)).then(() => undefined, (error) => {
    console.warn('cachet: ' + event.request.url + ' was answered, not stored: ' + error);
  }));
  const headers = new Headers(response.headers);
  headers.set('x-cachet-source', 'network');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

// An engine's answer to `event`, or what the start module left (`{ body, answer }`: a mutation, with
// the body it read from the request; an auth failure to refresh, with the answer it got, which the
// whole engine takes as its first send's, else `early`) handed to the whole engine. `{ body, given }`:
// the start module's answer `given` (a stored entry) whose background re-fetch it left to the whole
// engine, which runs the request again once the answer is given, and re-fetches as its strategy says.
async function toWhole(event, answered, early, name, begun) {
  if (answered instanceof Response) return answered;
  if (answered.given) {
    event.waitUntil(whole().then((engine) => engine.fetch(event, early, answered.body, undefined, begun)).then(() => undefined, (error) => {
      console.warn('cachet: ' + event.request.url + ' was answered from its stored entry, not re-fetched: ' + error);
    }));
    return answered.given;
  }
  const sent = answered.answer ? Promise.resolve(answered.answer) : early;
  return (await whole()).fetch(event, sent, answered.body, name, begun);
}

// The whole engine's count of the invalidations and clear-alls it began (cachet-worker's
// `sw::store::invalidations_begun`), noted with a copy whose job runs later (`handOver`): 0 before it
// takes its first event, as none began in this worker instance then.
function invalidationsSoFar() {
  return wholeEngine === null ? 0 : wholeEngine.invalidations();
}

// The engine's answer: the start module's while it takes fetch events, else the whole engine's; a
// request the start module leaves is the whole engine's (`toWhole`). If no engine can load, the
// request goes to the network as if there were no SW (a navigation: its preloaded answer, when there
// is one; an early one: that answer). Until an engine has loaded, a request that is not a navigation
// has its POST body read here and is named (`nameOf`): one whose name the shim finds is answered from
// it (`servedAlone`); otherwise the start module is loaded then, and gets the body. The engine gets a
// function of the body to the request's name, which it calls only for a hit it names (`sw::names`): a
// warm worker's requests cost the shim no hash. A warm engine's name is given once the worker is quiet
// (`whenQuiet`): a name serves only a later cold start, and written (then forgotten by the next
// invalidation) amid a burst of requests its Cache Storage work held the burst's mutations and their
// `cache-invalidated` up (BENCHMARKS.md, session 38). The engine writes nothing a change overtook.
async function answer(event, early) {
  const request = event.request;
  let body;
  let name;
  if (request.mode !== 'navigate' && CAN_NAME) {
    if (engineReady) {
      name = (read) => new Promise((quiet) => whenQuiet(event, async () => quiet()))
        .then(() => nameOf(request, read));
    } else {
      // A body that cannot be read names nothing (the engine meets the same failure).
      const read = request.method === 'POST' ? await request.arrayBuffer().then((bytes) => new Uint8Array(bytes), () => null) : undefined;
      if (read === null) return answerWith(event, early, undefined, undefined);
      body = read;
      const named = nameOf(request, body);
      named.catch(() => undefined); // the engine reports it when it needs it
      const alone = await named.then(servedAlone).catch(() => undefined);
      if (alone) return alone; // the fetch listener set the whole engine's upkeep going
      name = () => named;
    }
  }
  return answerWith(event, early, body, name);
}

// `answer`'s engine part: the request with the `body` read from it and its naming function `name` (both
// optional) to the engine whose turn it is.
function answerWith(event, early, body, name) {
  const request = event.request;
  return onEngine((engine) => engine.fetch(event, early, body, name)).then(async ({ result }) => {
    return toWhole(event, await result, early, name);
  }, async () => {
    const preloaded = request.mode === 'navigate' ? await event.preloadResponse : await early;
    return preloaded || fetch(body === undefined ? request : new Request(request, { body }));
  });
}

// Static routes (the Static Routing API, `InstallEvent.addRoutes`: Chromium 123+, feature-detected):
// what `routed` never routes goes to the network without the browser starting a stopped worker for it.
// The same rule, handed to the browser in groups: the pass-through paths (at or below each: the auth
// routes, classified before anything else, whatever the method); another origin; a method other than
// GET and POST; a POST not to a GraphQL endpoint. Each group is added on its own, so that a browser
// without the API's later conditions (`not`, `or`) keeps the others; for every other request the engine
// decides. Characters URLPattern reads as syntax are escaped.
function staticRouteGroups() {
  if (typeof URLPattern !== 'function') return [];
  const escape = (path) => path.replace(/[\\:*?+(){}]/g, '\\$&');
  // This origin, the given pathname, any search: the pattern's origin comes from the base URL.
  const here = (pathname) => ({ urlPattern: new URLPattern({ pathname, baseURL: self.location.href }) });
  const network = (condition) => ({ condition, source: 'network' });
  const endpoints = ROUTES.graphqlEndpoints.map((path) => here(escape(path)));
  return [
    ROUTES.passThrough.map((path) => network(here(escape(path) + '{/*}?'))),
    [network({ not: here('*') })],
    [network({ not: { or: [{ requestMethod: 'GET' }, { requestMethod: 'POST' }] } })],
    // A POST not to an endpoint: not (not a POST, or to an endpoint).
    [network({ not: { or: [{ not: { requestMethod: 'POST' } }, ...endpoints] } })],
  ].filter((group) => group.length > 0);
}

self.addEventListener('install', (event) => {
  if (typeof event.addRoutes === 'function') {
    for (const group of staticRouteGroups()) {
      // Called before the first await (addRoutes must be called while the event is dispatched); a throw
      // becomes the promise's rejection.
      event.waitUntil((async () => event.addRoutes(group))().catch((error) => {
        console.warn('cachet: a static route not added (its requests still start the worker): ' + error);
      }));
    }
  }
  const shell = precache().catch((error) => {
    console.error('cachet: the app shell was not kept, so this worker is not installed: ' + error);
    throw error;
  });
  // The start module's wasm kept too (it loads only when a stopped worker first needs it: `start`),
  // so that a stopped worker starts with it even while the server is down.
  const kept = START ? wasmSource(START_WASM_URL).then(() => undefined) : undefined;
  event.waitUntil(Promise.all([whole(), shell, kept]).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    const names = await caches.keys();
    // The earlier builds' wasm, app shells and request names: the new set is whole before this worker
    // activates, so the old one goes at once (one build's files at a time, never a mix).
    await Promise.all(names
      .filter((name) => (name.startsWith(WASM_CACHE_PREFIX) && name !== WASM_CACHE)
        || (name.startsWith(SHELL_CACHE_PREFIX) && name !== SHELL_CACHE)
        || (name.startsWith(NAMES_CACHE_PREFIX) && name !== NAMES_CACHE))
      .map((name) => caches.delete(name)));
    // Navigation preload (feature-detected: every current engine has it): the browser sends a
    // navigation's request as it starts the worker, so a stopped worker's start and the network's time
    // overlap. The engine answers a navigation from the network with that answer (never a second
    // request); a navigation the shim does not route gets it from the browser itself.
    if (self.registration.navigationPreload) {
      try {
        await self.registration.navigationPreload.enable();
      } catch (error) {
        console.warn('cachet: navigation preload not enabled: ' + error);
      }
    }
    await self.clients.claim();
    await (await whole()).activate();
  })());
});

self.addEventListener('fetch', (event) => {
  armQuietTimer(); // not yet: a fetch event
  if (!routed(event.request)) return;
  if (START && !tookOver) upkeepWhenQuiet(event);
  const early = fetchesEarly(event.request) ? fetch(event.request) : undefined;
  // Kept alive until it settles, its failure left to the engine (which falls back to its cache).
  if (early) event.waitUntil(early.catch(() => undefined));
  const sent = event.request.mode === 'navigate' ? event.preloadResponse : early;
  const handing = sent && handsOver(event.request);
  // A navigation, or a request handed over, needs an engine soon (its copy's job runs once the page's
  // burst has passed), and the network's time hides the start module's load: begun now, not at the
  // burst's end, when it would hold the page's next requests up. A request the shim may answer from a
  // name begins it only if its lookup fails (`answer`).
  if (START && !tookOver && (handing || event.request.mode === 'navigate')) start();
  event.respondWith(whileOpen(handing ? handOver(event, sent) : answer(event, early)));
});

self.addEventListener('message', (event) => {
  event.waitUntil(whole().then((e) => e.message(event)));
});

// Background Sync (where the browser has it): the engine registers this tag when it queues a mutation.
self.addEventListener('sync', (event) => {
  if (event.tag !== 'cachet-queue') return;
  event.waitUntil(whole().then((e) => e.sync(event)));
});

// Server push (SPEC §5.8; the engine ignores it unless features.push is on with cookie auth or none):
// invalidates the payload's tags, re-fetches its documents, shows the configured notification.
self.addEventListener('push', (event) => {
  event.waitUntil(whole().then((e) => e.push(event)));
});
