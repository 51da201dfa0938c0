//! Code generation for `#[tools]`: a struct per tool method holding the shared value, its
//! `Tool` impl, and the block's `Toolbox` impl.

use proc_macro2::{Delimiter, Group, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use super::ast::ToolsImpl;
use crate::tool::ast::unraw;
use crate::tool::expand::{arguments_ident, pascal_case, tool_impl};

pub(crate) fn toolbox(tools: &ToolsImpl<'_>) -> TokenStream {
    let item = tools.item;
    let self_ty = &item.self_ty;
    let mut structs = Vec::new();
    let mut constructors = Vec::new();
    for tool in &tools.tools {
        // Method names are unique in an impl block, so the struct names are too.
        let method = &tool.sig.ident;
        let ident = format_ident!("__{}Tool", pascal_case(&unraw(method)));
        let (callee, allow_unread) = if tool.sig.receiver().is_some() {
            (quote!(self.0.#method), None)
        } else {
            // An associated function: called on the type, the shared value is not needed.
            (
                quote!(<#self_ty>::#method),
                Some(quote!(#[allow(dead_code)])),
            )
        };
        let tool_impl = tool_impl(
            tool,
            &quote!(#ident),
            &callee,
            &arguments_ident(&unraw(method)),
        );
        structs.push(quote! {
            #allow_unread
            struct #ident(::std::sync::Arc<#self_ty>);

            #tool_impl
        });
        constructors.push(quote! {
            ::std::sync::Arc::new(#ident(::std::sync::Arc::clone(&self))) as ::std::sync::Arc<dyn ::reticent::Tool>
        });
    }

    // One `Toolbox` impl per type: a second `#[tools]` block on the type is refused by the
    // compiler as a conflicting impl, reported at the two blocks' `impl Type` (the impl's
    // header is spanned at the user's `impl` keyword and type).
    let span = item.impl_token.span;
    let header = quote_spanned! {span=>
        #[automatically_derived]
        impl ::reticent::Toolbox for
    };
    let mut body = Group::new(
        Delimiter::Brace,
        quote! {
            fn tools(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<::std::sync::Arc<dyn ::reticent::Tool>> {
                ::std::vec![#(#constructors),*]
            }
        },
    );
    body.set_span(span);
    quote! {
        #item

        const _: () = {
            #(#structs)*

            #header #self_ty #body
        };
    }
}
