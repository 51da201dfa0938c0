//! The `#[disclose(..)]` attribute, on the type or on a variant: options collected with
//! setters that refuse duplicates, then checked together.

use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr};

use crate::ctxt::{Ctxt, skip_value};

const OPTIONS: &str = "`argument`, `kind = \"...\"`, `transient`, `permanent` or `fatal`";

/// What one `#[disclose(..)]` says.
#[derive(Default)]
pub(crate) struct DiscloseAttr {
    pub(crate) argument: Option<syn::Path>,
    pub(crate) kind: Option<LitStr>,
    pub(crate) transient: Option<syn::Path>,
    pub(crate) permanent: Option<syn::Path>,
    pub(crate) fatal: Option<syn::Path>,
}

impl DiscloseAttr {
    /// The retry hint this attribute sets, as the `RetryHint` variant's name.
    pub(crate) fn hint(&self) -> Option<&'static str> {
        match (&self.transient, &self.permanent) {
            (Some(_), _) => Some("Transient"),
            (None, Some(_)) => Some("Permanent"),
            (None, None) => None,
        }
    }
}

/// Parses the `#[disclose(..)]` attributes among `attrs`, recording every mistake in `cx`:
/// unknown or repeated options, and options that cannot go together.
pub(crate) fn parse_attrs(attrs: &[Attribute], cx: &Ctxt) -> DiscloseAttr {
    let mut out = DiscloseAttr::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("disclose")) {
        if let syn::Meta::Path(path) = &attr.meta {
            cx.error_spanned_by(
                path,
                format!("`#[disclose]` needs an option: {OPTIONS}, like `#[disclose(argument)]`"),
            );
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            if let Err(error) = parse_one(&mut out, &meta, cx) {
                cx.syn_error(error);
                skip_value(&meta);
            }
            Ok(())
        });
        if let Err(error) = result {
            cx.syn_error(error);
        }
    }
    if let (Some(_), Some(permanent)) = (&out.transient, &out.permanent) {
        cx.error_spanned_by(
            permanent,
            "`transient` and `permanent` cannot both be set; keep `transient` if retrying later \
             may succeed, `permanent` if retrying the same call will not help",
        );
    }
    if let (Some(_), Some(fatal)) = (&out.argument, &out.fatal) {
        cx.error_spanned_by(
            fatal,
            "`argument` and `fatal` cannot both be set: an argument error is the model's to \
             correct, a fatal one ends the run; keep `argument` if the model can fix the call, \
             `fatal` if the run must stop",
        );
    }
    if let (Some(_), Some(kind)) = (&out.argument, &out.kind) {
        cx.error_spanned_by(
            kind,
            "`argument` and `kind` cannot both be set: an argument error shows its message, not a kind; \
             keep `argument` if the model caused the error, `kind` if it did not",
        );
    }
    out
}

fn parse_one(out: &mut DiscloseAttr, meta: &ParseNestedMeta<'_>, cx: &Ctxt) -> syn::Result<()> {
    let flag = match meta.path.get_ident().map(ToString::to_string).as_deref() {
        Some("argument") => Some(&mut out.argument),
        Some("transient") => Some(&mut out.transient),
        Some("permanent") => Some(&mut out.permanent),
        Some("fatal") => Some(&mut out.fatal),
        _ => None,
    };
    if let Some(slot) = flag {
        let name = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
            return Err(meta.error(format!(
                "`{name}` takes no value: write `#[disclose({name})]`"
            )));
        }
        if slot.is_some() {
            return Err(meta.error(format!("`{name}` is set more than once; keep one")));
        }
        *slot = Some(meta.path.clone());
    } else if meta.path.is_ident("kind") {
        const HELP: &str = "`kind` takes a string literal, like `kind = \"Unavailable\"`";
        let value = meta
            .value()
            .map_err(|_| syn::Error::new_spanned(&meta.path, HELP))?;
        let lit: LitStr = value
            .parse()
            .map_err(|error| syn::Error::new(error.span(), HELP))?;
        if out.kind.is_some() {
            return Err(syn::Error::new_spanned(
                &meta.path,
                "`kind` is set more than once; keep one",
            ));
        }
        let value = lit.value();
        if value.trim().is_empty() {
            cx.error_spanned_by(
                &lit,
                "the kind is empty; name the failure, like `kind = \"Unavailable\"`",
            );
        } else if value.len() > 100 || value.contains(['\n', '\r']) {
            cx.error_spanned_by(
                &lit,
                "a kind is a short name on one line, like `kind = \"Unavailable\"`",
            );
        }
        out.kind = Some(lit);
    } else {
        let path = &meta.path;
        let got = quote!(#path).to_string().replace(' ', "");
        return Err(syn::Error::new_spanned(
            path,
            format!("unknown `#[disclose]` option `{got}`; expected {OPTIONS}"),
        ));
    }
    Ok(())
}
