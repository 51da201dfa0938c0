//! The model of a tool function. It borrows the user's syntax, so every later error can
//! point at the user's tokens, and it holds what was written even where it is a mistake:
//! `valid.rs` refuses those.

use syn::{
    Attribute, FnArg, GenericArgument, Ident, Pat, PatType, PathArguments, Receiver, ReturnType,
    Signature, Type,
};

use proc_macro2::Span;

use super::attr::{ToolOptions, doc_text};
use crate::ctxt::first_and_last_span;

/// Where the tool function lives.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A free function under `#[tool]`.
    Free,
    /// A method in a `#[tools]` impl block.
    Method,
}

/// A tool function.
pub(crate) struct ToolFn<'a> {
    pub(crate) sig: &'a Signature,
    pub(crate) place: Place,
    /// The tool's name: the `name` option, or the function's name without `r#`.
    pub(crate) name: String,
    /// The span to point at for errors about the name.
    pub(crate) name_span: proc_macro2::Span,
    /// The `description` option, or the doc comment.
    pub(crate) description: Option<String>,
    pub(crate) params: Vec<Param<'a>>,
    pub(crate) output: Output<'a>,
    pub(crate) options: ToolOptions,
}

/// One parameter of a tool function, in the order written.
pub(crate) enum Param<'a> {
    /// `self` in some form.
    Receiver(&'a Receiver),
    /// A model argument.
    Arg(Arg<'a>),
    /// The injected `ToolContext`, by reference or by value.
    Context { param: &'a PatType, by_ref: bool },
    /// A parameter that is not a plain name, which cannot be named in the schema.
    Pattern(&'a Pat),
}

/// A model argument: a parameter the schema describes and the call decodes: an element of the
/// tuple of the parameters' types, or, when a parameter has attributes, a field of the
/// arguments struct `#[tool]` derives `Deserialize` and `JsonSchema` for, with its attributes
/// (see `expand.rs`).
pub(crate) struct Arg<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) ty: &'a Type,
    /// The parameter's `#[doc]`, `#[serde]` and `#[schemars]` attributes, as written: on the
    /// field they mean what they mean on any struct field.
    pub(crate) attrs: Vec<&'a Attribute>,
    /// Whether the attributes name code that works on the parameter's own type (`default`,
    /// `deserialize_with`, `with`, `#[schemars(schema_with)]`, ..): its field is then written
    /// with that type, and what the type must implement is up to that code; otherwise with a
    /// type parameter of the struct (see `expand.rs`).
    pub(crate) typed_attrs: bool,
    /// Whether the type names a lifetime (`Query<'static>`): its field is then written with
    /// that type too.
    pub(crate) has_lifetime: bool,
    /// The names the argument is read under, each with the tokens to point at: its name
    /// (`#[serde(rename)]`, or the identifier without `r#`) and its `#[serde(alias)]`es.
    pub(crate) names: Vec<(String, proc_macro2::Span)>,
}

/// What a tool function returns.
///
/// Whether a returned type is a `Result` is never decided here, from how it is spelled: the
/// generated code splits what the tool returned by its type (see `expand.rs`). What is written
/// only says where errors point.
pub(crate) enum Output<'a> {
    /// Nothing: no return type, or `()`.
    Unit,
    /// A type, split by its type where the tool is called.
    Returned {
        ty: &'a Type,
        /// Where errors about the output point (the first and last token): the `T` of a type
        /// written `..Result<T, E>`, else the whole type.
        ok_spans: (Span, Span),
        /// Where errors about the error type point: the `E` of a type written
        /// `..Result<T, E>`, else the whole type.
        err_spans: (Span, Span),
    },
}

impl<'a> ToolFn<'a> {
    /// The model of the function with signature `sig` (its parameters' attributes as written)
    /// and attributes `attrs`.
    pub(crate) fn from_sig(
        sig: &'a Signature,
        attrs: &'a [syn::Attribute],
        options: ToolOptions,
        place: Place,
    ) -> Self {
        let (name, name_span) = match &options.name {
            Some(lit) => (lit.value(), lit.span()),
            None => (unraw(&sig.ident), sig.ident.span()),
        };
        let description = match &options.description {
            Some(lit) => Some(lit.value()),
            None => doc_text(attrs),
        };
        let params = sig.inputs.iter().map(Param::from_syn).collect();
        let output = match &sig.output {
            ReturnType::Default => Output::Unit,
            ReturnType::Type(_, ty) if is_unit(ty) => Output::Unit,
            ReturnType::Type(_, ty) => {
                let (ok, err) = result_args(ty).unwrap_or_default();
                Output::Returned {
                    ty,
                    ok_spans: first_and_last_span(ok.unwrap_or(ty)),
                    err_spans: first_and_last_span(err.unwrap_or(ty)),
                }
            }
        };
        Self {
            sig,
            place,
            name,
            name_span,
            description,
            params,
            output,
            options,
        }
    }

    /// The model arguments, in order.
    pub(crate) fn args(&self) -> impl Iterator<Item = &Arg<'a>> + '_ {
        self.params.iter().filter_map(|param| match param {
            Param::Arg(arg) => Some(arg),
            _ => None,
        })
    }
}

