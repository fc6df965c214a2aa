//! Login, logout, /api/me, refresh and expiry in both auth modes.

use serde_json::json;
use todo_backend::AuthMode;

use crate::{get, login, post_json, send, server};

#[tokio::test]
async fn cookie_login_me_logout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Cookie).await;
    let addr = srv.addr();

    let me = get(addr, "/api/me", &[]).await;
    assert_eq!(me.status, 401);
    assert_eq!(me.json(), json!({ "error": "not authenticated" }));

    let body = json!({ "username": "alice", "password": "alice-password" });
    let resp = post_json(addr, "/api/login", &[], &body).await;
    assert_eq!(resp.status, 200);
    let cookie = resp.header("set-cookie").expect("set-cookie").to_owned();
    assert!(cookie.starts_with("cachet_session="), "{cookie}");
    for attr in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(cookie.contains(attr), "{cookie} lacks {attr}");
    }
    let json = resp.json();
    assert_eq!(json["user"]["username"], "alice");
    assert!(json["expiresAt"].as_i64().expect("expiresAt") > 0);
    assert!(json.get("token").is_none(), "cookie mode must not expose a token");

    let pair = cookie.split(';').next().expect("pair");
    let cred = [("Cookie", pair)];
    let me = get(addr, "/api/me", &cred).await;
    assert_eq!(me.status, 200);
    assert_eq!(me.json()["user"]["username"], "alice");

    // Extending a valid session works.
    let refreshed = post_json(addr, "/api/refresh", &cred, &json!({})).await;
    assert_eq!(refreshed.status, 200, "{}", refreshed.text());
    assert!(refreshed.json()["expiresAt"].as_i64() >= json["expiresAt"].as_i64());

    let out = send(addr, "POST", "/api/logout", &cred, None).await.expect("logout");
    assert_eq!(out.status, 204);
    assert!(out.header("set-cookie").expect("clears").contains("Max-Age=0"));
    assert_eq!(get(addr, "/api/me", &cred).await.status, 401);
    assert_eq!(post_json(addr, "/api/refresh", &cred, &json!({})).await.status, 401);
    srv.stop().await;
}

#[tokio::test]
async fn bearer_login_refresh_rotates_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Bearer).await;
    let addr = srv.addr();
    let (name, old) = login(addr, AuthMode::Bearer, "bob").await;
    assert_eq!(name, "Authorization");
    let me = get(addr, "/api/me", &[("Authorization", &old)]).await;
    assert_eq!(me.json()["user"]["username"], "bob");

    // Expire everything: /api/me now fails, but refresh still works.
    let expired = post_json(addr, "/__test/expire-tokens", &[], &json!({})).await;
    assert_eq!(expired.status, 200);
    assert_eq!(get(addr, "/api/me", &[("Authorization", &old)]).await.status, 401);

    let resp = post_json(addr, "/api/refresh", &[("Authorization", &old)], &json!({})).await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    let body = resp.json();
    let new = format!("Bearer {}", body["token"].as_str().expect("token"));
    assert_ne!(new, old);
    assert!(body["expiresAt"].as_i64().expect("expiresAt") > 0);
    assert_eq!(get(addr, "/api/me", &[("Authorization", &new)]).await.status, 200);

    // The old token is revoked: neither usable nor refreshable.
    assert_eq!(get(addr, "/api/me", &[("Authorization", &old)]).await.status, 401);
    let again = post_json(addr, "/api/refresh", &[("Authorization", &old)], &json!({})).await;
    assert_eq!(again.status, 401);

    // fail-refresh hook.
    let on = post_json(addr, "/__test/fail-refresh?on=true", &[], &json!({})).await;
    assert_eq!(on.status, 200);
    let refused = post_json(addr, "/api/refresh", &[("Authorization", &new)], &json!({})).await;
    assert_eq!(refused.status, 401);
    post_json(addr, "/__test/fail-refresh?on=false", &[], &json!({})).await;
    let ok = post_json(addr, "/api/refresh", &[("Authorization", &new)], &json!({})).await;
    assert_eq!(ok.status, 200);
    let bad = post_json(addr, "/__test/fail-refresh?on=maybe", &[], &json!({})).await;
    assert_eq!(bad.status, 400);
    assert!(bad.json()["error"].as_str().expect("error").contains("maybe"));

    // Logout revokes the current token.
    let latest = format!("Bearer {}", ok.json()["token"].as_str().expect("token"));
    let out = send(addr, "POST", "/api/logout", &[("Authorization", &latest)], None).await;
    assert_eq!(out.expect("logout").status, 204);
    assert_eq!(get(addr, "/api/me", &[("Authorization", &latest)]).await.status, 401);
    srv.stop().await;
}

