// The tail of cachet-api.bundle.js: bundle.sh puts the wasm-bindgen glue of the cachet-api crate
// (`--target no-modules`, which declares `wasm_bindgen`) before it, inside one function, so that the page
// gets `window.cachet` and no other global.
//
// Every method returns a promise and waits for the wasm to load, so the page may call them at once.
// Events (sw-auth-state-change, cache-invalidated, cachet:cache-updated) are dispatched on window by the
// client itself.
//
// The app's cachet.config.json, written here by `cachet generate --bundles` (null in a bundle built for
// no app in particular): the page starts on it, then follows its Service Worker's config.
var bundledConfig = /*cachet:config*/null/*cachet:end*/;
var script = document.currentScript;
var wasmUrl = new URL('cachet-api_bg.wasm', script ? script.src : location.href);
var started = false;
var loaded = wasm_bindgen({ module_or_path: wasmUrl }).then(function () {
  wasm_bindgen.start(bundledConfig === null ? undefined : JSON.stringify(bundledConfig));
  started = true;
});
function later(name) {
  return function () {
    var args = arguments;
    return loaded.then(function () { return wasm_bindgen[name].apply(null, args); });
  };
}
var api = {
  // Once the wasm has loaded and a purge an earlier page could not finish is finished: what the page
  // reads after it is never what a purge was asked to remove.
  ready: loaded.then(function () { return wasm_bindgen.whenPurgeSettled(); }).then(function () { return undefined; }),
  configure: function (options) {
    return loaded.then(function () { wasm_bindgen.configure(options || {}); });
  },
  setAuth: later('setAuth'),
  getAuth: later('getAuth'),
  clearAuth: later('clearAuth'),
  clearMemoryAuth: later('clearMemoryAuth'),
  getAuthState: later('getAuthState'),
  isAuthValid: later('isAuthValid'),
  ensureValidAuth: later('ensureValidAuth'),
  isAuthUrl: later('isAuthUrl'),
  fetchWithCache: function (url, options) { return later('fetchWithCache')(url, options || {}); },
  queryGql: function (query, variables, options, endpointIndex) {
    return later('queryGql')(query, variables, options || {}, endpointIndex);
  },
  mutateGql: function (mutation, variables, options, endpointIndex) {
    return later('mutateGql')(mutation, variables, options || {}, endpointIndex);
  },
  fetchWithGql: function (query, variables, options, endpointIndex) {
    return later('fetchWithGql')(query, variables, options || {}, endpointIndex);
  },
  invalidateByTag: later('invalidateByTag'),
  getConfig: later('getConfig'),
  // Devtools (cachet-api/src/devtools.rs); the panel for plain pages is /cachet/devtools.js.
  getSnapshot: function (query) { return later('getSnapshot')(query || {}); },
  deadLetters: later('deadLetters'),
  retryDeadLetters: later('retryDeadLetters'),
  discardDeadLetters: later('discardDeadLetters'),
  dropEntries: later('dropEntries'),
  replayQueue: later('replayQueue'),
  clearCaches: later('clearCaches'),
  subscribePush: later('subscribePush'),
  unsubscribePush: later('unsubscribePush'),
  getPushSubscription: later('getPushSubscription'),
};
// AUTH_WITH_CREDENTIALS (true for cookie and custom auth), read live: the adapter in force may change
// when the page follows its Service Worker's config. null until the wasm has loaded and is configured.
Object.defineProperty(api, 'AUTH_WITH_CREDENTIALS', {
  get: function () {
    if (!started) return null;
    try { return wasm_bindgen.authWithCredentials(); } catch (notConfigured) { return null; }
  },
});
loaded.catch(function (error) {
  console.error('cachet: loading ' + wasmUrl + ' failed:', error);
});
window.cachet = api;
