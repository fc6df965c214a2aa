//! What a call's options must satisfy before anything is sent: tags the core accepts, and the features
//! the call needs switched on in the config.

use cachet_core::tags::parse_tag_list;

use crate::Error;

/// `tags` checked and normalised by the core's tag rules; `option` names the option in the error.
pub(crate) fn checked_tags(tags: Vec<String>, option: &'static str) -> Result<Vec<String>, Error> {
    let header = if option == "invalidate" { "invalidate option" } else { "tags option" };
    if let Some(tag) = tags.iter().find(|tag| tag.contains(',')) {
        return Err(Error::TagWithComma { option, tag: tag.clone() });
    }
    parse_tag_list(&tags.join(",")).map_err(|source| Error::Core(cachet_core::Error::Tags { header, source }))
}

/// [`Error::FeatureOff`] when `call` needs auth or GraphQL and the config has it off,
/// [`Error::NotBuilt`] when it needs auth and the build left the cargo feature out. A refused call says
/// so once on the console (`console.warn`), where a developer looks, besides the error it returns.
pub(crate) fn refuse_when_off(
    config: &cachet_core::config::Config,
    call: &'static str,
    auth: bool,
    graphql: bool,
) -> Result<(), Error> {
    let refused = if graphql && !config.features.graphql.enabled {
        Some(Error::FeatureOff {
            call,
            key: "features.graphql.enabled",
            enable: "`cachet add graphql`, then `cachet generate`",
        })
    } else if auth && !crate::session::Session::BUILT {
        Some(auth_not_built(call))
    } else if auth && !config.features.auth.enabled {
        Some(Error::FeatureOff {
            call,
            key: "features.auth.enabled",
            enable: "`cachet add auth`, then `cachet generate`; or `configure({ auth })`",
        })
    } else {
        None
    };
    match refused {
        Some(error) => Err(warned(error)),
        None => Ok(()),
    }
}

/// [`Error::NotBuilt`] for `call`, which needs auth, in a build without the cargo feature `auth` (a
/// config with auth on, or an `auth: true` request).
pub(crate) fn auth_not_built(call: &'static str) -> Error {
    Error::NotBuilt {
        call,
        feature: "auth",
        how: "the `auth` feature of cachet-kit, which `cachet add auth` adds, or of cachet-client",
    }
}

/// `error`, said once on the console as a warning.
pub(crate) fn warned(error: Error) -> Error {
    web_sys::console::warn_1(&format!("cachet: {error}").into());
    error
}
