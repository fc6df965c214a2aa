//! The current user's cache partition, persisted in IndexedDB (the worker keeps nothing only in memory),
//! set by the page with `set-identity` and read for every request marked `X-Cachet-Auth: 1`.

use rexie::{Rexie, TransactionMode};
use wasm_bindgen::JsValue;

use crate::error::{idb, open_single_store};
use crate::Error;

const DATABASE: &str = "cachet-sw-identity";
const STORE: &str = "identity";
const KEY: &str = "current";

async fn open() -> Result<Rexie, Error> {
    open_single_store(DATABASE, STORE, "open the identity store").await
}

/// The current partition, `None` when no user is set.
pub async fn current() -> Result<Option<String>, Error> {
    let database = open().await?;
    let transaction = database.transaction(&[STORE], TransactionMode::ReadOnly).map_err(idb("identity"))?;
    let store = transaction.store(STORE).map_err(idb("identity store"))?;
    let value = store.get(JsValue::from_str(KEY)).await.map_err(idb("read the identity"))?;
    Ok(value.and_then(|value| value.as_string()))
}

/// Sets (or, with `None`, forgets) the current partition.
pub async fn set(partition: Option<&str>) -> Result<(), Error> {
    let database = open().await?;
    let transaction = database.transaction(&[STORE], TransactionMode::ReadWrite).map_err(idb("identity"))?;
    let store = transaction.store(STORE).map_err(idb("identity store"))?;
    let key = JsValue::from_str(KEY);
    match partition {
        Some(partition) => {
            store.put(&JsValue::from_str(partition), Some(&key)).await.map_err(idb("write the identity"))?;
        }
        None => store.delete(key).await.map_err(idb("forget the identity"))?,
    }
    transaction.done().await.map_err(idb("commit the identity"))?;
    Ok(())
}
