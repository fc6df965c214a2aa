//! The signed-in user as the worker knows it ([`Identity`]: their partition and the `Authorization`
//! fingerprints a page vouched for), persisted in IndexedDB and read for every request the engine
//! answers: [`cachet_core::partition::partition_for`] decides each request's partition from it and
//! from the request's own `Authorization`.
//!
//! The record is read once per worker instance and then kept as a read-through copy, written through
//! by [`set`] and [`vouch`]: only this worker writes it, and the browser runs one active worker per
//! scope. A record that does not decode is reported and makes [`current`] fail, so that the router
//! caches nothing (network only) until a page sets the identity again; it is never deleted here.

use std::cell::RefCell;

use cachet_core::partition::Identity;
use cachet_core::protocol::storage::{IDENTITY as STORE, IDENTITY_KEY as KEY};
use cachet_idb::TransactionMode;
use wasm_bindgen::JsValue;

use super::database;
use crate::error::{commit, idb};
use crate::Error;

thread_local! {
    /// The stored identity as last read or written by this worker instance (`None`: not read yet).
    static KNOWN: RefCell<Option<Option<Identity>>> = const { RefCell::new(None) };
}

/// The signed-in user, `None` when nobody is; an unreadable record is [`cachet_core::Error::StoredState`].
pub async fn current() -> Result<Option<Identity>, Error> {
    if let Some(known) = KNOWN.with(|known| known.borrow().clone()) {
        return Ok(known);
    }
    database::open().await?;
    let value = match database::take_start_identity() {
        Some(value) => value,
        None => {
            let transaction = database::transaction(&[STORE], TransactionMode::Readonly).await?;
            let store = transaction.store(STORE).map_err(idb("identity store"))?;
            store.get(JsValue::from_str(KEY)).await.map_err(idb("read the identity"))?
        }
    };
    let identity = match value.filter(|value| !value.is_undefined() && !value.is_null()) {
        None => None,
        Some(value) => Some(Identity::from_json(&value.as_string().unwrap_or_default())?),
    };
    KNOWN.with(|known| *known.borrow_mut() = Some(identity.clone()));
    Ok(identity)
}

/// `set-identity {partition, authorization}`: the same user keeps the fingerprints already vouched for,
/// another user (or none) replaces them ([`Identity::after_set`]). A partition or fingerprint that could
/// not be a cache path segment or a fingerprint is refused with [`Error::Identity`], storing nothing.
pub async fn set(partition: Option<String>, authorization: Option<String>) -> Result<(), Error> {
    // An unreadable record is replaced, not kept: the page just said who is signed in.
    let before = current().await.unwrap_or(None);
    let next = Identity::after_set(before, partition, authorization);
    if let Some(identity) = &next {
        identity.check().map_err(Error::Identity)?;
    }
    write(next).await
}

/// A page answered a `refresh-request` with `authorization` for the signed-in user: requests carrying it
/// belong to that user from now on. Nothing happens when nobody is signed in.
pub async fn vouch(authorization: &str) -> Result<(), Error> {
    let Some(mut identity) = current().await? else {
        return Ok(());
    };
    let fingerprint = cachet_core::cache_key::auth_fingerprint(authorization);
    if identity.knows(&fingerprint) {
        return Ok(());
    }
    identity.vouch(fingerprint);
    write(Some(identity)).await
}

/// Forgets the signed-in user (clear-all).
pub async fn forget() -> Result<(), Error> {
    write(None).await
}

/// Writes the identity, after forgetting the shim's request names (`super::names`): a request's
/// partition may change with it.
async fn write(identity: Option<Identity>) -> Result<(), Error> {
    super::names::forget_all().await?;
    database::open().await?;
    // What the open read is no longer what is stored.
    drop(database::take_start_identity());
    let transaction = database::transaction(&[STORE], TransactionMode::Readwrite).await?;
    let store = transaction.store(STORE).map_err(idb("identity store"))?;
    let key = JsValue::from_str(KEY);
    match &identity {
        Some(identity) => {
            let record = JsValue::from_str(&identity.to_json());
            store.put(&record, Some(&key)).await.map_err(idb("write the identity"))?;
        }
        None => store.delete(key).await.map_err(idb("forget the identity"))?,
    }
    commit(transaction, "commit the identity").await?;
    KNOWN.with(|known| *known.borrow_mut() = Some(identity));
    Ok(())
}
