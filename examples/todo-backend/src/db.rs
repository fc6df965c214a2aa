//! SQLite storage: schema, seed users, sessions/tokens and todos.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use anyhow::{anyhow, Context};
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use rand::RngCore;
use rusqlite::{params, Connection, OptionalExtension};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS todos (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    title TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS todos_user ON todos(user_id);
CREATE TABLE IF NOT EXISTS sessions (
    token TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    expires_at INTEGER NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0
);
";

/// The users created on first run: `(username, password)`.
pub const SEED_USERS: [(&str, &str); 2] = [("alice", "alice-password"), ("bob", "bob-password")];

/// A user as exposed by the API.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct User {
    /// Row id.
    pub id: i64,
    /// Login name.
    pub username: String,
}

/// A stored session (cookie mode) or bearer token.
#[derive(Clone, Debug)]
pub struct Session {
    /// The user it belongs to.
    pub user: User,
    /// Expiry, Unix milliseconds.
    pub expires_at: i64,
    /// Whether logout or refresh revoked it.
    pub revoked: bool,
}

/// The database handle: one connection behind a mutex (the load is tiny).
pub struct Db {
    conn: Mutex<Connection>,
    path: std::path::PathBuf,
}

/// Random hex string of `bytes` random bytes.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hashes a password into an argon2 PHC string.
pub fn hash_password(password: &str) -> anyhow::Result<String> {
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt).map_err(|e| anyhow!("salt: {e}"))?;
    let hash = Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map_err(|e| anyhow!("hashing password: {e}"))?;
    Ok(hash.to_string())
}

/// Checks a password against a PHC string; a malformed hash never verifies.
pub fn verify_password(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc)
        .map(|hash| Argon2::default().verify_password(password.as_bytes(), &hash).is_ok())
        .unwrap_or(false)
}

impl Db {
    /// Opens (creating if needed) the database file, its schema and the seed users.
    pub fn open(path: &Path) -> anyhow::Result<Db> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        let conn = Connection::open(path).with_context(|| format!("opening {}", path.display()))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA).context("creating schema")?;
        conn.execute_batch(crate::idempotency::SCHEMA).context("creating the idempotency table")?;
        conn.execute_batch(crate::push::SCHEMA).context("creating the push tables")?;
        let users: i64 = conn.query_row("SELECT COUNT(*) FROM users", [], |r| r.get(0))?;
        if users == 0 {
            for (name, password) in SEED_USERS {
                conn.execute(
                    "INSERT INTO users (username, password_hash) VALUES (?1, ?2)",
                    params![name, hash_password(password)?],
                )?;
            }
        }
        Ok(Db { conn: Mutex::new(conn), path: path.to_owned() })
    }

    /// A handle on a connection of its own with a write transaction open (`BEGIN IMMEDIATE`): what it
    /// writes lands with [`Db::commit`], and not at all when it is dropped first (or the process dies).
    /// Other connections' writes wait for it (the busy timeout), reads do not (WAL).
    pub fn begin(&self) -> anyhow::Result<Db> {
        let conn =
            Connection::open(&self.path).with_context(|| format!("opening {}", self.path.display()))?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch("BEGIN IMMEDIATE")?;
        Ok(Db { conn: Mutex::new(conn), path: self.path.clone() })
    }

    /// Commits the transaction [`Db::begin`] opened.
    pub fn commit(&self) -> anyhow::Result<()> {
        self.conn()?.execute_batch("COMMIT")?;
        Ok(())
    }

    /// Locks the connection.
    pub fn conn(&self) -> anyhow::Result<MutexGuard<'_, Connection>> {
        self.conn.lock().map_err(|_| anyhow!("database lock poisoned"))
    }

    /// The user named `username` and their password hash.
    pub fn user_with_hash(&self, username: &str) -> anyhow::Result<Option<(User, String)>> {
        let conn = self.conn()?;
        let row = conn
            .query_row(
                "SELECT id, username, password_hash FROM users WHERE username = ?1",
                params![username],
                |r| Ok((User { id: r.get(0)?, username: r.get(1)? }, r.get(2)?)),
            )
            .optional()?;
        Ok(row)
    }

    /// Stores a new session/token.
    pub fn insert_session(&self, token: &str, user_id: i64, expires_at: i64) -> anyhow::Result<()> {
        self.conn()?.execute(
            "INSERT INTO sessions (token, user_id, expires_at) VALUES (?1, ?2, ?3)",
            params![token, user_id, expires_at],
        )?;
        Ok(())
    }

    /// Looks a session/token up, whatever its state.
    pub fn session(&self, token: &str) -> anyhow::Result<Option<Session>> {
        let conn = self.conn()?;
        let row = conn
            .query_row(
                "SELECT u.id, u.username, s.expires_at, s.revoked
                 FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token = ?1",
                params![token],
                |r| {
                    Ok(Session {
                        user: User { id: r.get(0)?, username: r.get(1)? },
                        expires_at: r.get(2)?,
                        revoked: r.get::<_, i64>(3)? != 0,
                    })
                },
            )
            .optional()?;
        Ok(row)
    }

    /// Revokes a session/token; unknown tokens are ignored.
    pub fn revoke_session(&self, token: &str) -> anyhow::Result<()> {
        self.conn()?.execute("UPDATE sessions SET revoked = 1 WHERE token = ?1", params![token])?;
        Ok(())
    }

    /// Moves a session's expiry.
    pub fn set_session_expiry(&self, token: &str, expires_at: i64) -> anyhow::Result<()> {
        self.conn()?
            .execute("UPDATE sessions SET expires_at = ?2 WHERE token = ?1", params![token, expires_at])?;
        Ok(())
    }

    /// Makes every live session expire at `now`; returns how many were changed.
    pub fn expire_all_sessions(&self, now: i64) -> anyhow::Result<usize> {
        let n = self.conn()?.execute(
            "UPDATE sessions SET expires_at = ?1 WHERE revoked = 0 AND expires_at > ?1",
            params![now],
        )?;
        Ok(n)
    }
}

