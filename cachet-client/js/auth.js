// See cachet-client/src/js.rs. Every export a top-level `export function` or `export async function`.
export function lock(name) {
  const locks = navigator.locks;
  if (!locks) return Promise.resolve(null);
  return new Promise((granted, refused) => {
    locks.request(name, () => new Promise((release) => granted(release))).catch(refused);
  });
}
export function record(database, key, text) {
  const write = text !== undefined;
  return new Promise((resolve, reject) => {
    let open;
    try {
      open = indexedDB.open(database, 1);
    } catch (error) {
      return reject(['open', error]);
    }
    open.onupgradeneeded = () => {
      if (!open.result.objectStoreNames.contains('auth')) open.result.createObjectStore('auth');
    };
    open.onerror = () => reject(['open', open.error]);
    open.onsuccess = () => {
      const db = open.result;
      db.onversionchange = () => db.close();
      let request;
      try {
        const transaction = db.transaction('auth', write ? 'readwrite' : 'readonly');
        const store = transaction.objectStore('auth');
        request = !write ? store.get(key) : text === null ? store.delete(key) : store.put(text, key);
        transaction.oncomplete = () => {
          db.close();
          resolve(write ? undefined : request.result);
        };
        transaction.onabort = () => {
          db.close();
          reject([write ? 'commit' : 'read', transaction.error]);
        };
      } catch (error) {
        db.close();
        reject([write ? 'write' : 'read', error]);
      }
    };
  });
}
