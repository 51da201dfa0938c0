//! The rules of `#[derive(Disclose)]` that look at more than one attribute or at the fields:
//! whether a variant's options agree with the type's, and what an argument error may hold.

use syn::{Attribute, Fields};

use super::ast::{Data, Input, Variant, is_source_attr, is_transparent};
use crate::ctxt::Ctxt;

impl Input<'_> {
    /// Records every mistake in `cx`, each variant's as its part of the input.
    pub(crate) fn validate(&self, cx: &Ctxt) {
        match &self.data {
            Data::Enum(variants) => {
                if self.attr.argument.is_some() {
                    check_no_source(&Fields::Unit, self.attrs, cx);
                }
                for (index, variant) in variants.iter().enumerate() {
                    cx.in_part(index + 1, || self.validate_variant(variant, cx));
                }
            }
            Data::Struct(fields) => {
                if self.attr.argument.is_some() {
                    check_no_source(fields, self.attrs, cx);
                }
            }
            Data::Union(data) => cx.error_spanned_by(
                data.union_token,
                "`Disclose` can be derived for error enums and structs, not unions",
            ),
        }
        self.check_argument_field_types(cx);
    }

    /// Refuses a field of an argument error whose type depends on a type parameter: whether
    /// such a field is an error type is decided by each use of the type, where the derive
    /// cannot look. (A concrete field type is checked by the code `expand.rs` writes.)
    fn check_argument_field_types(&self, cx: &Ctxt) {
        for (part, field) in self.argument_fields() {
            if let Some(param) = self.type_param_in(&field.ty) {
                cx.in_part(part, || {
                    cx.error_spanned_by(
                        &field.ty,
                        format!(
                            "a field of a `#[disclose(argument)]` error cannot have a type that depends on \
                             the type parameter `{param}`: the message is shown to the model in full, and \
                             the derive cannot check that `{param}` is never an error type, whose message \
                             would reach the model; use a concrete type such as `String`"
                        ),
                    );
                });
            }
        }
    }

    fn validate_variant(&self, variant: &Variant<'_>, cx: &Ctxt) {
        let (type_attr, attr) = (&self.attr, &variant.attr);
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
        if let (Some(_), Some(kind)) = (&type_attr.argument, &attr.kind) {
            cx.error_spanned_by(
                kind,
                "the whole type is `#[disclose(argument)]`; a variant cannot also have a kind",
            );
        }
        if self.is_argument(variant) {
            check_no_source(variant.fields, variant.attrs, cx);
        }
    }
}

/// Refuses a source error in an argument variant: its message would be runtime data from
/// elsewhere.
fn check_no_source(fields: &Fields, attrs: &[Attribute], cx: &Ctxt) {
    const WHY: &str = "its message would be runtime data from elsewhere, shown to the model; \
                       write the message yourself from the model's own input, or remove \
                       `#[disclose(argument)]` so the model sees only the kind";
    for attr in attrs.iter().filter(|attr| is_transparent(attr)) {
        cx.error_spanned_by(
            attr,
            format!("a `#[disclose(argument)]` error cannot be `#[error(transparent)]`: {WHY}"),
        );
    }
    for field in fields {
        for attr in &field.attrs {
            if is_source_attr(attr) {
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
            && !field.attrs.iter().any(is_source_attr)
        {
            cx.error_spanned_by(
                    ident,
                    format!("a `#[disclose(argument)]` error cannot carry a source error (a field named `source`): {WHY}"),
                );
        }
    }
}
