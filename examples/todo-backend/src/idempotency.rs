//! `Idempotency-Key` on `POST /graphql`: the first answer to a key is kept in SQLite (table
//! `idempotency`, per user), and a request that repeats the key gets that answer back, with
//! `Idempotent-Replayed: true`, and applies nothing. This is what makes cachet's offline queue deliver
//! exactly once: it sends every queued mutation with a key of its own, kept across replays, so a
//! mutation the server applied but whose answer the Service Worker never processed (the browser stopped
//! it) is answered again rather than applied twice.
//!
//! Only answers of an executed operation are kept: an auth failure (401), a malformed body (400) or a
//! test hook's scripted failure happens before any change, so a retry with the same key runs for real.
//! Requests with keys run one at a time (a mutex held from the lookup to the write of the answer), so
//! two sends of one key that overlap (a worker stopped mid-send, a new one sending again) still apply
//! once. The operation's writes and its kept answer are one SQLite transaction ([`Db::begin`]): a
//! failure or a crash between them leaves neither, so a retry with the key runs again, once.

use axum::http::HeaderMap;
use rusqlite::{params, OptionalExtension};

use crate::db::Db;

/// The request header, as cachet's queue sends it.
pub use cachet_core::protocol::headers::IDEMPOTENCY_KEY_HEADER as HEADER;

/// The response header on an answer given again for a repeated key.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// The table, created with the schema.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS idempotency (
    user_id INTEGER NOT NULL REFERENCES users(id),
    key TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, key)
);
";

/// The request's key: `Ok(None)` without the header; an error naming what is wrong with a malformed
/// one (empty, longer than 255 bytes, or not visible ASCII).
pub fn key(headers: &HeaderMap) -> Result<Option<String>, String> {
    let Some(value) = headers.get(HEADER) else {
        return Ok(None);
    };
    let bytes = value.as_bytes();
    if bytes.is_empty() || bytes.len() > 255 {
        return Err(format!("invalid Idempotency-Key header: {} bytes, expected 1 to 255", bytes.len()));
    }
    if let Some(bad) = bytes.iter().find(|byte| !(0x21..=0x7e).contains(*byte)) {
        return Err(format!("invalid Idempotency-Key header: byte 0x{bad:02x}, expected visible ASCII"));
    }
    Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
}

impl Db {
    /// The answer kept for `key` of `user_id`: `(status, body)`.
    pub fn idempotent_answer(&self, user_id: i64, key: &str) -> anyhow::Result<Option<(u16, String)>> {
        let conn = self.conn()?;
        let row = conn
            .query_row(
                "SELECT status, body FROM idempotency WHERE user_id = ?1 AND key = ?2",
                params![user_id, key],
                |r| Ok((r.get::<_, u16>(0)?, r.get::<_, String>(1)?)),
            )
            .optional()?;
        Ok(row)
    }

    /// Every answer kept for `user_id`, oldest first: `(key, status, body)`.
    pub fn idempotent_answers(&self, user_id: i64) -> anyhow::Result<Vec<(String, u16, String)>> {
        let conn = self.conn()?;
        let mut statement = conn.prepare(
            "SELECT key, status, body FROM idempotency WHERE user_id = ?1 ORDER BY created_at, rowid",
        )?;
        let rows = statement.query_map(params![user_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Keeps the first answer to `key` of `user_id` (a second one is ignored).
    pub fn keep_idempotent_answer(
        &self,
        user_id: i64,
        key: &str,
        status: u16,
        body: &str,
        now: i64,
    ) -> anyhow::Result<()> {
        self.conn()?.execute(
            "INSERT OR IGNORE INTO idempotency (user_id, key, status, body, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![user_id, key, status, body, now],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn reads_and_checks_the_key() {
        let mut headers = HeaderMap::new();
        assert_eq!(key(&headers), Ok(None));
        headers.insert(HEADER, HeaderValue::from_static("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"));
        assert_eq!(key(&headers), Ok(Some("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9".into())));
        for (value, expected) in [
            ("".to_owned(), "0 bytes, expected 1 to 255"),
            ("k".repeat(256), "256 bytes, expected 1 to 255"),
            ("a b".to_owned(), "byte 0x20, expected visible ASCII"),
        ] {
            headers.insert(HEADER, HeaderValue::from_str(&value).expect("header value"));
            let error = key(&headers).expect_err("malformed");
            assert!(error.contains(expected), "{error}");
        }
    }

    #[test]
    fn keeps_the_first_answer_per_user_and_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(&dir.path().join("t.sqlite")).expect("open");
        assert_eq!(db.idempotent_answer(1, "k").expect("read"), None);
        db.keep_idempotent_answer(1, "k", 200, "first", 1).expect("keep");
        db.keep_idempotent_answer(1, "k", 200, "second", 2).expect("keep again");
        assert_eq!(db.idempotent_answer(1, "k").expect("read"), Some((200, "first".into())));
        assert_eq!(db.idempotent_answer(2, "k").expect("read"), None, "keys are per user");
    }
}
