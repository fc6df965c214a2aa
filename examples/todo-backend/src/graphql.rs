//! The GraphQL API: `todos`, `todo(id)`, `me` and the todo mutations, scoped to the caller.

use std::sync::Arc;

use async_graphql::extensions::apollo_persisted_queries::{ApolloPersistedQueries, LruCacheStorage};
use async_graphql::parser::types::DocumentOperations;
use async_graphql::{Context, EmptySubscription, Object, Result, Schema, ID};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use cachet_core::protocol::headers::CACHE_TAGS_HEADER;
use serde_json::json;

use crate::app::AppState;
use crate::auth::{authenticate, NOT_AUTHENTICATED};
use crate::counters::graphql_key;
use crate::db::{Db, User};
use crate::error::now_ms;
use crate::idempotency;
use crate::todos::Todo;

/// The executed `response` as JSON, with the HTTP headers its resolvers added
/// ([`Context::append_http_header`]) and the `Cache-Control` async-graphql computed from the schema's
/// hints (`cache_control` on the fields it ran: the shortest `max-age`, `private` when any field is;
/// none when no field it ran has a hint, as before the hints).
fn answer(response: async_graphql::Response) -> Response {
    let headers = response.http_headers.clone();
    let cache_control = response.cache_control.value();
    let mut answer = Json(response).into_response();
    answer.headers_mut().extend(headers);
    if let Some(value) = cache_control.and_then(|value| header::HeaderValue::from_str(&value).ok()) {
        answer.headers_mut().insert(header::CACHE_CONTROL, value);
    }
    answer
}

/// The executable schema.
pub type TodoSchema = Schema<QueryRoot, MutationRoot, EmptySubscription>;

/// Builds the schema around the database.
///
/// With async-graphql's own automatic persisted queries (`ApolloPersistedQueries`, the texts in an LRU
/// of 256 in the server's memory, forgotten when it restarts): a hash it holds runs its text, one it
/// does not is answered `PersistedQueryNotFound`, a hash with its text is kept.
pub fn build_schema(db: Arc<Db>) -> TodoSchema {
    let persisted = ApolloPersistedQueries::new(LruCacheStorage::new(256));
    Schema::build(QueryRoot, MutationRoot, EmptySubscription).data(db).extension(persisted).finish()
}

/// The schema in GraphQL SDL: what `examples/todo-app/graphql/schema.graphql` holds, for the app's typed
/// operations (`graphql_client` checks them against it at compile time). A test fails when the file is
/// stale; `CACHET_UPDATE_SCHEMA=1 cargo test -p todo-backend --test schema` rewrites it.
pub fn schema_sdl() -> String {
    Schema::build(QueryRoot, MutationRoot, EmptySubscription).finish().sdl()
}

/// The operation a request runs: its `operationName`, else the document's first named
/// operation, else `None` (anonymous or unparsable).
pub fn operation_name(request: &async_graphql::Request) -> Option<String> {
    if let Some(name) = request.operation_name.as_deref().filter(|n| !n.is_empty()) {
        return Some(name.to_owned());
    }
    let doc = async_graphql::parser::parse_query(&request.query).ok()?;
    match doc.operations {
        DocumentOperations::Single(_) => None,
        DocumentOperations::Multiple(ops) => {
            ops.iter().min_by_key(|(_, op)| (op.pos.line, op.pos.column)).map(|(name, _)| name.to_string())
        }
    }
}

