//! The model of a tool function. It borrows the user's syntax, so every later error can
//! point at the user's tokens.

use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, Ident, Pat, PathArguments, ReturnType, Signature, Type};

use crate::attr::{ToolOptions, check_tool_name, doc_text};
use crate::ctxt::Ctxt;

/// Where the tool function lives.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A free function under `#[tool]`.
    Free,
    /// A method in a `#[tools]` impl block.
    Method,
}

/// A tool function, checked.
pub(crate) struct ToolFn<'a> {
    pub(crate) sig: &'a Signature,
    pub(crate) name: String,
    /// The span to point at for errors about the name.
    pub(crate) name_span: proc_macro2::Span,
    pub(crate) description: String,
    pub(crate) params: Vec<Param<'a>>,
    pub(crate) output: Output<'a>,
    pub(crate) options: ToolOptions,
}

/// One parameter of a tool function.
pub(crate) enum Param<'a> {
    /// A model argument.
    Arg {
        ident: &'a Ident,
        /// The argument's name in the schema (the identifier without `r#`).
        name: String,
        ty: &'a Type,
        optional: bool,
        doc: Option<String>,
    },
    /// The injected `ToolContext`, by reference or by value.
    Context { by_ref: bool },
}

/// What a tool function returns.
pub(crate) enum Output<'a> {
    /// Nothing (`()`).
    Unit,
    /// A value that cannot fail.
    Value(&'a Type),
    /// A `Result`; `ok` and `err` are the written type arguments, where written.
    Result {
        ty: &'a Type,
        ok: Option<&'a Type>,
        err: Option<&'a Type>,
    },
}

impl<'a> ToolFn<'a> {
    /// Builds and checks the model, recording every mistake in `cx`.
    pub(crate) fn from_sig(
        sig: &'a Signature,
        attrs: &'a [syn::Attribute],
        options: ToolOptions,
        place: Place,
        cx: &Ctxt,
    ) -> Self {
        let ident_name = sig.ident.to_string();
        let ident_name = ident_name
            .strip_prefix("r#")
            .unwrap_or(&ident_name)
            .to_owned();
        let (name, name_span) = match &options.name {
            Some(lit) => (lit.value(), lit.span()),
            None => {
                if let Err(message) = check_tool_name(&ident_name) {
                    cx.error_spanned_by(&sig.ident, message);
                }
                (ident_name, sig.ident.span())
            }
        };

        let description = match (&options.description, doc_text(attrs)) {
            (Some(lit), _) => lit.value(),
            (None, Some(doc)) => doc,
            (None, None) => {
                cx.error_spanned_by(
                    &sig.ident,
                    format!(
                        "the tool `{name}` has no description; the model needs one to know when to call it: \
                         add a doc comment (`/// What the tool does.`) or `#[tool(description = \"...\")]`"
                    ),
                );
                String::new()
            }
        };

        check_signature(sig, place, cx);

        let mut params = Vec::new();
        let mut context_seen = false;
        for input in &sig.inputs {
            let pat_type = match input {
                FnArg::Receiver(receiver) => {
                    check_receiver(receiver, place, cx);
                    continue;
                }
                FnArg::Typed(pat_type) => pat_type,
            };
            if let Some(by_ref) = context_param(&pat_type.ty, cx) {
                if context_seen {
                    cx.error_spanned_by(
                        pat_type,
                        "a tool takes at most one `ToolContext` parameter",
                    );
                }
                context_seen = true;
                params.push(Param::Context { by_ref });
                continue;
            }
            let ident = match &*pat_type.pat {
                Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => &pat.ident,
                other => {
                    cx.error_spanned_by(
                        other,
                        "a tool parameter must be a plain name, like `order_id: String`: \
                         the name is the argument's name in the schema",
                    );
                    continue;
                }
            };
            check_param_type(&pat_type.ty, cx);
            let name = ident.to_string();
            let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
            params.push(Param::Arg {
                ident,
                name,
                ty: &pat_type.ty,
                optional: is_option(&pat_type.ty),
                doc: doc_text(&pat_type.attrs),
            });
        }

        let output = match &sig.output {
            ReturnType::Default => Output::Unit,
            ReturnType::Type(_, ty) => match result_args(ty) {
                Some((ok, err)) => Output::Result { ty, ok, err },
                None if is_unit(ty) => Output::Unit,
                None => {
                    if let Type::ImplTrait(_) = &**ty {
                        cx.error_spanned_by(
                            ty,
                            "a tool cannot return `impl Trait`: name the output type so it can be serialized",
                        );
                    }
                    Output::Value(ty)
                }
            },
        };

        Self {
            sig,
            name,
            name_span,
            description,
            params,
            output,
            options,
        }
    }

