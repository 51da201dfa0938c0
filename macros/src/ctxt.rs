//! Errors: the collector every macro records its mistakes in, so the user sees all of them in
//! one build, and the helpers that let a macro go on after a mistake.

use std::cell::{Cell, RefCell};
use std::fmt::Display;

use proc_macro2::TokenStream;
use quote::ToTokens;

/// An error collector. Every error must be taken out with [`Ctxt::check`] before it drops.
///
/// Errors are reported in the order they are found, except that errors about one part of the
/// input (see [`Ctxt::in_part`]) are reported together, parts in order: a derive parses every
/// variant before it checks any, and the user still reads the mistakes variant by variant.
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<(usize, syn::Error)>>>,
    part: Cell<usize>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Self {
            errors: RefCell::new(Some(Vec::new())),
            part: Cell::new(0),
        }
    }

    /// Runs `f`, recording the errors it finds as being about part `part` of the input (the
    /// type's own attributes are part 0).
    pub(crate) fn in_part<R>(&self, part: usize, f: impl FnOnce() -> R) -> R {
        let outer = self.part.replace(part);
        let result = f();
        self.part.set(outer);
        result
    }

    /// Records an error spanning `tokens`.
    pub(crate) fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records an error.
    pub(crate) fn syn_error(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push((self.part.get(), error));
    }

    /// All the errors, combined into one, if there were any.
    pub(crate) fn check(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        // stable: within a part, the order found
        errors.sort_by_key(|(part, _)| *part);
        let mut iter = errors.into_iter().map(|(_, error)| error);
        match iter.next() {
            None => Ok(()),
            Some(mut first) => {
                for error in iter {
                    first.combine(error);
                }
                Err(first)
            }
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}

/// The errors in `cx` and the input untouched: what a macro put on the wrong kind of item
/// emits.
pub(crate) fn untouched(cx: Ctxt, input: TokenStream) -> TokenStream {
    let error = cx.check().err().map(|error| error.to_compile_error());
    quote::quote!(#error #input)
}

/// The error for a macro put on the wrong kind of item, spanning the item's keyword (`struct`,
/// `impl`, ...) rather than the attribute.
pub(crate) fn not_this_item(input: &TokenStream, message: &str) -> syn::Error {
    use syn::Item;
    let Ok(item) = syn::parse2::<Item>(input.clone()) else {
        return syn::Error::new_spanned(input, message);
    };
    let keyword: &dyn ToTokens = match &item {
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

/// The spans of the first and the last token of `tokens`: an expression generated with its
/// first token spanned at the one and its last at the other is reported over all of `tokens`
/// (a whole type, not its first segment).
pub(crate) fn first_and_last_span(
    tokens: &impl ToTokens,
) -> (proc_macro2::Span, proc_macro2::Span) {
    let mut tokens = tokens.to_token_stream().into_iter();
    let first = tokens
        .next()
        .map_or_else(proc_macro2::Span::call_site, |token| token.span());
    let last = tokens.last().map_or(first, |token| token.span());
    (first, last)
}

/// After a mistake in one option of an attribute, skips the rest of it (up to the next
/// top-level `,`), so the options after it are still read and the mistake is reported once.
pub(crate) fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) {
    let _ = meta.input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            if matches!(&tt, proc_macro2::TokenTree::Punct(p) if p.as_char() == ',') {
                break;
            }
            rest = next;
        }
        Ok(((), rest))
    });
}

#[cfg(test)]
mod tests {
    use super::Ctxt;
    use proc_macro2::Span;

    fn messages(cx: Ctxt) -> Vec<String> {
        cx.check()
            .expect_err("errors were recorded")
            .into_iter()
            .map(|error| error.to_string())
            .collect()
    }

    #[test]
    fn parts_are_reported_in_order_each_in_the_order_found() {
        let cx = Ctxt::new();
        let error = |message: &str| syn::Error::new(Span::call_site(), message);
        cx.in_part(2, || cx.syn_error(error("parse 2")));
        cx.in_part(1, || cx.syn_error(error("parse 1")));
        cx.syn_error(error("type"));
        cx.in_part(1, || cx.syn_error(error("check 1")));
        cx.in_part(2, || cx.syn_error(error("check 2")));
        assert_eq!(
            messages(cx),
            ["type", "parse 1", "check 1", "parse 2", "check 2"]
        );
    }

    #[test]
    fn no_errors() {
        assert!(Ctxt::new().check().is_ok());
    }
}