impl Db {
    /// Atomically revokes `old` and issues `new` for the same user. `false` when `old`
    /// was unknown or already revoked (e.g. a concurrent refresh won the race).
    pub fn rotate_token(&self, old: &str, new: &str, expires_at: i64) -> anyhow::Result<bool> {
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        let revoked =
            tx.execute("UPDATE sessions SET revoked = 1 WHERE token = ?1 AND revoked = 0", params![old])?;
        if revoked == 0 {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO sessions (token, user_id, expires_at)
             SELECT ?2, user_id, ?3 FROM sessions WHERE token = ?1",
            params![old, new, expires_at],
        )?;
        tx.commit()?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_schema_and_seeds_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("nested/dir/todo.sqlite");
        let db = Db::open(&path).expect("first open");
        let (alice, hash) = db.user_with_hash("alice").expect("query").expect("alice");
        assert!(hash.starts_with("$argon2"));
        assert!(verify_password("alice-password", &hash));
        assert!(!verify_password("wrong", &hash));
        drop(db);
        let db = Db::open(&path).expect("second open");
        let again = db.user_with_hash("alice").expect("query").expect("alice");
        assert_eq!(again.0, alice);
        let count: i64 = db
            .conn()
            .expect("conn")
            .query_row("SELECT COUNT(*) FROM users", [], |r| r.get(0))
            .expect("count");
        assert_eq!(count, 2);
    }

    #[test]
    fn rotate_revokes_old_token_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(&dir.path().join("t.sqlite")).expect("open");
        db.insert_session("old", 1, 10).expect("insert");
        assert!(db.rotate_token("old", "new", 20).expect("rotate"));
        assert!(!db.rotate_token("old", "newer", 30).expect("rotate again"));
        let old = db.session("old").expect("q").expect("old");
        assert!(old.revoked);
        let new = db.session("new").expect("q").expect("new");
        assert_eq!((new.user.id, new.expires_at, new.revoked), (1, 20, false));
        assert!(db.session("newer").expect("q").is_none());
        assert!(!verify_password("x", "not a phc string"));
    }
}
