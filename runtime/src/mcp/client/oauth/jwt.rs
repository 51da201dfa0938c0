//! `private_key_jwt` client authentication (RFC 7523 §2.2, OpenID Connect Core §9): the client
//! proves its identity at the token endpoint with a short-lived JWT it signs with its private
//! key, which the authorization server checks against the public key registered for it.
//!
//! Signed with `ring`, the crypto rustls already uses here: no second crypto stack.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair,
    RSA_PKCS1_SHA256, RsaKeyPair,
};
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;

use crate::secret::Secret;

/// How long an assertion is valid: RFC 7523 asks for a short expiry, and the authorization
/// server may refuse one that is valid for long.
const LIFETIME_SECS: u64 = 300;

/// The private key of [`OAuth::client_credentials_jwt`](super::OAuth::client_credentials_jwt),
/// which signs this client's assertions. Read from PEM with [`SigningKey::from_pem`].
///
/// Its `Debug` output names the algorithm only; the key appears in no error, log or span.
#[derive(Clone)]
pub struct SigningKey {
    key: Arc<Key>,
}

enum Key {
    Ecdsa(EcdsaKeyPair, &'static str),
    Rsa(RsaKeyPair),
    Ed25519(Ed25519KeyPair),
}

/// A key [`SigningKey::from_pem`] cannot use. Its message says why, and holds nothing of the
/// key.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the private key cannot sign client assertions: {0}")]
pub struct InvalidKey(String);

impl SigningKey {
    /// The private key in `pem`: a PKCS#8 `PRIVATE KEY` (an EC key on P-256, signing with
    /// ES256; on P-384, ES384; an RSA key, RS256; an Ed25519 key, EdDSA), or a PKCS#1
    /// `RSA PRIVATE KEY` (RS256). A SEC1 `EC PRIVATE KEY` is refused: convert it with
    /// `openssl pkcs8 -topk8 -nocrypt`.
    pub fn from_pem(pem: &str) -> Result<Self, InvalidKey> {
        let der = PrivateKeyDer::from_pem_slice(pem.as_bytes()).map_err(|error| {
            // The error names what was wrong with the PEM's structure, not its content.
            InvalidKey(format!("no private key in PEM form ({error})"))
        })?;
        let key = match &der {
            PrivateKeyDer::Pkcs8(pkcs8) => Self::pkcs8(pkcs8.secret_pkcs8_der())?,
            PrivateKeyDer::Pkcs1(pkcs1) => Key::Rsa(
                RsaKeyPair::from_der(pkcs1.secret_pkcs1_der())
                    .map_err(|rejected| InvalidKey(format!("an RSA key refused: {rejected}")))?,
            ),
            PrivateKeyDer::Sec1(_) => {
                return Err(InvalidKey(
                    "an `EC PRIVATE KEY` (SEC1): convert it to PKCS#8 \
                     (`openssl pkcs8 -topk8 -nocrypt`)"
                        .to_owned(),
                ));
            }
            _ => return Err(InvalidKey("an unknown kind of private key".to_owned())),
        };
        Ok(Self { key: Arc::new(key) })
    }

