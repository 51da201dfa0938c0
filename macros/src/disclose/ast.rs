//! The model of a `#[derive(Disclose)]` input. It borrows the user's syntax, so every later
//! error can point at the user's tokens.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::{Attribute, DeriveInput, Field, Fields, Generics, Ident, Type};

use super::attr::{DiscloseAttr, parse_attrs};
use crate::ctxt::Ctxt;

/// The type `Disclose` is derived for.
pub(crate) struct Input<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) generics: &'a Generics,
    pub(crate) attrs: &'a [Attribute],
    /// The type's own `#[disclose(..)]`, which applies to every variant.
    pub(crate) attr: DiscloseAttr,
    pub(crate) data: Data<'a>,
}

pub(crate) enum Data<'a> {
    Enum(Vec<Variant<'a>>),
    Struct(&'a Fields),
    /// A mistake: a union cannot be an error type.
    Union(&'a syn::DataUnion),
}

/// A variant of an enum.
pub(crate) struct Variant<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) attrs: &'a [Attribute],
    pub(crate) fields: &'a Fields,
    /// The variant's own `#[disclose(..)]`.
    pub(crate) attr: DiscloseAttr,
}

impl<'a> Input<'a> {
    /// Parses the attributes, recording their mistakes in `cx`: the type's as part 0 of the
    /// input, variant `i`'s as part `i + 1` (see [`Ctxt::in_part`]).
    pub(crate) fn from_syn(input: &'a DeriveInput, cx: &Ctxt) -> Self {
        let attr = parse_attrs(&input.attrs, cx);
        let data = match &input.data {
            syn::Data::Enum(data) => Data::Enum(
                data.variants
                    .iter()
                    .enumerate()
                    .map(|(index, variant)| Variant {
                        ident: &variant.ident,
                        attrs: &variant.attrs,
                        fields: &variant.fields,
                        attr: cx.in_part(index + 1, || parse_attrs(&variant.attrs, cx)),
                    })
                    .collect(),
            ),
            syn::Data::Struct(data) => Data::Struct(&data.fields),
            syn::Data::Union(data) => Data::Union(data),
        };
        Self {
            ident: &input.ident,
            generics: &input.generics,
            attrs: &input.attrs,
            attr,
            data,
        }
    }

    /// Whether `variant` is an argument error: marked so itself, or the whole type is.
    pub(crate) fn is_argument(&self, variant: &Variant<'_>) -> bool {
        variant.attr.argument.is_some() || self.attr.argument.is_some()
    }

    /// Whether `variant` ends the run: marked so itself, or the whole type is.
    pub(crate) fn is_fatal(&self, variant: &Variant<'_>) -> bool {
        variant.attr.fatal.is_some() || self.attr.fatal.is_some()
    }

    /// The name the kinds start with: the type's `kind`, or its name.
    pub(crate) fn type_name(&self) -> String {
        self.attr
            .kind
            .as_ref()
            .map_or_else(|| self.ident.to_string(), syn::LitStr::value)
    }

    /// The fields an argument message may format, each in its variant's part of the input
    /// (see [`Ctxt::in_part`]): every field of an argument variant, or of an argument struct,
    /// except where the variant is `#[error(transparent)]` or the field carries a source
    /// error, which are refused as such.
    pub(crate) fn argument_fields(&self) -> Vec<(usize, &'a Field)> {
        let fields = |fields: &'a Fields, attrs: &[Attribute]| {
            let transparent = attrs.iter().any(is_transparent);
            fields
                .iter()
                .filter(move |field| !transparent && !is_source_field(field))
        };
        match &self.data {
            Data::Enum(variants) => variants
                .iter()
                .enumerate()
                .filter(|(_, variant)| self.is_argument(variant))
                .flat_map(|(index, variant)| {
                    fields(variant.fields, variant.attrs).map(move |field| (index + 1, field))
                })
                .collect(),
            Data::Struct(struct_fields) if self.attr.argument.is_some() => {
                fields(struct_fields, self.attrs)
                    .map(|field| (0, field))
                    .collect()
            }
            Data::Struct(_) | Data::Union(_) => Vec::new(),
        }
    }

    /// The first of the type's type parameters that `ty` mentions (`Self` counts, for a
    /// generic type), by name: what `ty` is depends on it.
    pub(crate) fn type_param_in(&self, ty: &Type) -> Option<Ident> {
        fn find(tokens: TokenStream, names: &[&Ident]) -> Option<Ident> {
            tokens.into_iter().find_map(|token| match token {
                TokenTree::Ident(ident) if names.iter().any(|name| ident == **name) => Some(ident),
                TokenTree::Group(group) => find(group.stream(), names),
                _ => None,
            })
        }
        let params: Vec<&Ident> = self.generics.type_params().map(|p| &p.ident).collect();
        if params.is_empty() {
            return None;
        }
        let self_ident = Ident::new("Self", proc_macro2::Span::call_site());
        let mut names = params;
        names.push(&self_ident);
        find(ty.to_token_stream(), &names)
    }
}

/// `#[error(transparent)]`.
pub(crate) fn is_transparent(attr: &Attribute) -> bool {
    attr.path().is_ident("error")
        && matches!(attr.parse_args::<syn::Meta>(), Ok(syn::Meta::Path(path)) if path.is_ident("transparent"))
}

/// `#[from]` or `#[source]`: the field is the error's source.
pub(crate) fn is_source_attr(attr: &Attribute) -> bool {
    attr.path().is_ident("from") || attr.path().is_ident("source")
}

/// Whether `field` is the error's source: marked so, or named `source`.
pub(crate) fn is_source_field(field: &Field) -> bool {
    field.attrs.iter().any(is_source_attr) || field.ident.as_ref().is_some_and(|i| i == "source")
}