/// The bearer mode's refresh cookie (issue 36): a page reloaded with no token in memory restores its
/// session with `POST /api/refresh` and the cookie alone; the cookie rotates with the token, is sent
/// only to the refresh route, and ends with a logout.
#[tokio::test]
async fn bearer_refresh_cookie_restores_a_session_without_a_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Bearer).await;
    let addr = srv.addr();
    let body = json!({ "username": "bob", "password": "bob-password" });
    let resp = post_json(addr, "/api/login", &[], &body).await;
    let set = resp.header("set-cookie").expect("the refresh cookie").to_owned();
    for attr in ["cachet_refresh=", "HttpOnly", "SameSite=Strict", "Path=/api/refresh"] {
        assert!(set.contains(attr), "{set} lacks {attr}");
    }
    let token = resp.json()["token"].as_str().expect("token").to_owned();
    let pair = set.split(';').next().expect("pair").to_owned();
    assert_eq!(pair, format!("cachet_refresh={token}"));

    // No Authorization, the cookie alone: a new token, and the cookie follows it.
    let restored = post_json(addr, "/api/refresh", &[("Cookie", &pair)], &json!({})).await;
    assert_eq!(restored.status, 200, "{}", restored.text());
    let fresh = restored.json()["token"].as_str().expect("token").to_owned();
    assert_ne!(fresh, token);
    assert_eq!(restored.json()["user"]["username"], "bob");
    let rotated = restored.header("set-cookie").expect("rotated cookie").to_owned();
    assert!(rotated.starts_with(&format!("cachet_refresh={fresh};")), "{rotated}");
    // The old cookie's token was rotated away: refused.
    assert_eq!(post_json(addr, "/api/refresh", &[("Cookie", &pair)], &json!({})).await.status, 401);
    // Neither a cookie nor a token: refused.
    assert_eq!(post_json(addr, "/api/refresh", &[], &json!({})).await.status, 401);

    // A logout revokes the token and clears the cookie.
    let bearer = format!("Bearer {fresh}");
    let out = send(addr, "POST", "/api/logout", &[("Authorization", &bearer)], None).await.expect("logout");
    let cleared = out.header("set-cookie").expect("clears").to_owned();
    assert!(cleared.starts_with("cachet_refresh=;") && cleared.contains("Max-Age=0"), "{cleared}");
    let cookie = format!("cachet_refresh={fresh}");
    assert_eq!(post_json(addr, "/api/refresh", &[("Cookie", &cookie)], &json!({})).await.status, 401);
    srv.stop().await;
}

#[tokio::test]
async fn bad_credentials_and_bodies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Bearer).await;
    let addr = srv.addr();

    for body in [
        json!({ "username": "alice", "password": "nope" }),
        json!({ "username": "mallory", "password": "alice-password" }),
    ] {
        let resp = post_json(addr, "/api/login", &[], &body).await;
        assert_eq!(resp.status, 401);
        assert_eq!(resp.json(), json!({ "error": "invalid username or password" }));
    }

    let h = [("Content-Type", "application/json")];
    for (raw, needle) in [
        ("{\"username\": \"alice\"", "malformed JSON body"),
        ("{\"username\": \"alice\"}", "password"),
        ("", "empty"),
        ("[1,2]", "malformed JSON body"),
    ] {
        let resp = send(addr, "POST", "/api/login", &h, Some(raw)).await.expect("send");
        assert_eq!(resp.status, 400, "{raw}");
        let error = resp.json()["error"].as_str().expect("error").to_owned();
        assert!(error.contains(needle), "{error} lacks {needle}");
    }

    for header in ["Basic abc", "Bearer ", "Bearer unknown-token"] {
        let resp = get(addr, "/api/me", &[("Authorization", header)]).await;
        assert_eq!(resp.status, 401, "{header}");
        assert!(resp.json()["error"].as_str().expect("error").starts_with("not authenticated"));
    }
    let resp = post_json(addr, "/api/refresh", &[], &json!({})).await;
    assert_eq!(resp.status, 401);
    let resp = send(addr, "GET", "/api/login", &[], None).await.expect("send");
    assert_eq!(resp.status, 405);
    assert!(resp.json()["error"].as_str().expect("error").contains("GET"));
    srv.stop().await;
}
