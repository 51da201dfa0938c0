//! Code generation for `#[tools]` on an impl block.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{ImplItem, ItemImpl};

use crate::ast::{Place, ToolFn};
use crate::attr::{ToolOptions, parse_tool_attr, pascal_case};
use crate::ctxt::Ctxt;
use crate::expand::{not_this_item, strip_param_attrs, tool_impl};

fn is_tool_attr(attr: &syn::Attribute) -> bool {
    let path = attr.path();
    path.is_ident("tool")
        || (path.segments.len() == 2
            && path.segments[0].ident == "reticent"
            && path.segments[1].ident == "tool")
}

/// Writes the impl block's type for `Self` in `ty`, spanned as the `Self` it replaces.
fn replace_self(ty: &mut syn::Type, self_ty: &syn::Type) {
    use syn::{GenericArgument, PathArguments, Type};
    match ty {
        Type::Path(path) if path.qself.is_none() && path.path.is_ident("Self") => {
            let span = path.path.segments[0].ident.span();
            let tokens = respan(quote!(#self_ty), span);
            if let Ok(replaced) = syn::parse2(tokens) {
                *ty = replaced;
            }
        }
        Type::Path(path) => {
            if let Some(qself) = &mut path.qself {
                replace_self(&mut qself.ty, self_ty);
            }
            for segment in &mut path.path.segments {
                if let PathArguments::AngleBracketed(args) = &mut segment.arguments {
                    for arg in &mut args.args {
                        if let GenericArgument::Type(ty) = arg {
                            replace_self(ty, self_ty);
                        }
                    }
                }
            }
        }
        Type::Array(array) => replace_self(&mut array.elem, self_ty),
        Type::Slice(slice) => replace_self(&mut slice.elem, self_ty),
        Type::Reference(reference) => replace_self(&mut reference.elem, self_ty),
        Type::Ptr(ptr) => replace_self(&mut ptr.elem, self_ty),
        Type::Paren(paren) => replace_self(&mut paren.elem, self_ty),
        Type::Group(group) => replace_self(&mut group.elem, self_ty),
        Type::Tuple(tuple) => {
            for elem in &mut tuple.elems {
                replace_self(elem, self_ty);
            }
        }
        _ => {}
    }
}

/// `tokens` with every token spanned at `span`.
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    tokens
        .into_iter()
        .map(|token| match token {
            TokenTree::Group(group) => {
                let mut respanned = Group::new(group.delimiter(), respan(group.stream(), span));
                respanned.set_span(span);
                TokenTree::Group(respanned)
            }
            mut other => {
                other.set_span(span);
                other
            }
        })
        .collect()
}

/// The attributes of an impl item other than a method, where it has any.
fn impl_item_attrs(item: &mut ImplItem) -> Option<&mut Vec<syn::Attribute>> {
    match item {
        ImplItem::Const(i) => Some(&mut i.attrs),
        ImplItem::Type(i) => Some(&mut i.attrs),
        ImplItem::Macro(i) => Some(&mut i.attrs),
        _ => None,
    }
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
            cx.syn_error(not_this_item(
                &input,
                "`#[tools]` goes on an `impl` block whose methods are marked `#[tool]`; for a single function, use `#[reticent::tool]`",
            ));
            let error = cx.check().err().map(|e| e.to_compile_error());
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
            "a `#[tools]` impl block cannot be generic: each tool's schema is computed once for a concrete type; write the impl block for a concrete type instead",
        );
    }

    // Take the `#[tool]` attributes off the methods, keeping what the model needs.
    let mut methods: Vec<(ToolOptions, syn::Signature, Vec<syn::Attribute>)> = Vec::new();
    for impl_item in &mut item.items {
        let method = match impl_item {
            ImplItem::Fn(method) => method,
            other => {
                if let Some(attrs) = impl_item_attrs(other) {
                    while let Some(index) = attrs.iter().position(is_tool_attr) {
                        let attr = attrs.remove(index);
                        cx.error_spanned_by(
                            attr,
                            "`#[tool]` goes on a method of this impl block, not on other items",
                        );
                    }
                }
                continue;
            }
        };
        let Some(index) = method.attrs.iter().position(is_tool_attr) else {
            continue;
        };
        let attr = method.attrs.remove(index);
        let options = parse_tool_attr(&attr, &cx);
        // Take every further `#[tool]` off too, so the compiler does not also look for an
        // attribute named `tool`.
        while let Some(extra) = method.attrs.iter().position(is_tool_attr) {
            let extra = method.attrs.remove(extra);
            cx.error_spanned_by(
                extra,
                "`#[tool]` is set more than once on this method; put all its options in one `#[tool(..)]`",
            );
        }
        let mut written = strip_param_attrs(&mut method.sig);
        // The generated code lives outside this impl block, where `Self` is another type.
        for input in &mut written.inputs {
            if let syn::FnArg::Typed(pat_type) = input {
                replace_self(&mut pat_type.ty, &item.self_ty);
            }
        }
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

    let self_ty = &item.self_ty;
    if let Err(error) = cx.check() {
        let error = error.to_compile_error();
        // Implement `Toolbox` anyway where that is possible, so uses of the type as a toolbox
        // do not add errors of their own.
        // A generic impl is itself a mistake; its stand-in is bounded so that it adds none.
        let (impl_generics, _, where_clause) = item.generics.split_for_impl();
        let mut where_clause = where_clause
            .cloned()
            .unwrap_or_else(|| syn::parse_quote!(where));
        if !item.generics.params.is_empty() {
            where_clause.predicates.push(syn::parse_quote!(
                Self: ::core::marker::Send + ::core::marker::Sync + 'static
            ));
        }
        let fallback = quote! {
            #[automatically_derived]
            impl #impl_generics ::reticent::Toolbox for #self_ty #where_clause {
                fn tools(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<::std::sync::Arc<dyn ::reticent::Tool>> {
                    ::core::unreachable!()
                }
            }
        };
        return quote!(#error #item #fallback);
    }

    let mut structs = Vec::new();
    let mut constructors = Vec::new();
    for tool in &tools {
        // Method names are unique in an impl block, so the struct names are too.
        let method = &tool.sig.ident;
        let ident = format_ident!(
            "__{}Tool",
            pascal_case(method.to_string().trim_start_matches("r#"))
        );
        let (callee, allow_unread) = if tool.sig.receiver().is_some() {
            (quote!(self.0.#method), None)
        } else {
            // An associated function: called on the type, the shared value is not needed.
            (
                quote!(<#self_ty>::#method),
                Some(quote!(#[allow(dead_code)])),
            )
        };
        let tool_impl = tool_impl(tool, &quote!(#ident), &callee);
        structs.push(quote! {
            #allow_unread
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
