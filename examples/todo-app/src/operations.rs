//! The app's GraphQL operations, typed by `graphql_client` from `graphql/*.graphql` and checked at compile
//! time against `graphql/schema.graphql`, the schema the backend serves (a backend test fails when that
//! file is stale). The hooks send each file's text as it is: the same cache entry as the same query
//! written by hand.

use graphql_client::GraphQLQuery;

/// `query GetTodos { todos { id title done } }`: cached (cache-first), tagged `gettodos` and `todos`.
#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/schema.graphql",
    query_path = "graphql/get_todos.graphql",
    response_derives = "Debug, Clone, PartialEq"
)]
pub(crate) struct GetTodos;

/// `query TodoSummary { todos { done } }`: tagged explicitly `summary` by the app.
#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/schema.graphql",
    query_path = "graphql/todo_summary.graphql",
    response_derives = "Debug, Clone, PartialEq"
)]
pub(crate) struct TodoSummary;

/// `mutation CreateTodo($title: String!)`: invalidates `todo`, `todos`.
#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/schema.graphql",
    query_path = "graphql/create_todo.graphql",
    response_derives = "Debug, Clone, PartialEq"
)]
pub(crate) struct CreateTodo;

/// `mutation UpdateTodo($id: ID!, $done: Boolean!)`.
#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/schema.graphql",
    query_path = "graphql/update_todo.graphql",
    response_derives = "Debug, Clone, PartialEq"
)]
pub(crate) struct UpdateTodo;

/// `mutation DeleteTodo($id: ID!)`.
#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/schema.graphql",
    query_path = "graphql/delete_todo.graphql",
    response_derives = "Debug, Clone, PartialEq"
)]
pub(crate) struct DeleteTodo;
