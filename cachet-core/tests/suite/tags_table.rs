//! The tag rules of `cachet_core::tags::derive`, as tables, and SPEC §4's examples.

use cachet_core::graphql::OperationKind::{Mutation, Query, Subscription};
use cachet_core::tags::{invalidation_tags, is_hit, query_tags, split_words};

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

#[test]
fn operation_names_split_into_words() {
    let table: &[(&str, &[&str])] = &[
        ("GetNotes", &["get", "notes"]),
        ("getNotes", &["get", "notes"]),
        ("get_notes", &["get", "notes"]),
        ("GET_NOTES", &["get", "notes"]),
        ("CreateTodoItem", &["create", "todo", "item"]),
        ("GetHTMLPage", &["get", "html", "page"]),
        ("GetV2Users", &["get", "v2", "users"]),
        ("Users2", &["users2"]),
        ("__Private_name", &["private", "name"]),
        ("X", &["x"]),
        ("", &[]),
    ];
    for (name, words) in table {
        assert_eq!(split_words(name), strings(words), "name {name:?}");
    }
}

#[test]
fn query_auto_tags() {
    let table: &[(&str, &[&str])] = &[
        ("GetNotes", &["getnotes", "notes"]),
        ("GetNote", &["getnote", "note"]),
        ("ListTodoItems", &["listtodoitems", "todo-items"]),
        ("GetNotesQuery", &["getnotesquery", "notes"]),
        ("GetNotesByAuthor", &["getnotesbyauthor", "notes"]),
        ("NotesForUser", &["notes", "notesforuser"]),
        ("Dashboard", &["dashboard"]),
        ("CurrentUser", &["current-user", "currentuser"]),
        ("notes", &["notes"]),
        ("fetchUserProfile", &["fetchuserprofile", "user-profile"]),
        ("AllNotes", &["allnotes", "notes"]),
        ("Get", &["get"]),
        ("Query", &["query"]),
        ("SearchHTMLPages", &["html-pages", "searchhtmlpages"]),
    ];
    for (name, tags) in table {
        assert_eq!(query_tags(Query, Some(name)), strings(tags), "query {name:?}");
    }
}

#[test]
fn mutation_invalidation_tags() {
    let table: &[(&str, &[&str])] = &[
        ("CreateNote", &["note", "notes"]),
        ("DeleteNotes", &["note", "notes"]),
        ("UpdateUser", &["user", "users"]),
        ("CreateTodoItem", &["todo-item", "todo-items"]),
        ("DeleteTodoItems", &["todo-item", "todo-items"]),
        ("createNoteMutation", &["note", "notes"]),
        ("UpdateNoteForUser", &["note", "notes"]),
        ("LikePost", &["post", "posts"]),
        ("AddCategory", &["categories", "category"]),
        ("RemoveCategories", &["categorie", "categories", "category"]),
        ("DeleteMovies", &["movie", "movies", "movy"]),
        ("CreateKey", &["key", "keys"]),
        ("UpdateStatus", &["status", "statuses"]),
        ("CreateBox", &["box", "boxes"]),
        ("ClearCaches", &["cach", "cache", "caches"]),
        ("AddPerson", &["people", "person"]),
        ("RemovePeople", &["people", "person"]),
        ("ArchiveClass", &["class", "classes"]),
        ("Logout", &[]),
        ("LogoutMutation", &[]),
    ];
    for (name, tags) in table {
        assert_eq!(invalidation_tags(Mutation, Some(name)), strings(tags), "mutation {name:?}");
    }
}

#[test]
fn spec_section_4_holds() {
    // CreateNote invalidates notes and note, which GetNotes / GetNote carry.
    let invalidated = invalidation_tags(Mutation, Some("CreateNote"));
    assert!(is_hit(&query_tags(Query, Some("GetNotes")), &invalidated));
    assert!(is_hit(&query_tags(Query, Some("GetNote")), &invalidated));
    // UpdateUser does not invalidate a query tagged dashboard, nor an unrelated query.
    let invalidated = invalidation_tags(Mutation, Some("UpdateUser"));
    assert!(!is_hit(&strings(&["dashboard"]), &invalidated));
    assert!(!is_hit(&query_tags(Query, Some("Dashboard")), &invalidated));
    assert!(!is_hit(&query_tags(Query, Some("GetNotes")), &invalidated));
    // Anonymous operations get none; subscriptions get none; the wrong kind gets none.
    assert!(query_tags(Query, None).is_empty());
    assert!(invalidation_tags(Mutation, None).is_empty());
    assert!(query_tags(Subscription, Some("OnNote")).is_empty());
    assert!(query_tags(Mutation, Some("CreateNote")).is_empty());
    assert!(invalidation_tags(Query, Some("GetNotes")).is_empty());
    // An invalidate by operation name hits exactly that query.
    assert!(is_hit(&query_tags(Query, Some("GetNotes")), &strings(&["getnotes"])));
}

#[test]
fn over_long_derived_tags_are_dropped() {
    let name = format!("Get{}", "Very".repeat(20));
    assert_eq!(query_tags(Query, Some(&name)), Vec::<String>::new());
    let name = format!("Create{}", "Long".repeat(16));
    assert_eq!(invalidation_tags(Mutation, Some(&name)).len(), 0);
}
