//! The example app's typed operations are checked at compile time against `examples/todo-app/graphql/
//! schema.graphql`: this test fails when that file is not the schema this backend serves.
#![allow(clippy::unwrap_used)]

use std::path::Path;

#[test]
fn the_apps_checked_in_schema_is_the_one_the_backend_serves() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../todo-app/graphql/schema.graphql");
    let served = todo_backend::graphql::schema_sdl();
    if std::env::var_os("CACHET_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &served).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == served,
        "{} is stale: run `CACHET_UPDATE_SCHEMA=1 cargo test -p todo-backend --test schema`",
        path.display()
    );
}
