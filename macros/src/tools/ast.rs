//! The model of a `#[tools]` impl block: its `#[tool]` methods are taken off the block (so the
//! compiler does not look for an attribute named `tool`), with their options and signatures as
//! written, and each becomes a [`ToolFn`].

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, ImplItem, ItemImpl, Signature};

use crate::ctxt::Ctxt;
use crate::tool::ast::{Place, ToolFn, strip_param_attrs};
use crate::tool::attr::{ToolOptions, parse_tool_attr};

/// A `#[tools]` impl block.
pub(crate) struct ToolsImpl<'a> {
    /// The block, without its `#[tool]` attributes.
    pub(crate) item: &'a ItemImpl,
    pub(crate) tools: Vec<ToolFn<'a>>,
}

impl<'a> ToolsImpl<'a> {
    pub(crate) fn from_syn(item: &'a ItemImpl, methods: &'a [Method]) -> Self {
        let tools = methods
            .iter()
            .map(|method| {
                ToolFn::from_sig(
                    &method.sig,
                    &method.attrs,
                    method.options.clone(),
                    Place::Method,
                )
            })
            .collect();
        Self { item, tools }
    }
}

/// A `#[tool]` method as written, taken off the impl block.
pub(crate) struct Method {
    pub(crate) options: ToolOptions,
    /// The signature with its parameters' doc comments, and `Self` in parameter and return
    /// types replaced by the block's type: the generated code lives outside the block.
    pub(crate) sig: Signature,
    pub(crate) attrs: Vec<Attribute>,
}

/// Records a mistake for options given to `#[tools]` itself.
pub(crate) fn parse_args(args: &TokenStream, cx: &Ctxt) {
    if !args.is_empty() {
        cx.error_spanned_by(
            args,
            "`#[tools]` takes no options; put options on each method's `#[tool(..)]`",
        );
    }
}

/// Takes the `#[tool]` attributes off the items of `item`, and returns the methods they were
/// on, with their options. A `#[tool]` on anything else, or a second one on a method, is a
/// mistake, recorded in `cx`.
pub(crate) fn take_tool_methods(item: &mut ItemImpl, cx: &Ctxt) -> Vec<Method> {
    let mut methods = Vec::new();
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
        let mut options = parse_tool_attr(&attr, cx);
        // The hook is named by the generated code, whose `Self` is the tool's own type.
        if let Some(hook) = &mut options.reconcile {
            replace_self_in_path(hook, &item.self_ty);
        }
        // Take every further `#[tool]` off too, so the compiler does not also look for an
        // attribute named `tool`.
        while let Some(extra) = method.attrs.iter().position(is_tool_attr) {
            let extra = method.attrs.remove(extra);
            cx.error_spanned_by(
                extra,
                "`#[tool]` is set more than once on this method; put all its options in one `#[tool(..)]`",
            );
        }
        let mut sig = strip_param_attrs(&mut method.sig);
        for input in &mut sig.inputs {
            if let syn::FnArg::Typed(pat_type) = input {
                replace_self(&mut pat_type.ty, &item.self_ty);
                for attr in &mut pat_type.attrs {
                    replace_self_in_attr(attr, &item.self_ty);
                }
            }
        }
        // The return type is named by the generated code too, outside the block.
        if let syn::ReturnType::Type(_, ty) = &mut sig.output {
            replace_self(ty, &item.self_ty);
        }
        methods.push(Method {
            options,
            sig,
            attrs: method.attrs.clone(),
        });
    }
    methods
}

fn is_tool_attr(attr: &Attribute) -> bool {
    let path = attr.path();
    path.is_ident("tool")
        || (path.segments.len() == 2
            && path.segments[0].ident == "reticent"
            && path.segments[1].ident == "tool")
}

/// The attributes of an impl item other than a method, where it has any.
fn impl_item_attrs(item: &mut ImplItem) -> Option<&mut Vec<Attribute>> {
    match item {
        ImplItem::Const(i) => Some(&mut i.attrs),
        ImplItem::Type(i) => Some(&mut i.attrs),
        ImplItem::Macro(i) => Some(&mut i.attrs),
        _ => None,
    }
}

/// Writes the impl block's type for `Self` in `ty`, spanned as the `Self` it replaces.
/// `Self::f` as `<SelfTy>::f`.
fn replace_self_in_path(path: &mut syn::ExprPath, self_ty: &syn::Type) {
    if path.qself.is_some() || path.path.segments.len() < 2 || path.path.segments[0].ident != "Self"
    {
        return;
    }
    let first = path.path.segments[0].ident.span();
    let ty = respan(quote!(#self_ty), first);
    let Ok(ty) = syn::parse2::<syn::Type>(ty) else {
        return;
    };
    path.qself = Some(syn::QSelf {
        lt_token: Default::default(),
        ty: Box::new(ty),
        position: 0,
        as_token: None,
        gt_token: Default::default(),
    });
    path.path.leading_colon = Some(Default::default());
    path.path.segments = path.path.segments.iter().skip(1).cloned().collect();
}

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

/// The keys of `#[serde]` and `#[schemars]` whose value is a path to a function or module,
/// which may start with `Self::` in the impl block.
const PATH_KEYS: [&str; 4] = ["default", "deserialize_with", "with", "schema_with"];

/// Writes the impl block's type for a leading `Self::` in the paths of a parameter's
/// `#[serde]` and `#[schemars]` attributes (`default = "Self::page_size"`): on the arguments
/// struct, `Self` would be that struct.
fn replace_self_in_attr(attr: &mut Attribute, self_ty: &syn::Type) {
    use proc_macro2::TokenTree;
    if !(attr.path().is_ident("serde") || attr.path().is_ident("schemars")) {
        return;
    }
    let syn::Meta::List(list) = &mut attr.meta else {
        return;
    };
    let self_ty = quote!(#self_ty).to_string();
    let mut tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
    for i in 2..tokens.len() {
        let (TokenTree::Ident(key), TokenTree::Punct(eq), TokenTree::Literal(lit)) =
            (&tokens[i - 2], &tokens[i - 1], &tokens[i])
        else {
            continue;
        };
        if eq.as_char() != '=' || !PATH_KEYS.iter().any(|k| key == k) {
            continue;
        }
        let Ok(path) = syn::parse2::<syn::LitStr>(TokenTree::Literal(lit.clone()).into()) else {
            continue;
        };
        if let Some(rest) = path.value().strip_prefix("Self::") {
            let replaced = syn::LitStr::new(&format!("{self_ty}::{rest}"), path.span());
            tokens[i] = TokenTree::Literal(replaced.token());
        }
    }
    list.tokens = tokens.into_iter().collect();
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
