//! `#[tools]` on an inherent impl block: take the `#[tool]` methods off the block into a model
//! (`ast.rs`), check it and each tool (`valid.rs`), then expand it (`expand.rs`), or emit the
//! errors beside a stand-in `Toolbox` impl (`fallback.rs`).

mod ast;
mod expand;
mod fallback;
mod valid;

use proc_macro2::TokenStream;
use syn::ItemImpl;

use crate::ctxt::{Ctxt, not_this_item, untouched};
use ast::ToolsImpl;

pub(crate) fn tools(args: TokenStream, input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    ast::parse_args(&args, &cx);
    let mut item: ItemImpl = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            cx.syn_error(not_this_item(
                &input,
                "`#[tools]` goes on an `impl` block whose methods are marked `#[tool]`; for a single function, use `#[reticent::tool]`",
            ));
            return untouched(cx, input);
        }
    };
    let methods = ast::take_tool_methods(&mut item, &cx);
    let tools = ToolsImpl::from_syn(&item, &methods);
    tools.validate(&cx);
    match cx.check() {
        Ok(()) => expand::toolbox(&tools),
        Err(error) => fallback::toolbox(error, &item),
    }
}