impl<'a> Param<'a> {
    fn from_syn(input: &'a FnArg) -> Self {
        let param = match input {
            FnArg::Receiver(receiver) => return Self::Receiver(receiver),
            FnArg::Typed(param) => param,
        };
        if let Some(by_ref) = context_param(&param.ty) {
            return Self::Context { param, by_ref };
        }
        match &*param.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                let attrs: Vec<&Attribute> = param
                    .attrs
                    .iter()
                    .filter(|attr| is_field_attr(attr))
                    .collect();
                Self::Arg(Arg {
                    ident: &pat.ident,
                    ty: &param.ty,
                    typed_attrs: has_key(&attrs, "serde", &SERDE_TYPED)
                        || has_key(&attrs, "schemars", &SCHEMARS_TYPED),
                    has_lifetime: has_lifetime(&param.ty),
                    names: wire_names(&pat.ident, &attrs),
                    attrs,
                })
            }
            other => Self::Pattern(other),
        }
    }
}

/// The attributes of a parameter that go on its field in the arguments struct: doc comments
/// (descriptions in the schema), `#[serde(..)]` and `#[schemars(..)]`.
pub(crate) fn is_field_attr(attr: &Attribute) -> bool {
    let path = attr.path();
    path.is_ident("doc") || path.is_ident("serde") || path.is_ident("schemars")
}

/// The `#[serde]` keys of a field that work on its type: a default value, the user's own
/// decoder, a field left out (made with `Default`), a bound.
const SERDE_TYPED: [&str; 7] = [
    "default",
    "deserialize_with",
    "with",
    "skip",
    "skip_deserializing",
    "bound",
    "borrow",
];

/// The `#[schemars]` keys of a field that work on its type.
const SCHEMARS_TYPED: [&str; 5] = ["default", "with", "schema_with", "skip", "bound"];

/// Whether one of `attrs` named `name` holds one of `keys` at its top level
/// (`#[serde(with = "..")]`). Attributes that do not parse are left to the derive to report.
fn has_key(attrs: &[&Attribute], name: &str, keys: &[&str]) -> bool {
    let mut found = false;
    for attr in attrs.iter().filter(|attr| attr.path().is_ident(name)) {
        let _ = attr.parse_nested_meta(|meta| {
            found |= keys.iter().any(|key| meta.path.is_ident(key));
            // Skip the value, if any, to the next key.
            crate::ctxt::skip_value(&meta);
            Ok(())
        });
    }
    found
}

/// The names an argument is read under: `#[serde(rename = "..")]` (or `rename(deserialize =
/// "..")`) or the identifier without `r#`, then each `#[serde(alias = "..")]`. Attributes that
/// do not parse are left to serde's derive to report.
fn wire_names(ident: &Ident, attrs: &[&Attribute]) -> Vec<(String, proc_macro2::Span)> {
    let mut name = (unraw(ident), ident.span());
    let mut aliases = Vec::new();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                if meta.input.peek(syn::Token![=]) {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    name = (lit.value(), lit.span());
                } else {
                    meta.parse_nested_meta(|inner| {
                        if inner.path.is_ident("deserialize") {
                            let lit: syn::LitStr = inner.value()?.parse()?;
                            name = (lit.value(), lit.span());
                        } else {
                            crate::ctxt::skip_value(&inner);
                        }
                        Ok(())
                    })?;
                }
            } else if meta.path.is_ident("alias") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                aliases.push((lit.value(), lit.span()));
            } else {
                crate::ctxt::skip_value(&meta);
            }
            Ok(())
        });
    }
    std::iter::once(name).chain(aliases).collect()
}

/// Whether `ty` names a lifetime (`Query<'static>`). A type that borrows its input decodes from
/// input of that lifetime only; on a type parameter it would be reported at each use of the
/// arguments struct, in generated code, and on a field of its own type it is reported once, at
/// the parameter.
fn has_lifetime(ty: &Type) -> bool {
    fn walk(tokens: proc_macro2::TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Punct(p) => p.as_char() == '\'',
            proc_macro2::TokenTree::Group(g) => walk(g.stream()),
            _ => false,
        })
    }
    walk(quote::quote!(#ty))
}

/// Removes the attributes on parameters that go on the arguments struct's fields (doc comments,
/// `#[serde]`, `#[schemars]`) and returns the signature as written, for the model; `sig` is
/// left without them.
pub(crate) fn strip_param_attrs(sig: &mut Signature) -> Signature {
    let written = sig.clone();
    for input in &mut sig.inputs {
        if let FnArg::Typed(pat_type) = input {
            pat_type.attrs.retain(|attr| !is_field_attr(attr));
        }
    }
    written
}

/// An identifier as a name, without `r#`.
pub(crate) fn unraw(ident: &Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#").unwrap_or(&name).to_owned()
}

/// `Some(by_ref)` when the type is `ToolContext`, `&ToolContext` (or `&mut ToolContext`, a
/// mistake).
fn context_param(ty: &Type) -> Option<bool> {
    match ty {
        Type::Reference(r) if is_context(&r.elem) => Some(true),
        ty if is_context(ty) => Some(false),
        _ => None,
    }
}

fn is_context(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "ToolContext" && s.arguments.is_none()))
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

fn type_args(segment: &syn::PathSegment) -> Vec<&Type> {
    match &segment.arguments {
        PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|a| match a {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn is_unit(ty: &Type) -> bool {
    matches!(ty, Type::Tuple(t) if t.elems.is_empty())
}

/// For a type whose last segment is `Result`: its written `T` and `E`, to point errors at.
#[allow(clippy::type_complexity)]
fn result_args(ty: &Type) -> Option<(Option<&Type>, Option<&Type>)> {
    let segment = last_segment(ty)?;
    if segment.ident != "Result" {
        return None;
    }
    let args = type_args(segment);
    Some((args.first().copied(), args.get(1).copied()))
}
