//! `#[tool]` on a free function: parse the options and the function into a model
//! (`attr.rs`, `ast.rs`), check it (`valid.rs`), then expand it (`expand.rs`), or emit the
//! errors beside stand-ins (`fallback.rs`). `#[tools]` reuses every phase for its methods.

pub(crate) mod ast;
pub(crate) mod attr;
pub(crate) mod expand;
mod fallback;
mod valid;

use proc_macro2::TokenStream;
use syn::ItemFn;

use crate::ctxt::{Ctxt, not_this_item, untouched};
use ast::{Place, ToolFn, strip_param_attrs};

pub(crate) fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let options = attr::parse_tool_options(args, &cx);
    let mut item: ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            cx.syn_error(not_a_fn(&input));
            return untouched(cx, input);
        }
    };
    let written = strip_param_attrs(&mut item.sig);
    let tool = ToolFn::from_sig(&written, &item.attrs, options, Place::Free);
    tool.validate(&cx);
    match cx.check() {
        Ok(()) => expand::free_fn(&item, &tool),
        Err(error) => fallback::free_fn(error, &item, &tool),
    }
}

/// The error for `#[tool]` on something other than a function.
fn not_a_fn(input: &TokenStream) -> syn::Error {
    match syn::parse2::<syn::TraitItemFn>(input.clone()) {
        // A method declared in a trait, with no body to call.
        Ok(method) => syn::Error::new_spanned(
            &method.sig.ident,
            "`#[tool]` goes on a function with a body, not on a trait method's declaration; \
             to make methods tools, put `#[reticent::tools]` on an impl block of a type and `#[tool]` on each tool method",
        ),
        Err(_) => not_this_item(
            input,
            "`#[tool]` goes on a function; for methods, put `#[reticent::tools]` on the impl block and `#[tool]` on each tool method",
        ),
    }
}