    /// A PKCS#8 key: P-256, P-384, RSA or Ed25519, tried in turn.
    fn pkcs8(der: &[u8]) -> Result<Key, InvalidKey> {
        let random = SystemRandom::new();
        if let Ok(pair) = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &random) {
            return Ok(Key::Ecdsa(pair, "ES256"));
        }
        if let Ok(pair) = EcdsaKeyPair::from_pkcs8(&ECDSA_P384_SHA384_FIXED_SIGNING, der, &random) {
            return Ok(Key::Ecdsa(pair, "ES384"));
        }
        if let Ok(pair) = RsaKeyPair::from_pkcs8(der) {
            return Ok(Key::Rsa(pair));
        }
        if let Ok(pair) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der) {
            return Ok(Key::Ed25519(pair));
        }
        Err(InvalidKey(
            "not an EC key on P-256 or P-384, an RSA key or an Ed25519 key".to_owned(),
        ))
    }

    /// The JWS algorithm the key signs with: `ES256`, `ES384`, `RS256` or `EdDSA`.
    pub fn algorithm(&self) -> &'static str {
        match &*self.key {
            Key::Ecdsa(_, algorithm) => algorithm,
            Key::Rsa(_) => "RS256",
            Key::Ed25519(_) => "EdDSA",
        }
    }

    /// `message` signed, as JWS puts it (the fixed-size `r || s` of ECDSA).
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, ring::error::Unspecified> {
        let random = SystemRandom::new();
        match &*self.key {
            Key::Ecdsa(pair, _) => Ok(pair.sign(&random, message)?.as_ref().to_vec()),
            Key::Rsa(pair) => {
                let mut signature = vec![0; pair.public().modulus_len()];
                pair.sign(&RSA_PKCS1_SHA256, &random, message, &mut signature)?;
                Ok(signature)
            }
            Key::Ed25519(pair) => Ok(pair.sign(message).as_ref().to_vec()),
        }
    }

    /// A client assertion (RFC 7523 §3) for `client_id` at the authorization server `audience`
    /// (its issuer identifier), issued `now` (seconds since the epoch), valid for five minutes,
    /// with a fresh `jti`. Explicitly typed `client-authentication+jwt`, so that it cannot be
    /// taken for another kind of JWT.
    pub(super) fn assertion(
        &self,
        client_id: &str,
        audience: &str,
        now: u64,
    ) -> Result<Secret<String>, ring::error::Unspecified> {
        let header = serde_json::json!({
            "alg": self.algorithm(),
            "typ": "client-authentication+jwt",
        });
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + LIFETIME_SECS,
            "jti": uuid::Uuid::new_v4().to_string(),
        });
        let mut jwt = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self.sign(jwt.as_bytes())?;
        jwt.push('.');
        jwt.push_str(&URL_SAFE_NO_PAD.encode(signature));
        Ok(Secret::new(jwt))
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("algorithm", &self.algorithm())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{
        ECDSA_P256_SHA256_FIXED, ED25519, KeyPair, RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey,
    };

    /// `der` as a PEM block labelled `label`.
    fn pem(label: &str, der: &[u8]) -> String {
        use base64::engine::general_purpose::STANDARD;
        let body = STANDARD.encode(der);
        let lines: Vec<&str> = body
            .as_bytes()
            .chunks(64)
            .map(|line| std::str::from_utf8(line).unwrap())
            .collect();
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            lines.join("\n")
        )
    }

    /// The header, claims and signature of `jwt`, decoded.
    fn parts(jwt: &str) -> (serde_json::Value, serde_json::Value, Vec<u8>, String) {
        let mut parts = jwt.split('.');
        let mut next = || URL_SAFE_NO_PAD.decode(parts.next().unwrap()).unwrap();
        let header = serde_json::from_slice(&next()).unwrap();
        let claims = serde_json::from_slice(&next()).unwrap();
        let signature = next();
        let signed = jwt.rsplit_once('.').unwrap().0.to_owned();
        (header, claims, signature, signed)
    }

    #[test]
    fn an_es256_assertion_verifies_with_the_public_key_and_holds_the_claims() {
        let random = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random).unwrap();
        let key = SigningKey::from_pem(&pem("PRIVATE KEY", pkcs8.as_ref())).unwrap();
        assert_eq!(key.algorithm(), "ES256");
        assert_eq!(
            format!("{key:?}"),
            "SigningKey { algorithm: \"ES256\", .. }"
        );
        let public =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &random)
                .unwrap()
                .public_key()
                .as_ref()
                .to_vec();

        let jwt = key
            .assertion("client-1", "https://as.example", 1_000)
            .unwrap();
        let (header, claims, signature, signed) = parts(jwt.expose());
        assert_eq!(
            header,
            serde_json::json!({"alg": "ES256", "typ": "client-authentication+jwt"})
        );
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://as.example");
        assert_eq!(claims["iat"], 1_000);
        assert_eq!(claims["exp"], 1_300);
        assert!(claims["jti"].as_str().is_some_and(|jti| !jti.is_empty()));
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, public)
            .verify(signed.as_bytes(), &signature)
            .expect("the signature verifies");

        let again = key
            .assertion("client-1", "https://as.example", 1_000)
            .unwrap();
        assert_ne!(
            parts(again.expose()).1["jti"],
            claims["jti"],
            "each assertion has its own jti"
        );
    }

    #[test]
    fn an_ed25519_key_signs_with_eddsa() {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        let key = SigningKey::from_pem(&pem("PRIVATE KEY", pkcs8.as_ref())).unwrap();
        assert_eq!(key.algorithm(), "EdDSA");
        let public = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref())
            .unwrap()
            .public_key()
            .as_ref()
            .to_vec();
        let jwt = key.assertion("c", "https://as.example", 1).unwrap();
        let (_, _, signature, signed) = parts(jwt.expose());
        UnparsedPublicKey::new(&ED25519, public)
            .verify(signed.as_bytes(), &signature)
            .expect("the signature verifies");
    }

    /// An RSA key made for these tests only, as PKCS#8 and as PKCS#1.
    const RSA_PKCS8: &str = include_str!("testdata/rsa-pkcs8.pem");
    const RSA_PKCS1: &str = include_str!("testdata/rsa-pkcs1.pem");

    #[test]
    fn an_rsa_key_signs_with_rs256_in_either_form() {
        let der = PrivateKeyDer::from_pem_slice(RSA_PKCS8.as_bytes()).unwrap();
        let public = RsaKeyPair::from_pkcs8(der.secret_der())
            .unwrap()
            .public_key()
            .as_ref()
            .to_vec();
        for pem in [RSA_PKCS8, RSA_PKCS1] {
            let key = SigningKey::from_pem(pem).unwrap();
            assert_eq!(key.algorithm(), "RS256");
            let jwt = key.assertion("c", "https://as.example", 1).unwrap();
            let (header, _, signature, signed) = parts(jwt.expose());
            assert_eq!(header["alg"], "RS256");
            UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, &public)
                .verify(signed.as_bytes(), &signature)
                .expect("the signature verifies");
        }
    }

    #[test]
    fn what_is_not_a_usable_key_is_refused_without_echoing_it() {
        let canary = "CANARYKEY";
        for text in [
            format!("not a pem {canary}"),
            pem("PRIVATE KEY", canary.as_bytes()),
            pem("EC PRIVATE KEY", canary.as_bytes()),
        ] {
            let error = SigningKey::from_pem(&text).unwrap_err();
            let shown = format!("{error} {error:?}");
            assert!(!shown.contains(canary), "{shown}");
            assert!(!shown.contains(&text), "{shown}");
        }
    }
}
