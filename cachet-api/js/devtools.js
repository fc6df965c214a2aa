// cachet devtools for plain pages: <script src="/cachet/devtools.js"></script> after the two bundles.
// The same panel as cachet-yew's <CachetDevtools />, on the bundler-free API (window.cachet.getSnapshot,
// retryDeadLetters, ...): a corner button opens one page of the Service Worker's entries (filter by tag,
// operation, partition), its tags, the queue and dead letters, the auth state, and a live log of events.
// It decides nothing: every action is a window.cachet call. Same ids and classes as the Yew panel.
(function () {
  'use strict';
  var cachet = window.cachet;
  if (!cachet || !cachet.getSnapshot) { console.error('cachet devtools: load /cachet/cachet-api.bundle.js first'); return; }
  var open = false, query = {}, lines = [], toggle, panel;
  var css = '#cachet-devtools-toggle{position:fixed;right:1rem;bottom:1rem;z-index:9999;border-radius:999px;border:none;' +
    'background:#1d2330;color:#fff;padding:.5rem .9rem;font:600 .85rem system-ui;cursor:pointer}' +
    '#cachet-devtools{position:fixed;left:0;right:0;bottom:0;max-height:55vh;overflow:auto;z-index:9998;background:#fff;' +
    'border-top:2px solid #1d2330;font:12px/1.4 ui-monospace,monospace;color:#1d2330;padding:.5rem 1rem 3rem}' +
    '#cachet-devtools h3{font:600 13px system-ui;margin:.6rem 0 .3rem}#cachet-devtools table{border-collapse:collapse;width:100%}' +
    '#cachet-devtools td,#cachet-devtools th{border-bottom:1px solid #eee;padding:2px 6px;text-align:left}' +
    '#cachet-devtools .muted{color:#6b7280}#cachet-devtools button{font:11px system-ui;margin:0 2px}';

  function el(tag, attributes, children) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      if (name.slice(0, 2) === 'on') node.addEventListener(name.slice(2), attributes[name]);
      else node.setAttribute(name, attributes[name]);
    });
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    });
    return node;
  }
  function time(ms) { return ms ? new Date(ms).toISOString().slice(11, 19) : '-'; }
  function log(text) {
    lines.unshift({ at: new Date().toISOString().slice(11, 23), text: text });
    lines.length = Math.min(lines.length, 50);
    if (open) refresh();
  }
  function act(what, promise) {
    promise.then(function () { log('devtools: ' + what); },
                 function (error) { log('devtools: ' + what + ' failed: ' + (error.message || error)); });
  }
  function button(label, className, onclick, data) {
    var attributes = { class: className, onclick: onclick };
    Object.keys(data || {}).forEach(function (name) { attributes['data-' + name] = data[name]; });
    return el('button', attributes, [label]);
  }
  function reason(r) {
    return r.kind === 'rejected' ? 'rejected (' + r.status + ')' : r.kind.replace(/-/g, ' ');
  }
  function filterInput(name) {
    return el('label', {}, [' ' + name + ' ', el('input', { id: 'cachet-devtools-filter-' + name, value: query[name] || '',
      onchange: function (event) {
        query = Object.assign({}, query, { after: undefined });
        query[name] = event.target.value.trim() || undefined;
        refresh();
      } })]);
  }
  function render(snapshot, state) {
    var entries = snapshot.entries, queue = snapshot.queue;
    var who = snapshot.identity ? 'partition ' + snapshot.identity.partition + ' (' + snapshot.identity.vouched +
      ' token(s) vouched)' : 'nobody signed in';
    var rows = entries.items.map(function (entry) {
      return el('tr', { class: 'entry', 'data-url': entry.url, 'data-stored-at': String(entry.storedAt) }, [
        el('td', { class: 'request', title: entry.url }, [entry.request + ' ', el('span', { class: 'muted' }, [entry.variables || ''])]),
        el('td', {}, [entry.partition]),
        el('td', { class: 'tags' }, [entry.tags.join(', ')]),
        el('td', {}, [entry.size + ' B']), el('td', {}, [time(entry.storedAt)]), el('td', {}, [time(entry.usedAt)]),
        el('td', {}, [entry.strategy || '-']),
        el('td', {}, [button('drop', 'drop-entry', function () { act('drop ' + entry.url, cachet.dropEntries([entry.url])); })]),
      ]);
    });
    var paging = [];
    if (query.after) paging.push(button('first page', 'first-page', function () { query = Object.assign({}, query, { after: undefined }); refresh(); }));
    if (entries.next) paging.push(button('next page', 'next-page', function () { query = Object.assign({}, query, { after: entries.next }); refresh(); }));
    var children = [
      button('refresh', 'refresh', refresh),
      button('replay queue', 'replay-queue', function () { act('replay-queue sent', cachet.replayQueue()); }),
      button('clear all', 'clear-all', function () { act('clear all', cachet.clearCaches()); }),
      el('p', { id: 'cachet-devtools-state' }, [(state.authenticated ? 'signed in' : 'signed out') + ' · page ' +
        (state.online ? 'online' : 'offline') + ' · worker ' + (snapshot.online ? 'online' : 'offline') + ' · ' + who]),
      el('details', {}, [el('summary', {}, ['config in force']), el('pre', {}, [snapshot.config])]),
    ].concat(snapshot.problems.map(function (problem) { return el('p', { class: 'problem' }, [problem]); }), [
      el('h3', {}, ['entries (' + entries.items.length + ' shown, ' + entries.scanned + ' read)']),
      el('div', {}, [filterInput('tag'), filterInput('operation'), filterInput('partition')].concat(paging)),
      el('table', {}, [el('tr', {}, ['request', 'partition', 'tags', 'size', 'stored', 'used', 'strategy', ''].map(function (h) { return el('th', {}, [h]); }))].concat(rows)),
      el('h3', {}, ['not stored (the last ' + (snapshot.notStored || []).length + ' answers of this worker instance)']),
      el('ul', { id: 'cachet-devtools-not-stored' }, (snapshot.notStored || []).map(function (answer) {
        return el('li', { class: 'not-stored', 'data-reason': answer.reason, title: answer.url },
          [answer.request + ' · not stored: ' + answer.why + ' · at ' + time(answer.at)]);
      })),
      el('h3', {}, ['tags']),
      el('ul', { id: 'cachet-devtools-tags' }, snapshot.tags.map(function (count) {
        return el('li', {}, [count.tag + ' (' + count.entries + ') ', button('invalidate', 'invalidate-tag', function () {
          act('invalidate tag ' + count.tag, cachet.invalidateByTag([count.tag]));
        }, { tag: count.tag })]);
      })),
      el('h3', {}, ['queue (' + queue.pending.length + ' pending, ' + (queue.online ? 'online' : 'offline') + ')']),
      el('ul', { id: 'cachet-devtools-queue' }, queue.pending.map(function (item) {
        return el('li', { class: 'queued', 'data-id': String(item.id) }, ['#' + item.id + ' ' + item.operation + ' ' +
          (item.variables || '') + ' · ' + item.attempts + ' attempt(s) · next ' + time(item.nextAttemptAt) +
          (queue.inFlight === item.id ? ' · in flight' : '')]);
      })),
      el('h3', {}, ['dead letters (' + queue.deadLetters.length + ')']),
      el('ul', { id: 'cachet-devtools-dead-letters' }, queue.deadLetters.map(function (letter) {
        return el('li', { class: 'dead-letter', 'data-id': String(letter.id) }, ['#' + letter.id + ' ' + letter.operation + ' ' +
          (letter.variables || '') + ' · ' + reason(letter.reason) + ' · ' + letter.attempts + ' attempt(s) · at ' + time(letter.at) + ' ',
          button('retry', 'retry', function () { act('retry dead letter ' + letter.id, cachet.retryDeadLetters([letter.id])); }),
          button('discard', 'discard', function () { act('discard dead letter ' + letter.id, cachet.discardDeadLetters([letter.id])); })]);
      })),
    ]);
    show(children);
  }
  function show(children) {
    panel.replaceChildren.apply(panel, children.concat([el('h3', {}, ['events']), el('ul', { id: 'cachet-devtools-log' },
      lines.map(function (line) { return el('li', {}, [el('span', { class: 'muted' }, [line.at]), ' ' + line.text]); }))]));
  }
  function refresh() {
    if (!open) return;
    Promise.all([cachet.getSnapshot(query), cachet.getAuthState()]).then(function (both) { render(both[0], both[1]); },
      function (error) { show([button('refresh', 'refresh', refresh), el('p', { id: 'cachet-devtools-error' }, [String(error.message || error)])]); });
  }
  function start() {
    document.head.appendChild(el('style', {}, [css]));
    panel = el('section', { id: 'cachet-devtools', hidden: '' });
    toggle = el('button', { id: 'cachet-devtools-toggle', onclick: function () {
      open = !open;
      toggle.textContent = open ? 'close cachet' : 'cachet';
      if (open) { panel.removeAttribute('hidden'); refresh(); } else { panel.setAttribute('hidden', ''); }
    } }, ['cachet']);
    document.body.appendChild(panel);
    document.body.appendChild(toggle);
  }
  ['sw-auth-state-change', 'cache-invalidated', 'cachet:cache-updated'].forEach(function (name) {
    window.addEventListener(name, function (event) { log(name + ': ' + JSON.stringify(event.detail)); });
  });
  // The queue's events are not window events: hear them where the worker announces them.
  if (window.BroadcastChannel) {
    new BroadcastChannel('cachet').addEventListener('message', function (event) {
      if (typeof event.data === 'string' && event.data.indexOf('"type":"mutation-') > 0) log(event.data);
    });
  }
  if (document.body) start(); else document.addEventListener('DOMContentLoaded', start);
})();
