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

/// The struct whose fields are the tool's parameters, with the attributes written on them; it
/// derives `Deserialize` (the decoder) and `JsonSchema` (the parameter schema), so the two come
/// from one derive and cannot disagree. `deny_unknown_fields`: an argument the tool does not
/// take is refused by both.
///
/// Returns the struct, the checks of its parameters' types and the struct's type as the tool
/// uses it.
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
fn arguments_struct(tool: &ToolFn<'_>, ident: &Ident) -> (TokenStream, TokenStream, TokenStream) {
    let mut params = Vec::new();
    let mut instance = Vec::new();
    let mut checks = Vec::new();
    let fields: Vec<TokenStream> = tool
        .args()
        .map(|arg| {
            let (attrs, name, ty) = (&arg.attrs, arg.ident, arg.ty);
            if !arg.typed_attrs {
                checks.push(quote_spanned! {ty.span()=>
                    const _: () = <#ty as ::reticent::__private::ToolParamSchema>::CHECK;
                    const _: () = <#ty as ::reticent::__private::ToolParam>::CHECK;
                });
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
    // Without `#[serde]` attributes (and lifetimes) the decoder is written here, smaller than
    // the derive's; with them, the derive is what gives them their meaning.
    let written = tool.args().all(|arg| {
        !arg.has_lifetime && !arg.attrs.iter().any(|attr| attr.path().is_ident("serde"))
    });
    let (derive, deserialize) = if written {
        (
            quote!(::reticent::__private::schemars::JsonSchema),
            Some(deserialize_impl(tool, ident, &params)),
        )
    } else {
        (
            quote!(
                ::reticent::__private::serde::Deserialize,
                ::reticent::__private::schemars::JsonSchema
            ),
            None,
        )
    };
    let item = quote! {
        #[doc(hidden)]
        #[derive(#derive)]
        #[serde(crate = "::reticent::__private::serde", deny_unknown_fields)]
        #[schemars(crate = "::reticent::__private::schemars")]
        struct #ident #generics {
            #(#fields,)*
        }

        #deserialize
    };
    (item, quote!(#(#checks)*), quote!(#ident #instance_args))
}

/// The `Deserialize` impl of the arguments struct `ident` of parameters without `#[serde]`
/// attributes, every field's type a type parameter (`params`): what the derive writes with
/// `deny_unknown_fields` for such a struct, for a map, which is all the decoders give it (see
/// `reticent`'s `tool/args.rs`). Generic like the derived impl, so that a parameter type that
/// is not `Deserialize` is reported once, at the type, by the check.
fn deserialize_impl(tool: &ToolFn<'_>, ident: &Ident, params: &[Ident]) -> TokenStream {
    let fields: Vec<&Ident> = tool.args().map(|arg| arg.ident).collect();
    let names: Vec<&str> = tool.args().map(|arg| arg.names[0].0.as_str()).collect();
    let index = 0..fields.len();
    let struct_name = ident.to_string();
    let expecting = format!("struct {struct_name}");
    let serde = quote!(::reticent::__private::serde);
    quote! {
        #[automatically_derived]
        impl<'de, #(#params: #serde::Deserialize<'de>),*> #serde::Deserialize<'de> for #ident<#(#params),*> {
            fn deserialize<__D: #serde::Deserializer<'de>>(
                __deserializer: __D,
            ) -> ::core::result::Result<Self, __D::Error> {
                const __NAMES: &[&::core::primitive::str] = &[#(#names),*];
                struct __Visitor<#(#params),*>(::core::marker::PhantomData<fn() -> (#(#params,)*)>);
                impl<'de, #(#params: #serde::Deserialize<'de>),*> #serde::de::Visitor<'de> for __Visitor<#(#params),*> {
                    type Value = #ident<#(#params),*>;

                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str(#expecting)
                    }

                    #[inline]
                    fn visit_map<__A: #serde::de::MapAccess<'de>>(
                        self,
                        mut __map: __A,
                    ) -> ::core::result::Result<Self::Value, __A::Error> {
                        #(let mut #fields = ::core::option::Option::None;)*
                        while let ::core::option::Option::Some(__key) =
                            __map.next_key_seed(::reticent::__private::FieldSeed(__NAMES))?
                        {
                            match __key {
                                #(#index => ::reticent::__private::next_field(&mut __map, &mut #fields, #names)?,)*
                                _ => ::core::unreachable!("a key is the index of a name"),
                            }
                        }
                        ::core::result::Result::Ok(#ident {
                            #(#fields: ::reticent::__private::field_or_missing(#fields, #names)?,)*
                        })
                    }
                }
                __deserializer.deserialize_struct(#struct_name, __NAMES, __Visitor(::core::marker::PhantomData))
            }
        }
    }
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
    let (arguments_struct, checks, arguments_ty) = arguments_struct(tool, arguments);
    let title = match &options.title {
        Some(title) => quote!(::core::option::Option::Some(#title)),
        None => quote!(::core::option::Option::None),
    };
    let output_schema = output_schema(tool);
    // The hook is a function pointer on the definition: the future of the user's function,
    // boxed. A closure, not a fn item, so that a path through `Self` works in `#[tools]`.
    let reconcile = options.reconcile.as_ref().map(|path| {
        let call = quote_spanned!(path.span()=> #path(__call));
        quote! {
            .with_reconcile(|__call| ::reticent::__private::reconcile_hook(#call))
        }
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
    // The parameters, as variables named as they are (what `finish` calls the function with).
    let idents = tool.args().map(|arg| arg.ident);
    let finish = finish(tool, callee);
    let body = run(quote! {
        let #arguments { #(#idents),* } = __arguments;
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
                (&&::reticent::__private::ArgumentsOf::<#arguments_ty>::new()).decoders()
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
                        (&&::reticent::__private::ArgumentsOf::<#arguments_ty>::new()).arguments_schema(),
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
