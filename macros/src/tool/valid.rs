//! The rules a tool function must follow, checked on its model; every mistake is recorded
//! with a span at the user's tokens.

use syn::{Signature, Type};

use super::ast::{Output, Param, Place, ToolFn};
use super::attr::check_tool_name;
use crate::ctxt::Ctxt;

impl ToolFn<'_> {
    /// Records every mistake in `cx`, in the order they are written.
    pub(crate) fn validate(&self, cx: &Ctxt) {
        let sig = self.sig;
        // A name given as an option was checked with the options.
        if self.options.name.is_none()
            && let Err(message) = check_tool_name(&self.name)
        {
            cx.error_spanned_by(&sig.ident, message);
        }
        if self.description.is_none() {
            cx.error_spanned_by(
                &sig.ident,
                format!(
                    "the tool `{}` has no description; the model needs one to know when to call it: \
                     add a doc comment (`/// What the tool does.`) or `#[tool(description = \"...\")]`",
                    self.name
                ),
            );
        }
        check_signature(sig, cx);
        let mut context_seen = false;
        for param in &self.params {
            match param {
                Param::Receiver(receiver) => check_receiver(receiver, self.place, cx),
                Param::Context { param, .. } => {
                    for attr in param.attrs.iter().filter(|attr| {
                        attr.path().is_ident("serde") || attr.path().is_ident("schemars")
                    }) {
                        cx.error_spanned_by(
                            attr,
                            "the `ToolContext` parameter is not an argument of the model's: it is not decoded \
                             and not in the schema, so `#[serde]` and `#[schemars]` do not apply to it; remove this attribute",
                        );
                    }
                    if let Type::Reference(r) = &*param.ty
                        && r.mutability.is_some()
                    {
                        cx.error_spanned_by(
                            &param.ty,
                            "take the context as `&ToolContext` or `ToolContext`, not `&mut ToolContext`",
                        );
                    }
                    if context_seen {
                        cx.error_spanned_by(
                            param,
                            "a tool takes at most one `ToolContext` parameter",
                        );
                    }
                    context_seen = true;
                }
                Param::Pattern(pat) => cx.error_spanned_by(
                    pat,
                    "a tool parameter must be a plain name, like `order_id: String`: \
                     the name is the argument's name in the schema",
                ),
                Param::Arg(arg) => {
                    check_param_type(arg.ty, cx);
                    check_schema_only_attrs(&arg.attrs, cx);
                }
            }
        }
        check_names(self, cx);
        // The one type whose values cannot be told apart by their type where the tool is
        // called: whether it is a `Result` is hidden.
        if let Output::Returned { ty, .. } = &self.output
            && is_impl_trait(ty)
        {
            cx.error_spanned_by(
                ty,
                "a tool cannot return `impl Trait`: name the type, `Result<T, E>` or the output type, \
                 so that its error can be classified and its output serialized",
            );
        }
    }
}

/// `impl Trait`, also in parentheses.
fn is_impl_trait(ty: &Type) -> bool {
    match ty {
        Type::ImplTrait(_) => true,
        Type::Paren(paren) => is_impl_trait(&paren.elem),
        Type::Group(group) => is_impl_trait(&group.elem),
        _ => false,
    }
}

fn check_signature(sig: &Signature, cx: &Ctxt) {
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

/// The `#[schemars]` keys that serde also has: on a parameter they would change the schema
/// and not the decoder, so the two would disagree.
const SCHEMA_ONLY: [&str; 5] = ["rename", "default", "skip", "skip_deserializing", "flatten"];

fn check_schema_only_attrs(attrs: &[&syn::Attribute], cx: &Ctxt) {
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("schemars")) {
        let _ = attr.parse_nested_meta(|meta| {
            if let Some(key) = SCHEMA_ONLY.iter().find(|key| meta.path.is_ident(key)) {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "`#[schemars({key})]` would change the parameter in the schema only, and the model's arguments would then \
                         be decoded differently from what the schema says; write `#[serde({key})]`, which changes both"
                    ),
                );
            }
            crate::ctxt::skip_value(&meta);
            Ok(())
        });
    }
}

/// Two arguments read under one name (`#[serde(rename)]`, `#[serde(alias)]`): the second could
/// never be given.
fn check_names(tool: &ToolFn<'_>, cx: &Ctxt) {
    let mut seen: Vec<&str> = Vec::new();
    for arg in tool.args() {
        for (name, span) in &arg.names {
            if seen.contains(&name.as_str()) {
                cx.syn_error(syn::Error::new(
                    *span,
                    format!(
                        "a second argument named `{name}`; each argument needs a name of its own: \
                         rename one with `#[serde(rename = \"...\")]`, or drop the `#[serde(alias)]`"
                    ),
                ));
            } else {
                seen.push(name);
            }
        }
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
