//! The persisted auth record in IndexedDB: user, expiry and the fingerprint of the current
//! `Authorization` value; never the token (see [`crate::auth_data`]).

use rexie::{ObjectStore, Rexie, TransactionMode};
use wasm_bindgen::JsValue;

use crate::auth_data::PersistedAuth;
use crate::error::{idb, Error};

const STORE: &str = "auth";
const KEY: &str = "current";

/// The record's database (by default `cachet-client`).
#[derive(Debug, Clone)]
pub(crate) struct AuthStore {
    database: String,
}

impl AuthStore {
    pub(crate) fn new(database: &str) -> Self {
        AuthStore { database: database.to_owned() }
    }

    async fn open(&self) -> Result<Rexie, Error> {
        Rexie::builder(&self.database)
            .version(1)
            .add_object_store(ObjectStore::new(STORE))
            .build()
            .await
            .map_err(idb("open"))
    }

    /// The record, `None` when absent. An unreadable record (another build's) counts as absent.
    pub(crate) async fn load(&self) -> Result<Option<PersistedAuth>, Error> {
        let database = self.open().await?;
        let transaction = database.transaction(&[STORE], TransactionMode::ReadOnly).map_err(idb("read"))?;
        let store = transaction.store(STORE).map_err(idb("read"))?;
        let value = store.get(JsValue::from_str(KEY)).await.map_err(idb("read"))?;
        database.close();
        Ok(value.and_then(|value| value.as_string()).and_then(|text| serde_json::from_str(&text).ok()))
    }

    /// Writes the record.
    pub(crate) async fn save(&self, record: &PersistedAuth) -> Result<(), Error> {
        let text = serde_json::to_string(record).unwrap_or_default();
        self.write(Some(&text)).await
    }

    /// Deletes the record.
    pub(crate) async fn clear(&self) -> Result<(), Error> {
        self.write(None).await
    }

    async fn write(&self, text: Option<&str>) -> Result<(), Error> {
        let database = self.open().await?;
        let transaction = database.transaction(&[STORE], TransactionMode::ReadWrite).map_err(idb("write"))?;
        let store = transaction.store(STORE).map_err(idb("write"))?;
        let key = JsValue::from_str(KEY);
        match text {
            Some(text) => store.put(&JsValue::from_str(text), Some(&key)).await.map(|_| ()),
            None => store.delete(key).await,
        }
        .map_err(idb("write"))?;
        // An aborted transaction (storage full at commit) wrote nothing: an error, not a success.
        let outcome = transaction.done().await.map_err(idb("commit"));
        database.close();
        if !outcome?.is_committed() {
            let message = "the auth record's transaction was aborted (storage full?)".to_owned();
            return Err(Error::Storage { operation: "commit", message });
        }
        Ok(())
    }
}
