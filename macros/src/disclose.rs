//! `#[derive(Disclose)]`: how each variant of an error type is shown to the model, decided at
//! compile time.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Data, DeriveInput, Fields, LitStr};

use crate::attr::skip_value;
use crate::ctxt::Ctxt;

const OPTIONS: &str = "`argument`, `kind = \"...\"`, `transient`, `permanent` or `fatal`";

/// What one `#[disclose(..)]` says.
#[derive(Default)]
struct DiscloseAttr {
    argument: Option<syn::Path>,
    kind: Option<LitStr>,
    transient: Option<syn::Path>,
    permanent: Option<syn::Path>,
    fatal: Option<syn::Path>,
}

impl DiscloseAttr {
    /// The retry hint this attribute sets, as the `RetryHint` variant's name.
    fn hint(&self) -> Option<&'static str> {
        match (&self.transient, &self.permanent) {
            (Some(_), _) => Some("Transient"),
            (None, Some(_)) => Some("Permanent"),
            (None, None) => None,
        }
    }
}

fn parse_attrs(attrs: &[Attribute], cx: &Ctxt) -> DiscloseAttr {
    let mut out = DiscloseAttr::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("disclose")) {
        if let syn::Meta::Path(path) = &attr.meta {
            cx.error_spanned_by(
                path,
                format!("`#[disclose]` needs an option: {OPTIONS}, like `#[disclose(argument)]`"),
            );
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            if let Err(error) = parse_one(&mut out, &meta, cx) {
                cx.syn_error(error);
                skip_value(&meta);
            }
            Ok(())
        });
        if let Err(error) = result {
            cx.syn_error(error);
        }
    }
    if let (Some(_), Some(permanent)) = (&out.transient, &out.permanent) {
        cx.error_spanned_by(
            permanent,
            "`transient` and `permanent` cannot both be set; keep `transient` if retrying later \
             may succeed, `permanent` if retrying the same call will not help",
        );
    }
    if let (Some(_), Some(fatal)) = (&out.argument, &out.fatal) {
        cx.error_spanned_by(
            fatal,
            "`argument` and `fatal` cannot both be set: an argument error is the model's to \
             correct, a fatal one ends the run; keep `argument` if the model can fix the call, \
             `fatal` if the run must stop",
        );
    }
    if let (Some(_), Some(kind)) = (&out.argument, &out.kind) {
        cx.error_spanned_by(
            kind,
            "`argument` and `kind` cannot both be set: an argument error shows its message, not a kind; \
             keep `argument` if the model caused the error, `kind` if it did not",
        );
    }
    out
}

fn parse_one(out: &mut DiscloseAttr, meta: &ParseNestedMeta<'_>, cx: &Ctxt) -> syn::Result<()> {
    let flag = match meta.path.get_ident().map(ToString::to_string).as_deref() {
        Some("argument") => Some(&mut out.argument),
        Some("transient") => Some(&mut out.transient),
        Some("permanent") => Some(&mut out.permanent),
        Some("fatal") => Some(&mut out.fatal),
        _ => None,
    };
    if let Some(slot) = flag {
        let name = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
            return Err(meta.error(format!(
                "`{name}` takes no value: write `#[disclose({name})]`"
            )));
        }
        if slot.is_some() {
            return Err(meta.error(format!("`{name}` is set more than once; keep one")));
        }
        *slot = Some(meta.path.clone());
    } else if meta.path.is_ident("kind") {
        const HELP: &str = "`kind` takes a string literal, like `kind = \"Unavailable\"`";
        let value = meta
            .value()
            .map_err(|_| syn::Error::new_spanned(&meta.path, HELP))?;
        let lit: LitStr = value
            .parse()
            .map_err(|error| syn::Error::new(error.span(), HELP))?;
        if out.kind.is_some() {
            return Err(syn::Error::new_spanned(
                &meta.path,
                "`kind` is set more than once; keep one",
            ));
        }
        let value = lit.value();
        if value.trim().is_empty() {
            cx.error_spanned_by(
                &lit,
                "the kind is empty; name the failure, like `kind = \"Unavailable\"`",
            );
        } else if value.len() > 100 || value.contains(['\n', '\r']) {
            cx.error_spanned_by(
                &lit,
                "a kind is a short name on one line, like `kind = \"Unavailable\"`",
            );
        }
        out.kind = Some(lit);
    } else {
        let path = &meta.path;
        let got = quote!(#path).to_string().replace(' ', "");
        return Err(syn::Error::new_spanned(
            path,
            format!("unknown `#[disclose]` option `{got}`; expected {OPTIONS}"),
        ));
    }
    Ok(())
}

/// Refuses a source error in an argument variant: its message would be runtime data from
/// elsewhere.
fn check_no_source(fields: &Fields, attrs: &[Attribute], cx: &Ctxt) {
    const WHY: &str = "its message would be runtime data from elsewhere, shown to the model; \
                       write the message yourself from the model's own input, or remove \
                       `#[disclose(argument)]` so the model sees only the kind";
    for attr in attrs {
        if attr.path().is_ident("error")
            && let Ok(syn::Meta::Path(path)) = attr.parse_args::<syn::Meta>()
            && path.is_ident("transparent")
        {
            cx.error_spanned_by(
                attr,
                format!("a `#[disclose(argument)]` error cannot be `#[error(transparent)]`: {WHY}"),
            );
        }
    }
    for field in fields {
        for attr in &field.attrs {
            if attr.path().is_ident("from") || attr.path().is_ident("source") {
                let which = if attr.path().is_ident("from") {
                    "#[from]"
                } else {
                    "#[source]"
                };
                cx.error_spanned_by(
                    attr,
                    format!("a `#[disclose(argument)]` error cannot carry a source error (`{which}`): {WHY}"),
                );
            }
        }
        if let Some(ident) = &field.ident
            && ident == "source"
            && !field
                .attrs
                .iter()
                .any(|a| a.path().is_ident("from") || a.path().is_ident("source"))
        {
            cx.error_spanned_by(
                    ident,
                    format!("a `#[disclose(argument)]` error cannot carry a source error (a field named `source`): {WHY}"),
                );
        }
    }
}

