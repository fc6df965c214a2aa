//! Todo storage, always scoped to one user: a user never reads or changes another's rows.

use rusqlite::{params, OptionalExtension, Row};

use crate::db::Db;
use crate::error::now_ms;

/// One todo item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Todo {
    /// Row id.
    pub id: i64,
    /// Owner.
    pub user_id: i64,
    /// Text.
    pub title: String,
    /// Completed?
    pub done: bool,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
}

const COLUMNS: &str = "id, user_id, title, done, created_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Todo> {
    Ok(Todo {
        id: r.get(0)?,
        user_id: r.get(1)?,
        title: r.get(2)?,
        done: r.get::<_, i64>(3)? != 0,
        created_at: r.get(4)?,
    })
}

impl Db {
    /// All of a user's todos, oldest first.
    pub fn list_todos(&self, user_id: i64) -> anyhow::Result<Vec<Todo>> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare(&format!("SELECT {COLUMNS} FROM todos WHERE user_id = ?1 ORDER BY id"))?;
        let rows = stmt.query_map(params![user_id], from_row)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// One of the user's todos, or `None` if it does not exist or is someone else's.
    pub fn get_todo(&self, user_id: i64, id: i64) -> anyhow::Result<Option<Todo>> {
        let conn = self.conn()?;
        let todo = conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM todos WHERE id = ?1 AND user_id = ?2"),
                params![id, user_id],
                from_row,
            )
            .optional()?;
        Ok(todo)
    }

    /// Creates a todo for the user.
    pub fn create_todo(&self, user_id: i64, title: &str) -> anyhow::Result<Todo> {
        let created_at = now_ms();
        let id = {
            let conn = self.conn()?;
            conn.execute(
                "INSERT INTO todos (user_id, title, done, created_at) VALUES (?1, ?2, 0, ?3)",
                params![user_id, title, created_at],
            )?;
            conn.last_insert_rowid()
        };
        Ok(Todo { id, user_id, title: title.to_owned(), done: false, created_at })
    }

    /// Changes the given fields of one of the user's todos; `None` if it is not theirs.
    pub fn update_todo(
        &self,
        user_id: i64,
        id: i64,
        title: Option<&str>,
        done: Option<bool>,
    ) -> anyhow::Result<Option<Todo>> {
        {
            let conn = self.conn()?;
            let changed = conn.execute(
                "UPDATE todos SET title = COALESCE(?3, title), done = COALESCE(?4, done)
                 WHERE id = ?1 AND user_id = ?2",
                params![id, user_id, title, done.map(i64::from)],
            )?;
            if changed == 0 {
                return Ok(None);
            }
        }
        self.get_todo(user_id, id)
    }

    /// Deletes one of the user's todos; `false` if it was not theirs or did not exist.
    pub fn delete_todo(&self, user_id: i64, id: i64) -> anyhow::Result<bool> {
        let changed =
            self.conn()?.execute("DELETE FROM todos WHERE id = ?1 AND user_id = ?2", params![id, user_id])?;
        Ok(changed > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn todos_are_scoped_per_user() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(&dir.path().join("t.sqlite")).expect("open");
        let a = db.create_todo(1, "a's").expect("create");
        assert_eq!(db.list_todos(2).expect("list").len(), 0);
        assert_eq!(db.get_todo(2, a.id).expect("get"), None);
        assert_eq!(db.update_todo(2, a.id, None, Some(true)).expect("u"), None);
        assert!(!db.delete_todo(2, a.id).expect("delete"));
        let updated = db.update_todo(1, a.id, Some("new"), Some(true)).expect("u");
        assert_eq!(updated.map(|t| (t.title, t.done)), Some(("new".into(), true)));
        assert!(db.delete_todo(1, a.id).expect("delete"));
    }
}
