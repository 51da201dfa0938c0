//! `#[derive(Disclose)]`: how each variant of an error type is shown to the model, decided at
//! compile time. Parse the type and its `#[disclose(..)]` attributes into a model (`attr.rs`,
//! `ast.rs`), check it (`valid.rs`), then expand it (`expand.rs`), or emit the errors beside a
//! stand-in impl (`fallback.rs`).

mod ast;
mod attr;
mod expand;
mod fallback;
mod valid;

use proc_macro2::TokenStream;
use syn::DeriveInput;

use crate::ctxt::Ctxt;
use ast::Input;

pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let input = Input::from_syn(input, &cx);
    input.validate(&cx);
    match cx.check() {
        Ok(()) => expand::derive(&input),
        Err(error) => fallback::derive(error, &input),
    }
}
