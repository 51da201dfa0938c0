//! Code generation for a tool: the unit struct of a free function and the `Tool` impl that
//! `#[tool]` and `#[tools]` share.

use proc_macro2::{Delimiter, Group, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ItemFn};

use super::ast::{Output, Param, ToolFn, unraw};

/// The traits a tool's error is classified by, first choice first, as `reticent`'s
/// `error/classify.rs` ranks them (`ClassifiedKind` for `&&&Classify<E>`, ... `NotAnErrorKind`
/// for `Classify<E>`): the call is written with one `&` per rank. A test there reads this list
/// and fails when the two disagree.
const CLASSIFY_RANKS: [&str; 4] = [
    "ClassifiedKind",
    "DiscloseKind",
    "ErrorKind",
    "NotAnErrorKind",
];

/// `#[tool]` on a free function, without mistakes: the function, its struct and the struct's
/// `Tool` impl.
pub(crate) fn free_fn(item: &ItemFn, tool: &ToolFn<'_>) -> TokenStream {
    let tool_struct = tool_struct(item, tool);
    let struct_ident = struct_ident(item);
    let fn_ident = &item.sig.ident;
    let arguments = arguments_ident(&unraw(fn_ident));
    let tool_impl = tool_impl(tool, &quote!(#struct_ident), &quote!(#fn_ident), &arguments);
    quote! {
        #item
        #tool_struct
        #tool_impl
    }
}

/// The name of the arguments struct of the tool function `fn_name`.
pub(crate) fn arguments_ident(fn_name: &str) -> Ident {
    format_ident!("__{}Arguments", pascal_case(fn_name))
}

/// What the tool's code decodes its arguments into, and how.
struct Arguments {
    /// The arguments struct, when there is one.
    item: TokenStream,
    /// The checks of the parameters' types, spanned at each.
    checks: TokenStream,
    /// The type the arguments decode into.
    ty: TokenStream,
    /// The marker whose methods, picked by autoref, are its decoders and its schema
    /// (`reticent`'s `tool/args.rs`).
    marker: TokenStream,
    /// The pattern that takes the decoded arguments apart into variables named as the
    /// parameters.
    pattern: TokenStream,
}

/// The arguments of a tool: the tuple of the parameters' types when no parameter has a
/// `#[serde]` or `#[schemars]` attribute or a type that names a lifetime (and there are at most
/// 16, as `reticent`'s `tool/params.rs` implements), which the runtime decodes and describes by
/// the names and doc comments given here; otherwise the arguments struct (see
/// [`arguments_struct`]).
fn arguments(tool: &ToolFn<'_>, ident: &Ident) -> Arguments {
    let mut docs = Vec::new();
    for arg in tool.args() {
        match (arg.has_lifetime, title_and_description(&arg.attrs)) {
            (false, Some(doc)) => docs.push(doc),
            _ => return arguments_struct(tool, ident),
        }
    }
    if docs.len() > 16 {
        return arguments_struct(tool, ident);
    }
    let tys: Vec<&syn::Type> = tool.args().map(|arg| arg.ty).collect();
    let idents = tool.args().map(|arg| arg.ident);
    let names = tool.args().map(|arg| arg.names[0].0.as_str());
    let titles = docs.iter().map(|(title, _)| title);
    let descriptions = docs.iter().map(|(_, description)| description);
    let ty = quote!((#(#tys,)*));
    Arguments {
        item: TokenStream::new(),
        checks: tys.iter().map(|ty| param_check(ty)).collect(),
        marker: quote!(::reticent::__private::ParametersOf::<#ty>::new(
            &[#(#names),*],
            &[#((#titles, #descriptions)),*],
        )),
        pattern: quote!((#(#idents,)*)),
        ty,
    }
}

/// The arguments of a tool whose parameters carry `#[serde]` or `#[schemars]` attributes (see
/// [`arguments`]): the struct whose fields are the tool's parameters, with the attributes
/// written on them; it derives `Deserialize` (the decoder) and `JsonSchema` (the parameter
/// schema), which give the attributes their meaning, so the two come from one derive and
/// cannot disagree. `deny_unknown_fields`: an argument the tool does not take is refused by
/// both.
///
/// A field's type is a type parameter of the struct, instantiated with the parameter's type
/// where the struct is used: the derived impls are then generic, and a parameter type that is
/// not `Deserialize` or not `JsonSchema` is reported once, by a check spanned at the type with
/// the message of `ToolParam` or `ToolParamSchema`, instead of many times from inside the
/// derives. The tool reaches the derived impls through autoref specialization, so where they
/// do not apply it adds no error of its own. A parameter whose attributes work on its type
/// (`default`, `deserialize_with`, ..) keeps its type on the field, unchecked: those attributes
/// name code written for that type, which may not need the traits, and the derives report what
/// it lacks. So does a type that names a lifetime (see `ast::has_lifetime`).
fn arguments_struct(tool: &ToolFn<'_>, ident: &Ident) -> Arguments {
    let mut params = Vec::new();
    let mut instance = Vec::new();
    let mut checks = Vec::new();
    let fields: Vec<TokenStream> = tool
        .args()
        .map(|arg| {
            let (attrs, name, ty) = (&arg.attrs, arg.ident, arg.ty);
            if !arg.typed_attrs {
                checks.push(param_check(ty));
            }
            let field_ty = if arg.typed_attrs || arg.has_lifetime {
                ty.to_token_stream()
            } else {
                let param = format_ident!("__P{}", params.len());
                params.push(param.clone());
                instance.push(ty);
                param.into_token_stream()
            };
            quote! {
                #(#attrs)*
                #name: #field_ty
            }
        })
        .collect();
    let generics = (!params.is_empty()).then(|| quote!(<#(#params),*>));
    let instance_args = (!instance.is_empty()).then(|| quote!(<#(#instance),*>));
    let item = quote! {
        #[doc(hidden)]
        #[derive(
            ::reticent::__private::serde::Deserialize,
            ::reticent::__private::schemars::JsonSchema
        )]
        #[serde(crate = "::reticent::__private::serde", deny_unknown_fields)]
        #[schemars(crate = "::reticent::__private::schemars")]
        struct #ident #generics {
            #(#fields,)*
        }
    };
    let ty = quote!(#ident #instance_args);
    let idents = tool.args().map(|arg| arg.ident);
    Arguments {
        item,
        checks: quote!(#(#checks)*),
        marker: quote!(::reticent::__private::ArgumentsOf::<#ty>::new()),
        pattern: quote!(#ident { #(#idents),* }),
        ty,
    }
}

/// The checks that the parameter type `ty` is `JsonSchema` and `Deserialize`, spanned at the
/// type, so that a type that is not is reported there, once, with the message of
/// `ToolParamSchema` or `ToolParam`.
fn param_check(ty: &syn::Type) -> TokenStream {
    quote_spanned! {ty.span()=>
        const _: () = <#ty as ::reticent::__private::ToolParamSchema>::CHECK;
        const _: () = <#ty as ::reticent::__private::ToolParam>::CHECK;
    }
}

/// The title and description schemars' derive gives a field with the doc comment in `attrs`:
/// the lines of its `#[doc = ".."]` attributes, each without its first space, joined; if the
/// text then starts with `#`, its first line (without the `#`s) is the title and the rest the
/// description, else it is all description; each without the whitespace around it. `None`
/// when `attrs` holds anything but doc comments, or a doc attribute whose value is not a
/// string literal: the derive gives those their meaning.
fn title_and_description(attrs: &[&syn::Attribute]) -> Option<(String, String)> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            return None;
        }
        let syn::Meta::NameValue(meta) = &attr.meta else {
            continue;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(line),
            ..
        }) = &meta.value
        else {
            return None;
        };
        let line = line.value();
        lines.push(line.strip_prefix(' ').map(str::to_owned).unwrap_or(line));
    }
    let doc = lines.join("\n");
    let doc = doc.trim_ascii();
    Some(match doc.strip_prefix('#') {
        Some(_) => {
            let end = doc.find('\n').unwrap_or(doc.len());
            let title = doc[..end].trim_start_matches('#').trim_ascii();
            (title.to_owned(), doc[end..].trim_ascii().to_owned())
        }
        None => (String::new(), doc.to_owned()),
    })
}

/// The name of a free function's tool struct: the function's name in PascalCase, spanned at
/// the function's name.
pub(crate) fn struct_ident(item: &ItemFn) -> Ident {
    let ident = &item.sig.ident;
    format_ident!("{}", pascal_case(&unraw(ident)), span = ident.span())
}

/// The unit struct of a free function's tool, with the function's visibility.
pub(crate) fn tool_struct(item: &ItemFn, tool: &ToolFn<'_>) -> TokenStream {
    let struct_ident = struct_ident(item);
    let vis = &item.vis;
    let doc = format!(
        " The tool [`{name}`](fn@{fn_name}): implements [`reticent::Tool`](::reticent::Tool).",
        name = tool.name,
        fn_name = unraw(&item.sig.ident),
    );
    let debug = struct_ident.to_string();
    // What `#[derive(Clone, Copy, Debug, Default)]` writes for a unit struct, written here:
    // four derives per tool cost more to expand than their impls.
    quote! {
        #[doc = #doc]
        #vis struct #struct_ident;

        #[automatically_derived]
        impl ::core::clone::Clone for #struct_ident {
            #[inline]
            fn clone(&self) -> Self {
                *self
            }
        }

        #[automatically_derived]
        impl ::core::marker::Copy for #struct_ident {}

        #[automatically_derived]
        impl ::core::fmt::Debug for #struct_ident {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(#debug)
            }
        }

        #[automatically_derived]
        impl ::core::default::Default for #struct_ident {
            #[inline]
            fn default() -> Self {
                Self
            }
        }
    }
}

/// `lookup_order` → `LookupOrder`.
pub(crate) fn pascal_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = true;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    if out.is_empty() {
        out.push_str("Tool");
    }
    out
}

/// The arguments struct `arguments` and the `impl Tool for #self_ty` block; `callee` is the
/// path to the function, or `self.0.method`.
pub(crate) fn tool_impl(
    tool: &ToolFn<'_>,
    self_ty: &TokenStream,
    callee: &TokenStream,
    arguments: &Ident,
) -> TokenStream {
    let name = &tool.name;
    let description = tool.description.as_deref().unwrap_or_default();
    let options = &tool.options;
    let (read_only, destructive, idempotent, open_world) = (
        options.read_only,
        options.destructive,
        options.idempotent,
        options.open_world,
    );
    let Arguments {
        item: arguments_struct,
        checks,
        ty: arguments_ty,
        marker,
        pattern,
    } = self::arguments(tool, arguments);
    let title = match &options.title {
        Some(title) => quote!(::core::option::Option::Some(#title)),
        None => quote!(::core::option::Option::None),
    };
    let output_schema = output_schema(tool);
    // The hook is a function pointer on the definition: the future of the user's function,
    // boxed. A closure, not a fn item, so that a path through `Self` works in `#[tools]`. The
    // answer is bound to a `Reconciled` here, in the user's crate, so that a hook of the wrong
    // shape fails at the user's path ("expected `Reconciled`, found `bool`"), not at a bound
    // inside reticent; the closure's return type (`ReconcileFuture`) asks for `Send`.
    let reconcile = options.reconcile.as_ref().map(|path| {
        let hook = quote_spanned! {path.span()=>
            ::std::boxed::Box::pin(async move {
                let __reconciled: ::reticent::tool::Reconciled = #path(__call).await;
                __reconciled
            })
        };
        quote!(.with_reconcile(|__call| #hook))
    });
    let timeout = options.timeout_ms.map(|ms| {
        quote! {
            fn timeout(&self) -> ::core::option::Option<::core::time::Duration> {
                ::core::option::Option::Some(::core::time::Duration::from_millis(#ms))
            }
        }
    });
    let max_output = options.max_output.map(|bytes| {
        let bytes = proc_macro2::Literal::u64_unsuffixed(bytes);
        quote! {
            fn max_output(&self) -> ::core::option::Option<::core::primitive::usize> {
                ::core::option::Option::Some(#bytes)
            }
        }
    });
    // A sync tool runs when it is called and returns a ready future: no state machine to
    // build and poll. An async one runs when its future is polled.
    let run = |body: TokenStream| {
        if tool.sig.asyncness.is_some() {
            quote!(::reticent::tool::ToolFuture::new(async move { #body }))
        } else {
            quote!(::reticent::tool::ToolFuture::ready({ #body }))
        }
    };
    // A sync tool's body runs on the caller's thread when it is called: say so, so that a time
    // limit can run it on the blocking pool.
    let is_blocking = tool.sig.asyncness.is_none().then(|| {
        quote! {
            fn is_blocking(&self) -> bool {
                true
            }
        }
    });
    // A tool without a context parameter never sees the context it is called with: say so,
    // so that the runtime calls it with an empty one, made without allocating.
    let reads_context = tool
        .params
        .iter()
        .all(|param| !matches!(param, Param::Context { .. }))
        .then(|| {
            quote! {
                fn reads_context(&self) -> bool {
                    false
                }
            }
        });
    // A flag on the definition, read by the MCP server: no code of its own.
    let task = options.task.then(|| quote!(.with_task(true)));
    let needs_approval = options.needs_approval.then(|| {
        quote! {
            fn needs_approval(&self) -> bool {
                true
            }
        }
    });
    let finish_fn = finish_fn(tool, self_ty);
    let finish = finish(tool, callee);
    // The parameters, as variables named as they are (what `finish` calls the function with).
    let body = run(quote! {
        let #pattern = __arguments;
        #finish
    });
    // The trait's default is `open_world`; a written `untrusted_output` that says otherwise
    // replaces it (`untrusted_output` on a closed tool, `untrusted_output = false` on an
    // open-world one).
    let untrusted = options
        .untrusted_output
        .filter(|untrusted| *untrusted != options.open_world)
        .map(|untrusted| {
            quote! {
                fn untrusted_output(&self) -> bool {
                    #untrusted
                }
            }
        });
    // One body per tool (`ToolBody::run`): `call`, `call_text` and `call_text_output` are the
    // runtime's, around it. The definition and the check of the arguments against the
    // schema's constraints are made once, in `ToolBody::described`.
    quote! {
        #arguments_struct

        #finish_fn

        #[automatically_derived]
        impl ::reticent::__private::ToolBody<#arguments_ty> for #self_ty {
            #[inline]
            fn decoders() -> ::reticent::__private::Decoders<#arguments_ty> {
                #[allow(unused_imports)]
                use ::reticent::__private::{CannotDecodeArguments as _, DecodeArguments as _};
                (&&#marker).decoders()
            }

            #[inline]
            fn run(
                &self,
                __arguments: #arguments_ty,
                __cx: ::reticent::ToolContext,
                __output_as: ::reticent::__private::OutputAs,
            ) -> ::reticent::tool::ToolFuture<'_, ::reticent::__private::Encoded> {
                #body
            }

            #[inline]
            fn described() -> &'static ::reticent::__private::Described {
                static __DEFINITION: ::reticent::__private::DefinitionCell =
                    ::reticent::__private::DefinitionCell::new();
                #checks
                __DEFINITION.get(|| {
                    #[allow(unused_imports)]
                    use ::reticent::__private::{ArgumentsSchema as _, NoArgumentsSchema as _};
                    ::reticent::__private::definition(
                        #name,
                        #description,
                        (&&#marker).arguments_schema(),
                        ::reticent::ToolAnnotations::new()
                            .read_only(#read_only)
                            .destructive(#destructive)
                            .idempotent(#idempotent)
                            .open_world(#open_world),
                        #title,
                        #output_schema,
                    )
                    #task
                    #reconcile
                })
            }
        }

        #[automatically_derived]
        impl ::reticent::Tool for #self_ty {
            fn definition(&self) -> &::reticent::ToolDefinition {
                <Self as ::reticent::__private::ToolBody<#arguments_ty>>::described().definition()
            }

            #timeout

            #max_output

            #untrusted

            #is_blocking

            #needs_approval

            #reads_context

            fn call(
                &self,
                __args: ::reticent::__private::serde_json::Value,
                __cx: ::reticent::ToolContext,
            ) -> ::reticent::tool::ToolFuture<'_> {
                ::reticent::__private::call(self, __args, __cx)
            }

            fn call_text(
                &self,
                __text: &::core::primitive::str,
                __cx: ::reticent::ToolContext,
            ) -> ::reticent::tool::ToolFuture<'_> {
                ::reticent::__private::call_text(self, __text, __cx)
            }

            fn call_text_output(
                &self,
                __args: ::reticent::__private::serde_json::Value,
                __cx: ::reticent::ToolContext,
            ) -> ::reticent::tool::ToolFuture<'_, ::std::string::String> {
                ::reticent::__private::call_text_output(self, __args, __cx)
            }
        }
    }
}

/// The output schema, an `Option<Value>`: the schema when the tool's output type implements
/// `JsonSchema` (decided at compile time, by type: the `T` of a returned `Result<T, E>` however
/// it is spelled), unless `output_schema = false`. A tool that returns nothing has none.
fn output_schema(tool: &ToolFn<'_>) -> TokenStream {
    let output = match &tool.output {
        _ if !tool.options.output_schema => None,
        Output::Unit => None,
        Output::Returned { ty, .. } => Some(ty),
    };
    match output {
        None => quote!(::core::option::Option::None),
        Some(output) => quote! {{
            #[allow(unused_imports)]
            use ::reticent::__private::{
                HasOutputSchema as _, NoOutputSchema as _, ResultOutputSchema as _,
            };
            (&&&::reticent::__private::OutputSchema::<#output>::new()).output_schema()
        }},
    }
}

/// The end of `ToolBody::run`: call `callee` with the decoded arguments, classify the result
/// and encode the output as `__output_as` says.
fn finish(tool: &ToolFn<'_>, callee: &TokenStream) -> TokenStream {
    // A receiver is the callee's (`self.0.method`); a pattern is a mistake, never expanded.
    let call_args = tool.params.iter().filter_map(|param| match param {
        Param::Arg(arg) => {
            let ident = arg.ident;
            Some(quote!(#ident))
        }
        Param::Context { by_ref: true, .. } => Some(quote!(&__cx)),
        Param::Context { by_ref: false, .. } => Some(quote!(::core::clone::Clone::clone(&__cx))),
        Param::Receiver(_) | Param::Pattern(_) => None,
    });
    let await_ = tool.sig.asyncness.map(|_| quote!(.await));
    let call = quote!(#callee(#(#call_args),*) #await_);

    match &tool.output {
        Output::Unit => quote! {
            #call;
            ::core::result::Result::Ok(::reticent::__private::Encoded::unit(__output_as))
        },
        Output::Returned { .. } => quote! {
            let __returned = #call;
            Self::__reticent_finish(__returned, __output_as)
        },
    }
}

/// The associated function of the tool's struct that `ToolBody::run` ends in: it takes what
/// the tool returned apart, and encodes the output as asked. A function of its own, so that a
/// return type that breaks a rule is reported at the return type, once, whether the tool is
/// sync or async.
fn finish_fn(tool: &ToolFn<'_>, self_ty: &TokenStream) -> Option<TokenStream> {
    let Output::Returned {
        ty,
        ok_spans: (ok_first, ok_last),
        err_spans: (err_first, err_last),
    } = &tool.output
    else {
        return None;
    };
    // Decided by the type of what the tool returned, never by how it is spelled (see
    // `reticent`'s `tool/output.rs`): a `Result` is split, its error classified and its output
    // checked and encoded; any other value is an output. A type that breaks a rule fails where
    // its value is coerced to a trait object: the argument, spanned from the first to the last
    // token of the type as written.
    let split = quote_spanned! {ty.span()=>
        (&&::reticent::__private::Returned::new(&__returned)).reticent_split().split(__returned)
    };
    let output = {
        let amp = quote_spanned!(*ok_first=> &);
        let value = quote_spanned!(*ok_last=> __output);
        quote!(#amp #value)
    };
    let encode = quote_spanned! {*ok_first=>
        (&&&::reticent::__private::OutputProbe::new(&__output)).reticent_output().encode(#output, __output_as)
    };
    let boxed = {
        let mut args = Group::new(Delimiter::Parenthesis, quote!(__error));
        args.set_span(*err_last);
        quote_spanned!(*err_first=> ::std::boxed::Box::new #args)
    };
    // One `&` per rank: the call starts at the first choice and derefs down to the first
    // rank the error's type has.
    let refs = CLASSIFY_RANKS
        .iter()
        .map(|_| quote_spanned!(*err_first=> &));
    let classify = quote_spanned! {*err_first=>
        (#(#refs)* ::reticent::__private::Classify::new(&__error))
            .reticent_kind()
            .classify(#boxed)
    };
    let ranks = CLASSIFY_RANKS.iter().map(|rank| format_ident!("{rank}"));
    Some(quote! {
        impl #self_ty {
            #[doc(hidden)]
            #[inline]
            fn __reticent_finish(
                __returned: #ty,
                __output_as: ::reticent::__private::OutputAs,
            ) -> ::core::result::Result<::reticent::__private::Encoded, ::reticent::ToolError> {
                #[allow(unused_imports)]
                use ::reticent::__private::{#(#ranks as _,)*};
                #[allow(unused_imports)]
                use ::reticent::__private::{
                    ErrorOutput as _, NestedResultOutput as _, PlainOutput as _,
                    ResultReturn as _, ValueReturn as _,
                };
                // A value that is not a `Result` splits into `Result<T, Infallible>`.
                #[allow(unreachable_patterns, unreachable_code)]
                let __result = match #split {
                    ::core::result::Result::Ok(__output) => #encode,
                    ::core::result::Result::Err(__error) => ::core::result::Result::Err(#classify),
                };
                __result
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::pascal_case;

    #[test]
    fn struct_names() {
        assert_eq!(pascal_case("lookup_order"), "LookupOrder");
        assert_eq!(pascal_case("a"), "A");
    }
}
