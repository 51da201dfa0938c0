//! What the code the macros generate names, re-exported from the modules that own each
//! concern. Not public API: no stability guarantees. Nothing in the crate imports it.

pub use crate::__register_disclose as register_disclose;
pub use crate::argument_field::{
    ArgumentField, ArgumentFields, AsRefErrorField, AsRefSendErrorField, AsRefSendSyncErrorField,
    AsRefSyncErrorField, DerefErrorField, ErrorField, PlainField, argument_field,
};
pub use crate::secret::{SecretCannotBeFormatted, SecretCannotBeSerialized};
pub use crate::tool::generated::*;
pub use futures::future::BoxFuture;
#[cfg(any(feature = "anyhow", feature = "eyre"))]
pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;
pub use std::sync::OnceLock;
