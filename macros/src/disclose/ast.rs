//! The model of a `#[derive(Disclose)]` input. It borrows the user's syntax, so every later
//! error can point at the user's tokens.

use syn::{Attribute, DeriveInput, Fields, Generics, Ident};

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
}
