// See cachet-client/src/js.rs. Every export a top-level `export function` or `export async function`.
export function lock(name) {
  const locks = navigator.locks;
  if (!locks) return Promise.resolve(null);
  return new Promise((granted, refused) => {
    locks.request(name, () => new Promise((release) => granted(release))).catch(refused);
  });
}
