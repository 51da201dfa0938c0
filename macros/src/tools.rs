//! Code generation for `#[tools]` on an impl block.

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{ImplItem, ItemImpl};

use crate::ast::{Place, ToolFn};
use crate::attr::{ToolOptions, parse_tool_attr, pascal_case};
use crate::ctxt::Ctxt;
use crate::expand::{call_body, strip_param_attrs, tool_impl};

fn is_tool_attr(attr: &syn::Attribute) -> bool {
    let path = attr.path();
    path.is_ident("tool")
        || (path.segments.len() == 2
            && path.segments[0].ident == "reticent"
            && path.segments[1].ident == "tool")
}

/// `#[tools]` on an inherent impl block.
pub(crate) fn tools(args: TokenStream, input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    if !args.is_empty() {
        cx.error_spanned_by(
            &args,
            "`#[tools]` takes no options; put options on each method's `#[tool(..)]`",
        );
    }
    let mut item: ItemImpl = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let _ = cx.check();
            let error = syn::Error::new(
                Span::call_site(),
                "`#[tools]` goes on an `impl` block whose methods are marked `#[tool]`",
            );
            let error = error.to_compile_error();
            return quote!(#error #input);
        }
    };
    if let Some((_, path, _)) = &item.trait_ {
        cx.error_spanned_by(
            path,
            "`#[tools]` goes on an inherent impl block (`impl Type { .. }`), not a trait impl",
        );
    }
    if !item.generics.params.is_empty() {
        cx.error_spanned_by(
            &item.generics,
            "a `#[tools]` impl block cannot be generic: each tool's schema is computed once for a concrete type",
        );
    }

    // Take the `#[tool]` attributes off the methods, keeping what the model needs.
    let mut methods: Vec<(ToolOptions, syn::Signature, Vec<syn::Attribute>)> = Vec::new();
    for impl_item in &mut item.items {
        let ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let Some(index) = method.attrs.iter().position(is_tool_attr) else {
            continue;
        };
        let attr = method.attrs.remove(index);
        let options = parse_tool_attr(&attr, &cx);
        if let Some(extra) = method.attrs.iter().find(|a| is_tool_attr(a)) {
            cx.error_spanned_by(extra, "`#[tool]` is set more than once on this method");
        }
        let written = strip_param_attrs(&mut method.sig);
        methods.push((options, written, method.attrs.clone()));
    }
    if methods.is_empty() {
        cx.error_spanned_by(
            &item.self_ty,
            "this `#[tools]` impl block has no tools: mark each tool method with `#[tool]`",
        );
    }

    let tools: Vec<ToolFn<'_>> = methods
        .iter()
        .map(|(options, sig, attrs)| {
            ToolFn::from_sig(sig, attrs, options.clone(), Place::Method, &cx)
        })
        .collect();

    let mut seen: HashMap<&str, ()> = HashMap::new();
    for tool in &tools {
        if seen.insert(tool.name.as_str(), ()).is_some() {
            cx.syn_error(syn::Error::new(
                tool.name_span,
                format!(
                    "a second tool named `{}` in this impl block; tool names must be unique: rename one with `#[tool(name = \"...\")]`",
                    tool.name
                ),
            ));
        }
    }

    if let Err(error) = cx.check() {
        let error = error.to_compile_error();
        return quote!(#error #item);
    }

    let self_ty = &item.self_ty;
    let mut structs = Vec::new();
    let mut constructors = Vec::new();
    for tool in &tools {
        let ident = format_ident!("__{}Tool", pascal_case(&tool.name.replace('-', "_")));
        let method = &tool.sig.ident;
        let body = call_body(tool, &quote!(self.0.#method));
        let tool_impl = tool_impl(tool, &quote!(#ident), body);
        structs.push(quote! {
            #[allow(non_camel_case_types)]
            struct #ident(::std::sync::Arc<#self_ty>);

            #tool_impl
        });
        constructors.push(quote! {
            ::std::sync::Arc::new(#ident(::std::sync::Arc::clone(&self))) as ::std::sync::Arc<dyn ::reticent::Tool>
        });
    }

    quote! {
        #item

        const _: () = {
            #(#structs)*

            #[automatically_derived]
            impl ::reticent::Toolbox for #self_ty {
                fn tools(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<::std::sync::Arc<dyn ::reticent::Tool>> {
                    ::std::vec![#(#constructors),*]
                }
            }
        };
    }
}
