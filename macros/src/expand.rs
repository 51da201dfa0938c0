//! Code generation for `#[tool]`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{Ident, ItemFn};

use crate::ast::{Output, Param, Place, ToolFn, span};
use crate::attr::{parse_tool_options, pascal_case};
use crate::ctxt::Ctxt;

/// `#[tool]` on a free function.
pub(crate) fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let options = parse_tool_options(args, &cx);
    let mut item: ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let error = match syn::parse2::<syn::TraitItemFn>(input.clone()) {
                // A method declared in a trait, with no body to call.
                Ok(method) => syn::Error::new_spanned(
                    &method.sig.ident,
                    "`#[tool]` goes on a function with a body, not on a trait method's declaration; \
                     to make methods tools, put `#[reticent::tools]` on an impl block of a type and `#[tool]` on each tool method",
                ),
                Err(_) => not_this_item(
                    &input,
                    "`#[tool]` goes on a function; for methods, put `#[reticent::tools]` on the impl block and `#[tool]` on each tool method",
                ),
            };
            cx.syn_error(error);
            let error = cx.check().err().map(|e| e.to_compile_error());
            return quote!(#error #input);
        }
    };
    let param_docs_stripped = strip_param_attrs(&mut item.sig);
    let tool = ToolFn::from_sig(&param_docs_stripped, &item.attrs, options, Place::Free, &cx);
    let checked = cx.check();
    let fn_name = item.sig.ident.to_string();
    let fn_name = fn_name.trim_start_matches("r#");
    let struct_ident = format_ident!("{}", pascal_case(fn_name), span = item.sig.ident.span());
    let vis = &item.vis;
    let doc = format!(
        " The tool [`{name}`](fn@{fn_name}): implements [`reticent::Tool`](::reticent::Tool).",
        name = tool.name,
    );
    let tool_struct = quote! {
        #[doc = #doc]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
        #vis struct #struct_ident;
    };
    match checked {
        Ok(()) => {
            let fn_ident = &item.sig.ident;
            let tool_impl = tool_impl(&tool, &quote!(#struct_ident), &quote!(#fn_ident));
            quote! {
                #item
                #tool_struct
                #tool_impl
            }
        }
        // A `self` parameter means the function is a method in an impl block, where no
        // struct can be declared: emit the method alone.
        Err(error) if item.sig.receiver().is_some() => {
            let error = error.to_compile_error();
            quote!(#error #item)
        }
        Err(error) => {
            // Emit the function, the struct and a stand-in `Tool` impl anyway, so uses of
            // either elsewhere do not add errors of their own.
            let error = error.to_compile_error();
            quote! {
                #error
                #item
                #tool_struct

                #[automatically_derived]
                impl ::reticent::Tool for #struct_ident {
                    fn definition(&self) -> &::reticent::ToolDefinition {
                        ::core::unreachable!()
                    }

                    fn call(
                        &self,
                        _: ::reticent::__private::serde_json::Value,
                        _: ::reticent::ToolContext,
                    ) -> ::reticent::ToolFuture<'_> {
                        ::core::unreachable!()
                    }
                }
            }
        }
    }
}

/// The error for a macro put on the wrong kind of item, spanning the item's keyword (`struct`,
/// `impl`, ...) rather than the attribute.
pub(crate) fn not_this_item(input: &TokenStream, message: &str) -> syn::Error {
    use syn::Item;
    let Ok(item) = syn::parse2::<Item>(input.clone()) else {
        return syn::Error::new_spanned(input, message);
    };
    let keyword: &dyn quote::ToTokens = match &item {
        Item::Const(i) => &i.const_token,
        Item::Enum(i) => &i.enum_token,
        Item::ExternCrate(i) => &i.extern_token,
        Item::ForeignMod(i) => &i.abi,
        Item::Fn(i) => &i.sig.fn_token,
        Item::Impl(i) => &i.impl_token,
        Item::Macro(i) => &i.mac.path,
        Item::Mod(i) => &i.mod_token,
        Item::Static(i) => &i.static_token,
        Item::Struct(i) => &i.struct_token,
        Item::Trait(i) => &i.trait_token,
        Item::TraitAlias(i) => &i.trait_token,
        Item::Type(i) => &i.type_token,
        Item::Union(i) => &i.union_token,
        Item::Use(i) => &i.use_token,
        _ => &item,
    };
    syn::Error::new_spanned(keyword, message)
}