    /// The model arguments, in order.
    pub(crate) fn args(
        &self,
    ) -> impl Iterator<Item = (&'a Ident, &str, &'a Type, bool, Option<&str>)> + '_ {
        self.params.iter().filter_map(|p| match p {
            Param::Arg {
                ident,
                name,
                ty,
                optional,
                doc,
            } => Some((*ident, name.as_str(), *ty, *optional, doc.as_deref())),
            Param::Context { .. } => None,
        })
    }
}

fn check_signature(sig: &Signature, place: Place, cx: &Ctxt) {
    let generics = &sig.generics;
    if !generics.params.is_empty() || generics.where_clause.is_some() {
        let tokens = match &generics.where_clause {
            Some(w) if generics.params.is_empty() => quote::quote!(#w),
            _ => quote::quote!(#generics),
        };
        cx.error_spanned_by(
            tokens,
            "a tool cannot be generic: the model's arguments are decoded into concrete types; \
             replace the type parameters with concrete types",
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        cx.error_spanned_by(
            unsafety,
            "a tool cannot be `unsafe`: the model decides when it is called",
        );
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, "a tool cannot be variadic");
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "a tool must be a Rust function, without `extern`");
    }
    let _ = place;
}

fn check_receiver(receiver: &syn::Receiver, place: Place, cx: &Ctxt) {
    match place {
        Place::Free => cx.error_spanned_by(
            receiver,
            "`self` is only allowed in tool methods of an impl block marked `#[reticent::tools]`: \
             put `#[reticent::tools]` on the impl block, or make this a free function",
        ),
        Place::Method => {
            let is_ref_self = receiver.reference.is_some()
                && receiver.mutability.is_none()
                && receiver.colon_token.is_none();
            if !is_ref_self {
                cx.error_spanned_by(
                    receiver,
                    "a tool method takes `&self`: the tools of one value run concurrently and share it; \
                     use interior mutability (`Mutex`, atomics) for state that changes",
                );
            }
        }
    }
}

/// `Some(by_ref)` when the type is `ToolContext` or `&ToolContext`.
fn context_param(ty: &Type, cx: &Ctxt) -> Option<bool> {
    match ty {
        Type::Reference(r) if is_context(&r.elem) => {
            if r.mutability.is_some() {
                cx.error_spanned_by(
                    ty,
                    "take the context as `&ToolContext` or `ToolContext`, not `&mut ToolContext`",
                );
            }
            Some(true)
        }
        ty if is_context(ty) => Some(false),
        _ => None,
    }
}

fn is_context(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "ToolContext" && s.arguments.is_none()))
}

fn check_param_type(ty: &Type, cx: &Ctxt) {
    match ty {
        Type::ImplTrait(_) => cx.error_spanned_by(
            ty,
            "a tool parameter cannot be `impl Trait`: the model's arguments are decoded into concrete types",
        ),
        Type::Reference(r) => cx.error_spanned_by(
            ty,
            format!(
                "a tool parameter cannot be a reference: arguments are decoded into owned values; \
                 take `{}` instead",
                owned_suggestion(&r.elem)
            ),
        ),
        _ => {}
    }
}

fn owned_suggestion(elem: &Type) -> String {
    match elem {
        Type::Path(p) if p.path.is_ident("str") => "String".into(),
        Type::Slice(s) => {
            let inner = &s.elem;
            format!("Vec<{}>", quote::quote!(#inner)).replace(' ', "")
        }
        other => quote::quote!(#other).to_string().replace(' ', ""),
    }
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

/// `Option<T>`: an optional parameter.
fn is_option(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == "Option" && type_args(s).len() == 1)
}

fn is_unit(ty: &Type) -> bool {
    matches!(ty, Type::Tuple(t) if t.elems.is_empty())
}

/// For a type whose last segment is `Result`: its written `T` and `E`.
#[allow(clippy::type_complexity)]
fn result_args(ty: &Type) -> Option<(Option<&Type>, Option<&Type>)> {
    let segment = last_segment(ty)?;
    if segment.ident != "Result" {
        return None;
    }
    let args = type_args(segment);
    Some((args.first().copied(), args.get(1).copied()))
}

/// The span of a type, for `quote_spanned!`.
pub(crate) fn span(ty: &impl Spanned) -> proc_macro2::Span {
    ty.span()
}
