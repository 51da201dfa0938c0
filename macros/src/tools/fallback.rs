//! What `#[tools]` emits beside its errors: the impl block without its `#[tool]` attributes
//! and a stand-in `Toolbox` impl, so uses of the type as a toolbox do not add errors of their
//! own.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemImpl;

pub(crate) fn toolbox(error: syn::Error, item: &ItemImpl) -> TokenStream {
    let error = error.to_compile_error();
    let self_ty = &item.self_ty;
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
    quote! {
        #error
        #item

        #[automatically_derived]
        impl #impl_generics ::reticent::Toolbox for #self_ty #where_clause {
            fn tools(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<::std::sync::Arc<dyn ::reticent::Tool>> {
                ::core::unreachable!()
            }
        }
    }
}
