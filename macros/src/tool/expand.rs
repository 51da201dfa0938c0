//! Code generation for a tool: the unit struct of a free function and the `Tool` impl that
//! `#[tool]` and `#[tools]` share.

use proc_macro2::{Delimiter, Group, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ItemFn};

use super::ast::{Output, Param, ToolFn, unraw};

/// `#[tool]` on a free function, without mistakes: the function, its struct and the struct's
/// `Tool` impl.
pub(crate) fn free_fn(item: &ItemFn, tool: &ToolFn<'_>) -> TokenStream {
    let tool_struct = tool_struct(item, tool);
    let struct_ident = struct_ident(item);
    let fn_ident = &item.sig.ident;
    let tool_impl = tool_impl(tool, &quote!(#struct_ident), &quote!(#fn_ident));
    quote! {
        #item
        #tool_struct
        #tool_impl
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
    quote! {
        #[doc = #doc]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
        #vis struct #struct_ident;
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

/// The `impl Tool for #self_ty` block; `callee` is the path to the function, or
/// `self.0.method`.
pub(crate) fn tool_impl(
    tool: &ToolFn<'_>,
    self_ty: &TokenStream,
    callee: &TokenStream,
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
    let describe = tool.args().map(|arg| {
        let doc = match &arg.doc {
            Some(doc) => quote!(::core::option::Option::Some(#doc)),
            None => quote!(::core::option::Option::None),
        };
        let (ty, arg_name, required) = (arg.ty, &arg.name, !arg.optional);
        quote_spanned! {ty.span()=>
            <#ty as ::reticent::__private::ToolParamSchema>::describe(&mut __schema, #arg_name, #doc, #required);
        }
    });
    let timeout = options.timeout_ms.map(|ms| {
        quote! {
            fn timeout(&self) -> ::core::option::Option<::core::time::Duration> {
                ::core::option::Option::Some(::core::time::Duration::from_millis(#ms))
            }
        }
    });
    // A sync tool runs when it is called and returns a ready future: no state machine to
    // build and poll. An async one runs when its future is polled.
    let run = |body: TokenStream| {
        if tool.sig.asyncness.is_some() {
            quote!(::reticent::ToolFuture::new(async move { #body }))
        } else {
            quote!(::reticent::ToolFuture::ready((move || { #body })()))
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
    let finish = finish(tool, callee);
    let finish_fn = finish_fn(tool, self_ty);
    let decode_value = decode_value(tool);
    let call = run(quote!(#decode_value #finish));
    // From text, the arguments are decoded before the future is made (they borrow the text);
    // what is left runs as `call` runs it.
    let decode_text = decode_text(tool);
    let call_text = run(finish);
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
    quote! {
        #finish_fn

        #[automatically_derived]
        impl ::reticent::Tool for #self_ty {
            fn definition(&self) -> &::reticent::ToolDefinition {
                static __DEFINITION: ::reticent::__private::OnceLock<::reticent::ToolDefinition> =
                    ::reticent::__private::OnceLock::new();
                __DEFINITION.get_or_init(|| {
                    let mut __schema = ::reticent::ParametersSchema::new();
                    #(#describe)*
                    ::reticent::ToolDefinition::new(#name, #description, __schema.finish())
                        .with_annotations(
                            ::reticent::ToolAnnotations::new()
                                .read_only(#read_only)
                                .destructive(#destructive)
                                .idempotent(#idempotent)
                                .open_world(#open_world),
                        )
                })
            }

            #timeout

            #untrusted

            #is_blocking

            fn call(
                &self,
                __args: ::reticent::__private::serde_json::Value,
                __cx: ::reticent::ToolContext,
            ) -> ::reticent::ToolFuture<'_> {
                #call
            }

            fn call_text(
                &self,
                __text: &::core::primitive::str,
                __cx: ::reticent::ToolContext,
            ) -> ::reticent::ToolFuture<'_> {
                #decode_text
                #call_text
            }
        }
    }
}

/// The statements of `call` that decode the arguments from the `Value` `__args` into
/// variables named as the parameters.
fn decode_value(tool: &ToolFn<'_>) -> TokenStream {
    let args: Vec<_> = tool.args().collect();
    let slots: Vec<Ident> = (0..args.len())
        .map(|i| format_ident!("__arg{}", i))
        .collect();
    let names: Vec<&str> = args.iter().map(|arg| arg.name.as_str()).collect();

    let decode = args.iter().zip(&slots).map(|(arg, slot)| {
        let (ident, name, ty, required) = (arg.ident, &arg.name, arg.ty, !arg.optional);
        quote_spanned! {ty.span()=>
            let #ident = match <#ty as ::reticent::__private::ToolParam>::decode(#slot, #name, #required, __integral_floats) {
                ::core::result::Result::Ok(value) => value,
                ::core::result::Result::Err(error) => {
                    return ::core::result::Result::Err(::reticent::ToolError::Argument(error));
                }
            };
        }
    });

    quote! {
        let __map = match ::reticent::__private::arguments(__args) {
            ::core::result::Result::Ok(map) => map,
            ::core::result::Result::Err(error) => return ::core::result::Result::Err(error),
        };
        let mut __integral_floats = false;
        #(let mut #slots: ::core::option::Option<::reticent::__private::serde_json::Value> = ::core::option::Option::None;)*
        for (__key, __value) in __map {
            if let ::core::result::Result::Err(error) =
                ::reticent::__private::check_argument(&__value, &mut __integral_floats)
            {
                return ::core::result::Result::Err(error);
            }
            match __key.as_str() {
                #(#names => #slots = ::core::option::Option::Some(__value),)*
                _ => return ::core::result::Result::Err(
                    ::reticent::__private::unknown_argument(&__key, &[#(#names),*]),
                ),
            }
        }
        #(#decode)*
    }
}

/// The statements of `call_text` that decode the arguments from the text `__text` into
/// variables named as the parameters: one pass with a visitor, as `#[derive(Deserialize)]`
/// would write it. Arguments that do not decode as sent are handed to `call`, which says what
/// is wrong.
fn decode_text(tool: &ToolFn<'_>) -> TokenStream {
    let args: Vec<_> = tool.args().collect();
    let names: Vec<&str> = args.iter().map(|arg| arg.name.as_str()).collect();
    let slots: Vec<Ident> = (0..args.len())
        .map(|i| format_ident!("__arg{}", i))
        .collect();
    let types: Vec<_> = args.iter().map(|arg| arg.ty).collect();
    let fallback = quote! {
        return ::reticent::__private::call_parsed(self, __text, __cx)
    };
    let fill = slots
        .iter()
        .zip(&types)
        .enumerate()
        .map(|(index, (slot, ty))| {
            let next = quote_spanned! {ty.span()=>
                <#ty as ::reticent::__private::ToolParam>::next_value(&mut __map)
            };
            quote! {
                ::core::option::Option::Some(#index) if #slot.is_none() => {
                    #slot = ::core::option::Option::Some(#next?);
                }
            }
        });
    let take = args.iter().zip(&slots).map(|(arg, slot)| {
        let (ident, name, ty) = (arg.ident, &arg.name, arg.ty);
        let absent = if arg.optional {
            quote_spanned! {ty.span()=>
                match <#ty as ::reticent::__private::ToolParam>::decode(::core::option::Option::None, #name, false, false) {
                    ::core::result::Result::Ok(value) => value,
                    ::core::result::Result::Err(_) => #fallback,
                }
            }
        } else {
            fallback.clone()
        };
        quote! {
            let #ident = match #slot {
                ::core::option::Option::Some(value) => value,
                ::core::option::Option::None => #absent,
            };
        }
    });
    quote! {
        struct __ReticentTextArguments;
        impl<'de> ::reticent::__private::serde::de::Visitor<'de> for __ReticentTextArguments {
            type Value = (#(::core::option::Option<#types>,)*);

            fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str("the tool's arguments")
            }

            #[inline]
            fn visit_map<__A: ::reticent::__private::serde::de::MapAccess<'de>>(
                self,
                mut __map: __A,
            ) -> ::core::result::Result<Self::Value, __A::Error> {
                #(let mut #slots = ::core::option::Option::None;)*
                while let ::core::option::Option::Some(__index) = __map.next_key_seed(
                    ::reticent::__private::KeyIndex(&[#(#names),*]),
                )? {
                    match __index {
                        #(#fill)*
                        _ => return ::core::result::Result::Err(::reticent::__private::unexpected_key()),
                    }
                }
                ::core::result::Result::Ok((#(#slots,)*))
            }
        }
        let (#(#slots,)*) = match ::reticent::__private::from_text(__text, __ReticentTextArguments) {
            ::core::option::Option::Some(slots) => slots,
            ::core::option::Option::None => #fallback,
        };
        #(#take)*
    }
}

/// The end of `call` and `call_text`: call `callee` with the decoded arguments and classify
/// the result.
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
            ::core::result::Result::Ok(::reticent::__private::serde_json::Value::Null)
        },
        Output::Returned { .. } => quote! {
            let __returned = #call;
            Self::__reticent_finish(__returned)
        },
    }
}

/// The associated function of the tool's struct that `call` and `call_text` end in: it takes
/// what the tool returned apart. Emitted once per tool, so that a return type that breaks a
/// rule is reported once.
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
        (&&&::reticent::__private::OutputProbe::new(&__output)).reticent_output().encode(#output)
    };
    let boxed = {
        let mut args = Group::new(Delimiter::Parenthesis, quote!(__error));
        args.set_span(*err_last);
        quote_spanned!(*err_first=> ::std::boxed::Box::new #args)
    };
    let classify = quote_spanned! {*err_first=>
        (&&&&::reticent::__private::Classify::new(&__error))
            .reticent_kind()
            .classify(#boxed)
    };
    Some(quote! {
        impl #self_ty {
            #[doc(hidden)]
            #[inline]
            fn __reticent_finish(
                __returned: #ty,
            ) -> ::core::result::Result<::reticent::__private::serde_json::Value, ::reticent::ToolError> {
                #[allow(unused_imports)]
                use ::reticent::__private::{
                    ClassifiedKind as _, DiscloseKind as _, ErrorKind as _, ErrorOutput as _,
                    NestedResultOutput as _, NotAnErrorKind as _, PlainOutput as _,
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
