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

/// [`Error::FeatureOff`] when `call` needs auth or GraphQL and the config has it off.
pub(crate) fn refuse_when_off(
    config: &cachet_core::config::Config,
    call: &'static str,
    auth: bool,
    graphql: bool,
) -> Result<(), Error> {
    if graphql && !config.features.graphql.enabled {
        return Err(Error::FeatureOff {
            call,
            key: "features.graphql.enabled",
            enable: "`cachet add graphql`, then `cachet generate`",
        });
    }
    if auth && !cfg!(feature = "auth") {
        return Err(auth_not_built(call));
    }
    if auth && !config.features.auth.enabled {
        return Err(Error::FeatureOff {
            call,
            key: "features.auth.enabled",
            enable: "`cachet add auth`, then `cachet generate`; or `configure({ auth })`",
        });
    }
    Ok(())
}

/// [`Error::FeatureOff`] for `call`, which needs auth, in a build without the cargo feature `auth` (a
/// config with auth on, or an `auth: true` request).
pub(crate) fn auth_not_built(call: &'static str) -> Error {
    Error::FeatureOff {
        call,
        key: "the cargo feature `auth` of cachet-client",
        enable: "`auth` of cachet-kit (`cachet add auth` adds it), or of cachet-client",
    }
}
