// cachet client injector: registers cachet's Service Worker. A plain page loads it first, then
// /cachet/cachet-api.bundle.js. The worker's script defaults to /service-worker.js, where `cachet generate`
// puts it (the app's root; a worker controls only the pages at or below its own folder); another one is
// named with <script src="/cachet/client-injector.bundle.js" data-sw="/my-sw.js">. The worker takes control of
// the page itself when it activates (clients.claim), so the first visit is controlled without a reload;
// until then window.cachet answers in the page with the same rules.
(function () {
  'use strict';
  if (!('serviceWorker' in navigator)) {
    window.cachetServiceWorker = Promise.resolve(null);
    return;
  }
  var script = document.currentScript;
  var url = (script && script.dataset && script.dataset.sw) || '/service-worker.js';
  window.cachetServiceWorker = navigator.serviceWorker.register(url).then(function (registration) {
    // A worker controls only the pages at or below its script's folder (unless the server sends
    // Service-Worker-Allowed): say so rather than leave this page silently uncached.
    if (location.href.indexOf(registration.scope) !== 0) {
      console.error('cachet: the service worker ' + url + ' controls ' + registration.scope +
        ', not this page (' + location.href + '): serve service-worker.js (written by `cachet generate` ' +
        'at the app\'s root) at the root of the site, /service-worker.js');
    }
    return registration;
  }, function (error) {
    console.error('cachet: registering the service worker ' + url + ' failed:', error);
    return null;
  });
})();
