// See cachet-client/src/js.rs. Every export a top-level `export function` or `export async function`.
export async function push(key, ms) {
  const fail = (error) => {
    throw Array.isArray(error) ? error : error instanceof Error ? [error.name, error.message] : ['Error', String(error)];
  };
  let manager;
  try {
    const c = navigator.serviceWorker;
    if (!c) throw ['NotSupportedError', 'this page has no navigator.serviceWorker'];
    const r = await c.getRegistration();
    if (!r) throw ['NotSupportedError', "no Service Worker is registered for this page: push needs cachet's worker"];
    if (!('pushManager' in r)) throw ['NotSupportedError', 'this browser has no Push API (PushManager)'];
    manager = r.pushManager;
  } catch (error) {
    if (!key) return null;
    fail(error);
  }
  try {
    const existing = await manager.getSubscription();
    const json = existing && JSON.stringify(existing);
    if (key === undefined) return json;
    if (existing) {
      const was = existing.options.applicationServerKey;
      if (key && was && new Uint8Array(was).join() === key.join()) return json;
      await existing.unsubscribe();
    }
    if (!key) return json;
    const late = new Promise((_, reject) => setTimeout(reject, ms, ['TimeoutError',
      'pushManager.subscribe did not settle within ' + ms / 1000 + " s: the browser's push service is unreachable"]));
    return JSON.stringify(await Promise.race([manager.subscribe({ userVisibleOnly: true, applicationServerKey: key }), late]));
  } catch (error) {
    fail(error);
  }
}
