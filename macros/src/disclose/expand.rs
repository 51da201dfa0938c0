//! Code generation for `#[derive(Disclose)]`: the `Disclose` impl, and the check that the type
//! is an error type.

use proc_macro2::{Delimiter, Group, TokenStream};
use quote::{quote, quote_spanned};
use syn::LitStr;

use super::ast::{Data, Input};
use crate::ctxt::first_and_last_span;

/// The `Disclose` impl of an input without mistakes.
pub(crate) fn derive(input: &Input<'_>) -> TokenStream {
    let type_name = input.type_name();
    // Per variant (or for the struct): the pattern, the retry hint and whether it is fatal.
    // A variant's own hint replaces the type's.
    let mut policies: Vec<(TokenStream, Option<&'static str>, bool)> = Vec::new();
    let body = match &input.data {
        Data::Enum(variants) => {
            let arms: Vec<_> = variants
                .iter()
                .map(|variant| {
                    let v = variant.ident;
                    policies.push((
                        quote!(Self::#v { .. }),
                        variant.attr.hint().or(input.attr.hint()),
                        input.is_fatal(variant),
                    ));
                    let disclosure = if input.is_argument(variant) {
                        quote!(::reticent::Disclosure::Argument)
                    } else {
                        let kind = variant
                            .attr
                            .kind
                            .as_ref()
                            .map_or_else(|| format!("{type_name}::{v}"), LitStr::value);
                        quote!(::reticent::Disclosure::Kind(#kind))
                    };
                    quote!(Self::#v { .. } => #disclosure,)
                })
                .collect();
            if arms.is_empty() {
                quote!(match *self {})
            } else {
                quote!(match self { #(#arms)* })
            }
        }
        Data::Struct(_) => {
            policies.push((quote!(_), input.attr.hint(), input.attr.fatal.is_some()));
            if input.attr.argument.is_some() {
                quote!(::reticent::Disclosure::Argument)
            } else {
                quote!(::reticent::Disclosure::Kind(#type_name))
            }
        }
        // Refused by `valid.rs`: never expanded.
        Data::Union(_) => quote!(::core::unreachable!()),
    };
    let retry_hint = policies.iter().any(|(_, hint, _)| hint.is_some()).then(|| {
        let arms = policies.iter().map(|(pattern, hint, _)| match hint {
            Some(hint) => {
                let hint = syn::Ident::new(hint, proc_macro2::Span::call_site());
                quote!(#pattern => ::core::option::Option::Some(::reticent::failures::RetryHint::#hint),)
            }
            None => quote!(#pattern => ::core::option::Option::None,),
        });
        quote! {
            fn retry_hint(&self) -> ::core::option::Option<::reticent::failures::RetryHint> {
                #[allow(unreachable_patterns)]
                match self { #(#arms)* }
            }
        }
    });
    let is_fatal = policies.iter().any(|(_, _, fatal)| *fatal).then(|| {
        let arms = policies
            .iter()
            .map(|(pattern, _, fatal)| quote!(#pattern => #fatal,));
        quote! {
            fn is_fatal(&self) -> bool {
                #[allow(unreachable_patterns)]
                match self { #(#arms)* }
            }
        }
    });
    let disclose = impl_disclose(input, &body, &quote!(#retry_hint #is_fatal));
    let argument_fields = argument_field_checks(input);
    // With `reticent`'s features `anyhow`/`eyre`, a downcast to the type, so that it is found
    // in an error chain; a generic type has no one type to downcast to.
    let registration = input.generics.params.is_empty().then(|| {
        let ident = input.ident;
        quote! {
            ::reticent::__private::register_disclose!(#ident);
        }
    });
    quote! {
        #disclose

        #argument_fields

        #registration
    }
}

/// The check that no field an argument message may format is of an error type, one per
/// field, spanned at its type: see `reticent`'s `argument_field.rs`. The checks live in a
/// function of a trait impl, never called, which the compiler checks in the type's own
/// generic context. A field whose type depends on a type parameter is refused by `valid.rs`
/// instead; it is left out here, so that it is not refused twice.
pub(crate) fn argument_field_checks(input: &Input<'_>) -> Option<TokenStream> {
    let checks: Vec<_> = input
        .argument_fields()
        .into_iter()
        .filter(|(_, field)| input.type_param_in(&field.ty).is_none())
        .map(|(_, field)| {
            let ty = &field.ty;
            // The error is reported at the expression passed to `argument_field`: it starts
            // with a token spanned at the type's first token and ends with one spanned at its
            // last, so that it underlines the whole type.
            let (first, last) = first_and_last_span(ty);
            let mut probe = Group::new(
                Delimiter::Parenthesis,
                quote_spanned!(first=> &&&&&&&::reticent::__private::ArgumentField::<#ty>::new()),
            );
            probe.set_span(first);
            let mut call = Group::new(Delimiter::Parenthesis, TokenStream::new());
            call.set_span(last);
            quote_spanned! {first=>
                ::reticent::__private::argument_field(#probe.reticent_argument_field #call);
            }
        })
        .collect();
    if checks.is_empty() {
        return None;
    }
    let ident = input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Some(quote! {
        #[automatically_derived]
        impl #impl_generics ::reticent::__private::ArgumentFields for #ident #ty_generics #where_clause {
            fn check_argument_fields() {
                #[allow(unused_imports)]
                use ::reticent::__private::{
                    AsRefErrorField as _, AsRefSendErrorField as _, AsRefSendSyncErrorField as _,
                    AsRefSyncErrorField as _, DerefErrorField as _, ErrorField as _,
                    PlainField as _,
                };
                #(#checks)*
            }
        }
    })
}

/// `impl Disclose` with `body` as `disclosure`'s and the other `methods`, followed by the
/// check that the type is an error type.
pub(crate) fn impl_disclose(
    input: &Input<'_>,
    body: &TokenStream,
    methods: &TokenStream,
) -> TokenStream {
    let ident = input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut where_clause = where_clause
        .cloned()
        .unwrap_or_else(|| syn::parse_quote!(where));
    let error_bounds =
        quote!(::std::error::Error + ::core::marker::Send + ::core::marker::Sync + 'static);
    // `Disclose` needs an error type. For a generic type the bound is part of the impl, so a
    // use with type arguments that are not errors fails at the use. For a concrete type a
    // bound that does not hold would be an error of its own, reported as a missing
    // supertrait inside this impl; the binder keeps the bound from being checked there, and
    // the assertion below says what is wrong, at the type's name.
    let check = if input.generics.params.is_empty() {
        where_clause
            .predicates
            .push(syn::parse_quote!(for<'__reticent> Self: #error_bounds));
        let assertion = quote_spanned! {ident.span()=>
            <#ident as ::reticent::__private::DiscloseErrorType>::assert
        };
        Some(quote! {
            const _: () = {
                let _ = #assertion;
            };
        })
    } else {
        where_clause
            .predicates
            .push(syn::parse_quote!(Self: #error_bounds));
        None
    };
    quote! {
        #[automatically_derived]
        #[allow(unused_lifetimes)]
        impl #impl_generics ::reticent::Disclose for #ident #ty_generics #where_clause {
            fn disclosure(&self) -> ::reticent::Disclosure {
                #body
            }

            #methods
        }

        #check
    }
}
