//! The procedural macros of [reticent](https://docs.rs/reticent): `#[tool]`, `#[tools]` and
//! `#[derive(Disclose)]`. Use them through the `reticent` crate, which documents them.
//!
//! Each macro follows the same three steps: build a model of the input that borrows the
//! user's tokens ([`ast`]), check it, collecting every mistake with a span at the offending
//! tokens ([`ctxt`]), then expand it ([`expand`]). When there are mistakes the original item
//! is still emitted beside the errors, so one mistake does not cascade.

use proc_macro::TokenStream;

mod ast;
mod attr;
mod ctxt;
mod disclose;
mod expand;
mod tools;

/// Turns a function into a tool. See the `reticent` crate.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool(args.into(), input.into()).into()
}

/// Turns the `#[tool]` methods of an `impl` block into a `Toolbox`. See the `reticent` crate.
#[proc_macro_attribute]
pub fn tools(args: TokenStream, input: TokenStream) -> TokenStream {
    tools::tools(args.into(), input.into()).into()
}

/// Derives `reticent::Disclose`: how each variant of an error type is shown to the model.
/// See the `reticent` crate.
#[proc_macro_derive(Disclose, attributes(disclose))]
pub fn derive_disclose(input: TokenStream) -> TokenStream {
    disclose::derive(syn::parse_macro_input!(input as syn::DeriveInput)).into()
}
