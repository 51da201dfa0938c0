//! Discovery as the 2025-03-26 revision of MCP had it, for a server that offers no
//! protected-resource metadata.
//!
//! # What that revision asks
//!
//! Before protected-resource metadata (RFC 9728, MCP 2025-06-18), a client knew no
//! authorization server: it knew the MCP server's URL. The 2025-03-26 authorization section
//! (§2.3.2) makes the *authorization base URL* that URL with its path discarded, has the
//! client read RFC 8414 metadata at `{base}/.well-known/oauth-authorization-server`, and, when
//! there is none, use `{base}/authorize`, `/token` and `/register` (§2.3.3, which rmcp's
//! discovery already falls back to).
//!
//! # The issuer of that document
//!
//! RFC 8414 §3.3 says that the `issuer` of a metadata document must be the issuer identifier
//! the client inserted the well-known string into to make the URL it fetched, and that a
//! document whose issuer is not must not be used. On the modern path the client starts from
//! an issuer the protected-resource metadata named, and that check is what stops a document
//! from speaking for an authorization server it is not (RFC 8414 §6.2, impersonation; and
//! mix-up between servers): rmcp makes it, and it is never relaxed there.
//!
//! On the legacy path the client starts from no issuer at all. The revision fixes the
//! location (the root of the MCP server's origin) without making the base an issuer
//! identifier, and a server whose authorization server lives under a path (`/oauth`, say)
//! can publish its metadata nowhere else: the path-inserted location RFC 8414 would give it,
//! `/.well-known/oauth-authorization-server/oauth`, is one a 2025-03-26 client never reads.
//! So the document found there names an issuer the client could not have known, and the
//! question §3.3 answers ("is this the server I asked for?") is asked of the origin instead:
//!
//! - An issuer **on the MCP server's origin** (same scheme, host and port; no query or
//!   fragment, as RFC 8414 §2 requires of an issuer) is accepted. Whoever answers at the
//!   origin's root controls every path of that origin, so the document claims to be no one
//!   the client was not already trusting: the client was sent to that origin by the user, and
//!   it would equally have followed default endpoints there. The metadata is then used with
//!   the issuer it names, which binds the rest of the flow (the `iss` of the authorization
//!   response, RFC 9207; the issuer tokens are stored under).
//! - An issuer **on any other origin** is refused, with rmcp's mismatch error: that is the
//!   impersonation §3.3 and §6.2 are about, a document served by one party claiming to be
//!   another's authorization server.
//! - A document with **no issuer** is refused too (RFC 8414 §2: required).
//!
//! This path is taken only when the server shows no sign of the modern protocol: its 401 names
//! no `resource_metadata`, and both well-known locations of RFC 9728 §3.1 answer 404 (or 410).
//! Any other answer there (a document, a refusal, an error, a timeout) leaves rmcp's refusal
//! standing, so a server that offers protected-resource metadata cannot be downgraded to this
//! path.

use rmcp::transport::auth::AuthorizationMetadata;

use super::OAuthHttp;

/// The authorization server's metadata for the MCP server `resource` by the 2025-03-26 rule,
/// when `resource` offers no protected-resource metadata (its 401's `challenge` names none,
/// and the well-known locations answer 404) and the document at its origin's root names an
/// issuer on that origin (see the module docs). `None` otherwise: the caller keeps its error.
pub(super) async fn metadata(
    http: &OAuthHttp,
    resource: &str,
    challenge: &str,
) -> Option<AuthorizationMetadata> {
    let Ok(server) = reqwest::Url::parse(resource) else {
        return None;
    };
    // Any `resource_metadata` parameter, even one whose URL rmcp would not follow: the server
    // speaks of protected-resource metadata, so it is not a 2025-03-26 server.
    if challenge
        .to_ascii_lowercase()
        .contains("resource_metadata=")
    {
        return None;
    }
    let at = |path: &str| {
        let mut url = server.clone();
        url.set_path(path);
        url.set_query(None);
        url.set_fragment(None);
        url
    };
    let path = server.path().trim_end_matches('/');
    let mut protected_resource = vec![at("/.well-known/oauth-protected-resource")];
    if !path.is_empty() {
        protected_resource.insert(
            0,
            at(&format!("/.well-known/oauth-protected-resource{path}")),
        );
    }
    for url in protected_resource {
        match http.get(url).await {
            Ok((status, _)) if status.as_u16() == 404 || status.as_u16() == 410 => {}
            _ => return None,
        }
    }
    let Ok((status, body)) = http
        .get(at("/.well-known/oauth-authorization-server"))
        .await
    else {
        return None;
    };
    if !status.is_success() {
        return None;
    }
    let Ok(metadata) = serde_json::from_slice::<AuthorizationMetadata>(&body) else {
        return None;
    };
    let on_origin = metadata
        .issuer
        .as_deref()
        .and_then(|issuer| reqwest::Url::parse(issuer).ok())
        .is_some_and(|issuer| {
            issuer.origin() == server.origin()
                && issuer.query().is_none()
                && issuer.fragment().is_none()
        });
    if !on_origin {
        return None;
    }
    tracing::info!(
        server = %resource,
        issuer = metadata.issuer.as_deref().unwrap_or_default(),
        "the MCP server offers no protected-resource metadata: its authorization server was found \
         as the 2025-03-26 revision located it, at the root of its origin"
    );
    Some(metadata)
}