/// Removes the attributes on parameters (their doc comments become schema descriptions) and
/// returns the signature as written, for the model; `sig` is left without them.
pub(crate) fn strip_param_attrs(sig: &mut syn::Signature) -> syn::Signature {
    let written = sig.clone();
    for input in &mut sig.inputs {
        if let syn::FnArg::Typed(pat_type) = input {
            pat_type.attrs.retain(|attr| !attr.path().is_ident("doc"));
        }
    }
    written
}

/// The `impl Tool for #self_ty` block; `callee` is the path to the function, or
/// `self.0.method`.
pub(crate) fn tool_impl(
    tool: &ToolFn<'_>,
    self_ty: &TokenStream,
    callee: &TokenStream,
) -> TokenStream {
    let name = &tool.name;
    let description = &tool.description;
    let options = &tool.options;
    let (read_only, destructive, idempotent, open_world) = (
        options.read_only,
        options.destructive,
        options.idempotent,
        options.open_world,
    );
    let describe = tool.args().map(|(_, arg_name, ty, optional, doc)| {
        let doc = match doc {
            Some(doc) => quote!(::core::option::Option::Some(#doc)),
            None => quote!(::core::option::Option::None),
        };
        let required = !optional;
        quote_spanned! {span(ty)=>
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
    let names: Vec<&str> = args.iter().map(|(_, name, ..)| *name).collect();

    let decode = args.iter().zip(&slots).map(|((ident, name, ty, optional, _), slot)| {
        let required = !optional;
        quote_spanned! {span(ty)=>
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
    let names: Vec<&str> = args.iter().map(|(_, name, ..)| *name).collect();
    let slots: Vec<Ident> = (0..args.len())
        .map(|i| format_ident!("__arg{}", i))
        .collect();
    let types: Vec<_> = args.iter().map(|(_, _, ty, ..)| *ty).collect();
    let fallback = quote! {
        return ::reticent::__private::call_parsed(self, __text, __cx)
    };
    let fill = slots
        .iter()
        .zip(&types)
        .enumerate()
        .map(|(index, (slot, ty))| {
            let next = quote_spanned! {span(ty)=>
                <#ty as ::reticent::__private::ToolParam>::next_value(&mut __map)
            };
            quote! {
                ::core::option::Option::Some(#index) if #slot.is_none() => {
                    #slot = ::core::option::Option::Some(#next?);
                }
            }
        });
    let take = args.iter().zip(&slots).map(|((ident, name, ty, optional, _), slot)| {
        let absent = if *optional {
            quote_spanned! {span(ty)=>
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
    let call_args = tool.params.iter().map(|param| match param {
        Param::Arg { ident, .. } => quote!(#ident),
        Param::Context { by_ref: true } => quote!(&__cx),
        Param::Context { by_ref: false } => quote!(::core::clone::Clone::clone(&__cx)),
    });
    let await_ = tool.sig.asyncness.map(|_| quote!(.await));
    let call = quote!(#callee(#(#call_args),*) #await_);

    match &tool.output {
        Output::Unit => quote! {
            #call;
            ::core::result::Result::Ok(::reticent::__private::serde_json::Value::Null)
        },
        Output::Value(ty) => {
            let encode =
                quote_spanned!(span(ty)=> ::reticent::__private::ToolOutput::encode(&__output));
            quote! {
                let __output = #call;
                #encode
            }
        }
        Output::Result { ty, ok, err } => {
            let into = quote_spanned!(span(ty)=> ::reticent::__private::IntoToolResult::into_tool_result(__returned));
            let ok_span = ok.map_or_else(|| span(ty), span);
            let err_span = err.map_or_else(|| span(ty), span);
            let encode =
                quote_spanned!(ok_span=> ::reticent::__private::ToolOutput::encode(&__output));
            let classify = quote_spanned! {err_span=>
                (&&&::reticent::__private::Classify::new(&__error)).reticent_kind().classify(__error)
            };
            quote! {
                let __returned = #call;
                match #into {
                    ::core::result::Result::Ok(__output) => #encode,
                    ::core::result::Result::Err(__error) => {
                        #[allow(unused_imports)]
                        use ::reticent::__private::{ClassifiedKind as _, DiscloseKind as _, ErrorKind as _};
                        ::core::result::Result::Err(#classify)
                    }
                }
            }
        }
    }
}
