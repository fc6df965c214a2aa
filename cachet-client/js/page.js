// See cachet-client/src/js.rs. Every export a top-level `export function` or `export async function`.
export async function serviceWorker(wait) {
  const c = navigator.serviceWorker;
  if (!c) return null;
  if (c.controller) return c.controller;
  const r = await c.getRegistration();
  if (!r) return null;
  if (r.active || wait === undefined || (!r.installing && !r.waiting)) return r.active;
  const ready = await Promise.race([c.ready, new Promise((done) => setTimeout(done, wait))]);
  return ready ? ready.active : null;
}
export function answer(ms) {
  let done;
  const p = new Promise((resolve) => { done = resolve; setTimeout(resolve, ms); });
  p.done = done;
  return p;
}
export function settle(p) {
  p.done(true);
}
export function listen(channel, tabs, on) {
  const offs = [];
  const add = (target, type, kind) => {
    const heard = (event) => on(kind, event.data, event.ports && event.ports[0]);
    target.addEventListener(type, heard);
    offs.push(() => target.removeEventListener(type, heard));
  };
  add(channel, 'message', 0);
  if (tabs) add(tabs, 'message', 1);
  const c = navigator.serviceWorker;
  if (c) {
    add(c, 'message', 2);
    add(c, 'controllerchange', 3);
    if (c.startMessages) c.startMessages();
  }
  add(window, 'online', 4);
  add(window, 'offline', 5);
  return () => offs.forEach((off) => off());
}
export function request(method, url, headers, body, credentials) {
  const h = new Headers();
  for (let i = 0; i < headers.length; i += 2) h.append(headers[i], headers[i + 1]);
  return new Request(url, { method, headers: h, body, credentials });
}
export async function read(response) {
  const body = new Uint8Array(await response.arrayBuffer());
  return [response.url, response.status, [...response.headers].flat(), body];
}
