// See cachet-client/src/js.rs. Every export a top-level `export function` or `export async function`.
export function alarm(name, ask) {
  let on = false, out = false, again = false, off = false, timer, release;
  const poke = (stop) => {
    if (stop) {
      off = true;
      on = false;
      clearTimeout(timer);
      return release && release();
    }
    if (!on) return;
    if (out) return (again = true);
    out = true;
    clearTimeout(timer);
    ask((at) => {
      out = false;
      if (again) {
        again = false;
        poke();
      } else if (at != null && on) timer = setTimeout(poke, Math.min(at - Date.now(), 2147483647));
    });
  };
  const run = (error) => {
    if (error) console.warn('cachet: queue alarm without a lock:', error);
    if (!off) {
      on = true;
      poke();
    }
  };
  if (!navigator.locks) run();
  else navigator.locks.request(name, () => off || new Promise((done) => { release = done; run(); })).catch(run);
  return poke;
}