pub(crate) fn derive(input: DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let type_attr = parse_attrs(&input.attrs, &cx);
    let ident = &input.ident;
    let type_name = type_attr
        .kind
        .as_ref()
        .map_or_else(|| ident.to_string(), LitStr::value);

    // Per variant (or for the struct): the retry hint and whether it is fatal. A variant's
    // own hint replaces the type's.
    let mut policies: Vec<(TokenStream, Option<&'static str>, bool)> = Vec::new();
    let body = match &input.data {
        Data::Enum(data) => {
            let arms: Vec<_> = data
                .variants
                .iter()
                .map(|variant| {
                    let attr = parse_attrs(&variant.attrs, &cx);
                    let v = &variant.ident;
                    let fatal = attr.fatal.is_some() || type_attr.fatal.is_some();
                    if let (Some(_), Some(fatal)) = (&type_attr.argument, &attr.fatal) {
                        cx.error_spanned_by(
                            fatal,
                            "the whole type is `#[disclose(argument)]`, so this variant is an \
                             argument error and cannot be fatal; remove `fatal`, or move \
                             `argument` from the type to the variants the model can correct",
                        );
                    }
                    if let (Some(argument), Some(_)) = (&attr.argument, &type_attr.fatal) {
                        cx.error_spanned_by(
                            argument,
                            "the whole type is `#[disclose(fatal)]`, so this variant ends the \
                             run and cannot be an argument error; remove `argument`, or move \
                             `fatal` from the type to the variants that must end the run",
                        );
                    }
                    policies.push((quote!(Self::#v { .. }), attr.hint().or(type_attr.hint()), fatal));
                    if let (Some(_), Some(kind)) = (&type_attr.argument, &attr.kind) {
                        cx.error_spanned_by(kind, "the whole type is `#[disclose(argument)]`; a variant cannot also have a kind");
                    }
                    let is_argument = attr.argument.is_some() || type_attr.argument.is_some();
                    let disclosure = if is_argument {
                        check_no_source(&variant.fields, &variant.attrs, &cx);
                        quote!(::reticent::Disclosure::Argument)
                    } else {
                        let kind = attr.kind.as_ref().map_or_else(|| format!("{type_name}::{v}"), LitStr::value);
                        quote!(::reticent::Disclosure::Kind(#kind))
                    };
                    quote!(Self::#v { .. } => #disclosure,)
                })
                .collect();
            if type_attr.argument.is_some() {
                check_no_source(&Fields::Unit, &input.attrs, &cx);
            }
            if arms.is_empty() {
                quote!(match *self {})
            } else {
                quote!(match self { #(#arms)* })
            }
        }
        Data::Struct(data) => {
            policies.push((quote!(_), type_attr.hint(), type_attr.fatal.is_some()));
            if type_attr.argument.is_some() {
                check_no_source(&data.fields, &input.attrs, &cx);
                quote!(::reticent::Disclosure::Argument)
            } else {
                quote!(::reticent::Disclosure::Kind(#type_name))
            }
        }
        Data::Union(data) => {
            cx.error_spanned_by(
                data.union_token,
                "`Disclose` can be derived for error enums and structs, not unions",
            );
            quote!(::core::unreachable!())
        }
    };

    let is_union = matches!(input.data, Data::Union(_));
    let (error, body) = match cx.check() {
        Ok(()) => (None, body),
        // A union cannot be an error type: emit the errors alone.
        Err(error) if is_union => return error.to_compile_error(),
        // Emit a stand-in impl beside the errors, so uses of the type elsewhere do not add
        // errors of their own.
        Err(error) => (
            Some(error.to_compile_error()),
            quote!(::core::unreachable!()),
        ),
    };

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
    let retry_hint = policies.iter().any(|(_, hint, _)| hint.is_some()).then(|| {
        let arms = policies.iter().map(|(pattern, hint, _)| match hint {
            Some(hint) => {
                let hint = syn::Ident::new(hint, proc_macro2::Span::call_site());
                quote!(#pattern => ::core::option::Option::Some(::reticent::RetryHint::#hint),)
            }
            None => quote!(#pattern => ::core::option::Option::None,),
        });
        quote! {
            fn retry_hint(&self) -> ::core::option::Option<::reticent::RetryHint> {
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
    let (retry_hint, is_fatal) = if error.is_some() {
        (None, None)
    } else {
        (retry_hint, is_fatal)
    };
    quote! {
        #error

        #[automatically_derived]
        #[allow(unused_lifetimes)]
        impl #impl_generics ::reticent::Disclose for #ident #ty_generics #where_clause {
            fn disclosure(&self) -> ::reticent::Disclosure {
                #body
            }

            #retry_hint

            #is_fatal
        }

        #check
    }
}