/// Parses a standard GraphQL JSON body, insisting on a string `query` field, but for a persisted query's
/// hash (`extensions.persistedQuery` and no `query`: the text is the extension's to find).
pub fn parse_request(body: &[u8]) -> std::result::Result<async_graphql::Request, String> {
    let mut value: serde_json::Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let hashed = value.pointer("/extensions/persistedQuery").is_some();
    let Some(members) = value.as_object_mut() else { return Err("expected a JSON object".into()) };
    match members.get("query") {
        Some(serde_json::Value::String(_)) => {}
        Some(_) => return Err("field `query` must be a string".into()),
        None if hashed => {
            members.insert("query".to_owned(), serde_json::Value::String(String::new()));
        }
        None => return Err("missing field `query`".into()),
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

fn graphql_error(status: StatusCode, message: &str) -> Response {
    let body = json!({ "error": message, "errors": [{ "message": message }] });
    (status, Json(body)).into_response()
}

/// `GET /graphql?query=…&variables=…&operationName=…` (GraphQL over HTTP, urql's default for queries):
/// the same request posted, read off the search; a mutation is refused with 405 (`Allow: POST`), as the
/// GraphQL-over-HTTP specification says, and a malformed `variables` with 400.
pub async fn get_handler(
    state: State<AppState>,
    headers: HeaderMap,
    axum::extract::RawQuery(search): axum::extract::RawQuery,
) -> Response {
    let search_length = search.as_deref().map_or(0, str::len);
    let mut body = serde_json::Map::new();
    for (name, value) in form_urlencoded::parse(search.unwrap_or_default().as_bytes()) {
        let member = match &*name {
            "query" | "operationName" => serde_json::Value::String(value.into_owned()),
            "variables" | "extensions" => match serde_json::from_str(&value) {
                Ok(member) => member,
                Err(error) => return graphql_error(StatusCode::BAD_REQUEST, &format!("{name}: {error}")),
            },
            _ => continue,
        };
        body.insert(name.into_owned(), member);
    }
    let query = body.get("query").and_then(serde_json::Value::as_str).unwrap_or_default();
    let operation_name = body.get("operationName").and_then(serde_json::Value::as_str);
    let mutation = cachet_core::graphql::operation_of(query, operation_name)
        .is_ok_and(|operation| operation.kind != cachet_core::graphql::OperationKind::Query);
    if mutation {
        let refused = graphql_error(StatusCode::METHOD_NOT_ALLOWED, "only queries may be sent with GET");
        return ([(header::ALLOW, "POST")], refused).into_response();
    }
    let wire = Sent::Get { search: search_length };
    handle(state, headers, Bytes::from(serde_json::Value::Object(body).to_string()), wire).await
}

/// How a request came: its bytes on the wire (the body's; a GET's search's).
enum Sent {
    Post,
    Get { search: usize },
}

/// `POST /graphql`: counts the operation, demands auth (HTTP 401 otherwise), executes.
pub async fn handler(state: State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    handle(state, headers, body, Sent::Post).await
}

/// Counts the operation (`graphql <name>`), its bytes (`graphql wire <name>`) and how it came
/// (`graphql hashed <name>`: a persisted-query hash without its text; `graphql registered <name>`: with
/// it; `graphql GET <name>`), demands auth (HTTP 401 otherwise), executes (with async-graphql's
/// persisted queries: [`build_schema`]).
async fn handle(State(state): State<AppState>, headers: HeaderMap, body: Bytes, sent: Sent) -> Response {
    let parsed = parse_request(&body);
    let operation = parsed.as_ref().ok().and_then(operation_name);
    if let Ok(request) = &parsed {
        let name = operation.as_deref().unwrap_or("<anonymous>");
        state.counters.incr(graphql_key(operation.as_deref()));
        let wire = match sent {
            Sent::Post => body.len(),
            Sent::Get { search } => {
                state.counters.incr(format!("graphql GET {name}"));
                search
            }
        };
        state.counters.add(format!("graphql wire {name}"), wire as u64);
        if request.extensions.contains_key("persistedQuery") {
            let way = if request.query.is_empty() { "hashed" } else { "registered" };
            state.counters.incr(format!("graphql {way} {name}"));
        }
    }
    if let Some(response) = crate::test_hooks::take_graphql_response(&state, operation.as_deref()) {
        return response;
    }
    if let Some(status) = crate::test_hooks::take_graphql_failure(&state) {
        return graphql_error(status, "failed on purpose (test hook /__test/fail-graphql)");
    }
    let authed = match authenticate(&state, &headers) {
        Ok(authed) => authed,
        Err(err) if err.status == StatusCode::UNAUTHORIZED => {
            let body = json!({ "errors": [{ "message": NOT_AUTHENTICATED }] });
            return (StatusCode::UNAUTHORIZED, Json(body)).into_response();
        }
        Err(err) => return graphql_error(err.status, &err.message),
    };
    let request = match parsed {
        Ok(request) => request,
        Err(err) => {
            let message = format!("malformed GraphQL request body: {err}");
            return graphql_error(StatusCode::BAD_REQUEST, &message);
        }
    };
    // A mutation that succeeds is pushed to the user's other browsers ([`crate::push`]).
    let mutation = cachet_core::graphql::operation_of(&request.query, request.operation_name.as_deref())
        .is_ok_and(|operation| operation.kind == cachet_core::graphql::OperationKind::Mutation);
    let announce = |state: &AppState, response: &async_graphql::Response, user_id: i64| {
        if mutation && response.is_ok() {
            let tags = crate::push::tags_of_mutation(operation.as_deref());
            crate::push::announce_change(state, user_id, &authed.token, tags);
        }
    };
    let key = match idempotency::key(&headers) {
        Ok(Some(key)) => key,
        Ok(None) => {
            let user_id = authed.user.id;
            let response = state.schema.execute(request.data(authed.user.clone())).await;
            announce(&state, &response, user_id);
            crate::test_hooks::delay_graphql_answer(&state).await;
            return answer(response);
        }
        Err(message) => return graphql_error(StatusCode::BAD_REQUEST, &message),
    };
    let user_id = authed.user.id;
    let one_at_a_time = state.idempotency.lock().await;
    match state.db.idempotent_answer(user_id, &key) {
        Ok(Some((status, body))) => {
            state.counters.incr("graphql idempotent replay");
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            let headers = [
                (header::CONTENT_TYPE, "application/json"),
                (HeaderName::from_static(idempotency::REPLAYED_HEADER), "true"),
            ];
            return (status, headers, body).into_response();
        }
        Ok(None) => {}
        Err(err) => return graphql_error(StatusCode::INTERNAL_SERVER_ERROR, &err.to_string()),
    }
    // The effect and its kept answer in one SQLite transaction: both land, or (a failed write, a crash
    // between them) neither, and a retry with the key runs again.
    let transaction = match state.db.begin() {
        Ok(transaction) => Arc::new(transaction),
        Err(err) => return graphql_error(StatusCode::INTERNAL_SERVER_ERROR, &err.to_string()),
    };
    let request = request.data(authed.user.clone()).data(transaction.clone());
    let response = state.schema.execute(request).await;
    let body = serde_json::to_string(&response).unwrap_or_default();
    let kept = transaction.keep_idempotent_answer(user_id, &key, 200, &body, now_ms());
    if let Err(err) = kept.and_then(|()| transaction.commit()) {
        return graphql_error(StatusCode::INTERNAL_SERVER_ERROR, &err.to_string());
    }
    announce(&state, &response, user_id);
    drop(one_at_a_time);
    crate::test_hooks::delay_graphql_answer(&state).await;
    (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn caller<'a>(ctx: &Context<'a>) -> Result<(&'a Arc<Db>, &'a User)> {
    Ok((ctx.data::<Arc<Db>>()?, ctx.data::<User>()?))
}

fn parse_id(id: &ID) -> Result<i64> {
    id.parse::<i64>().map_err(|_| format!("invalid todo id `{}`: expected an integer", id.as_str()).into())
}

fn not_found(id: &ID) -> async_graphql::Error {
    format!("todo {} not found", id.as_str()).into()
}

#[Object]
impl User {
    async fn id(&self) -> ID {
        ID(self.id.to_string())
    }

    async fn username(&self) -> &str {
        &self.username
    }
}

#[Object]
impl Todo {
    async fn id(&self) -> ID {
        ID(self.id.to_string())
    }

    async fn title(&self) -> &str {
        &self.title
    }

    async fn done(&self) -> bool {
        self.done
    }
}

/// Query root.
pub struct QueryRoot;

#[Object]
impl QueryRoot {
    /// The caller.
    async fn me(&self, ctx: &Context<'_>) -> Result<User> {
        Ok(caller(ctx)?.1.clone())
    }

    /// The caller's todos, oldest first.
    async fn todos(&self, ctx: &Context<'_>) -> Result<Vec<Todo>> {
        let (db, user) = caller(ctx)?;
        // The answer carries `X-SW-Cache-Tags: todos` (SPEC §4): any query selecting them, whatever its
        // name, is invalidated by the todo mutations. (Not in the doc comment: that is the schema's.)
        ctx.append_http_header(CACHE_TAGS_HEADER, "todos");
        Ok(db.list_todos(user.id)?)
    }

    /// A message for every user, the same for ten minutes (a public hint: `max-age=600`).
    #[graphql(cache_control(max_age = 600))]
    async fn motd(&self) -> &'static str {
        "Remember the milk."
    }

    /// The server's clock (Unix ms): never the same twice, so never fresh (`no-cache`).
    #[graphql(cache_control(no_cache))]
    async fn server_time(&self) -> String {
        crate::error::now_ms().to_string()
    }

    /// How many todos the caller has: the caller's own, fresh for a minute (`max-age=60, private`).
    #[graphql(cache_control(max_age = 60, private))]
    async fn todo_count(&self, ctx: &Context<'_>) -> Result<i64> {
        let (db, user) = caller(ctx)?;
        Ok(i64::try_from(db.list_todos(user.id)?.len()).unwrap_or(i64::MAX))
    }

    /// One of the caller's todos; null when unknown or someone else's.
    async fn todo(&self, ctx: &Context<'_>, id: ID) -> Result<Option<Todo>> {
        let (db, user) = caller(ctx)?;
        Ok(db.get_todo(user.id, parse_id(&id)?)?)
    }
}

/// Mutation root.
pub struct MutationRoot;

#[Object]
impl MutationRoot {
    /// Adds a todo for the caller.
    async fn create_todo(&self, ctx: &Context<'_>, title: String) -> Result<Todo> {
        let (db, user) = caller(ctx)?;
        if title.trim().is_empty() {
            return Err("title must not be empty".into());
        }
        Ok(db.create_todo(user.id, &title)?)
    }

    /// Changes a todo's title and/or done flag.
    async fn update_todo(
        &self,
        ctx: &Context<'_>,
        id: ID,
        title: Option<String>,
        done: Option<bool>,
    ) -> Result<Todo> {
        let (db, user) = caller(ctx)?;
        if title.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err("title must not be empty".into());
        }
        db.update_todo(user.id, parse_id(&id)?, title.as_deref(), done)?.ok_or_else(|| not_found(&id))
    }

    /// Deletes a todo; false when it was unknown or someone else's.
    async fn delete_todo(&self, ctx: &Context<'_>, id: ID) -> Result<bool> {
        let (db, user) = caller(ctx)?;
        Ok(db.delete_todo(user.id, parse_id(&id)?)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(query: &str, name: Option<&str>) -> Option<String> {
        let mut req = async_graphql::Request::new(query);
        req.operation_name = name.map(str::to_owned);
        operation_name(&req)
    }

    #[test]
    fn operation_names() {
        assert_eq!(op("query GetTodos { todos { id } }", None).as_deref(), Some("GetTodos"));
        assert_eq!(op("{ todos { id } }", None), None);
        assert_eq!(op("query A { me { id } } query B { me { id } }", Some("B")).as_deref(), Some("B"));
        let two = "mutation Second { deleteTodo(id: 1) }\nquery First { me { id } }";
        assert_eq!(op(two, None).as_deref(), Some("Second"));
        assert_eq!(op("not graphql {", None), None);
        assert!(parse_request(br#"{"variables":{}}"#).is_err());
        assert!(parse_request(br#"{"query":1}"#).is_err());
        assert!(parse_request(br#"{"query":"{ me { id } }","variables":null}"#).is_ok());
    }
}
