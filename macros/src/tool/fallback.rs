//! What `#[tool]` emits beside its errors: the item as written and stand-ins for what it
//! would have generated, so uses of them elsewhere do not add errors of their own.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

use super::ast::ToolFn;
use super::expand::{struct_ident, tool_struct};

/// The errors, the function, and the struct with a stand-in `Tool` impl.
pub(crate) fn free_fn(error: syn::Error, item: &ItemFn, tool: &ToolFn<'_>) -> TokenStream {
    let error = error.to_compile_error();
    // A `self` parameter means the function is a method in an impl block, where no struct
    // can be declared: emit the method alone.
    if item.sig.receiver().is_some() {
        return quote!(#error #item);
    }
    let tool_struct = tool_struct(item, tool);
    let struct_ident = struct_ident(item);
    quote! {
        #error
        #item
        #tool_struct

        #[automatically_derived]
        impl ::reticent::Tool for #struct_ident {
            fn definition(&self) -> &::reticent::ToolDefinition {
                ::core::unreachable!()
            }

            fn call(
                &self,
                _: ::reticent::__private::serde_json::Value,
                _: ::reticent::ToolContext,
            ) -> ::reticent::tool::ToolFuture<'_> {
                ::core::unreachable!()
            }
        }
    }
}
