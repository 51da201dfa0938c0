//! The attributes of a tool function: the options of `#[tool(..)]`, collected into a config
//! whose setters refuse duplicates, then checked together; and the doc comments.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::{Ident, LitBool, LitStr};

use crate::ctxt::{Ctxt, skip_value};

/// The option names, in the order the help text lists them.
pub(crate) const OPTIONS: &[&str] = &[
    "name",
    "title",
    "description",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "untrusted_output",
    "needs_approval",
    "output_schema",
    "timeout",
    "max_output",
];

/// A checked `#[tool(..)]`. Its `Default` is `#[tool]` with no options.
#[derive(Clone)]
pub(crate) struct ToolOptions {
    pub(crate) name: Option<LitStr>,
    /// A human-readable title, for user interfaces.
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) read_only: bool,
    pub(crate) destructive: bool,
    pub(crate) idempotent: bool,
    pub(crate) open_world: bool,
    /// Whether the output comes from outside the system (taints the run), when written:
    /// `open_world` tools are untrusted unless they say `untrusted_output = false`.
    pub(crate) untrusted_output: Option<bool>,
    /// Whether a person approves each call before it runs.
    pub(crate) needs_approval: bool,
    /// Whether the definition carries the output's schema, when the output type has one
    /// (`output_schema = false` opts out).
    pub(crate) output_schema: bool,
    /// The timeout in milliseconds.
    pub(crate) timeout_ms: Option<u64>,
    /// The output budget in bytes.
    pub(crate) max_output: Option<u64>,
}

impl Default for ToolOptions {
    fn default() -> Self {
        Self {
            name: None,
            title: None,
            description: None,
            read_only: false,
            destructive: false,
            idempotent: false,
            open_world: false,
            untrusted_output: None,
            needs_approval: false,
            output_schema: true,
            timeout_ms: None,
            max_output: None,
        }
    }
}

/// Options as written, before they are checked together.
#[derive(Default)]
struct Config {
    name: Option<LitStr>,
    title: Option<LitStr>,
    description: Option<LitStr>,
    flags: [Option<(Ident, bool)>; 7],
    timeout: Option<LitStr>,
    max_output: Option<LitStr>,
}

const FLAGS: [&str; 7] = [
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "untrusted_output",
    "needs_approval",
    "output_schema",
];

impl Config {
    fn set_lit(
        slot: &mut Option<LitStr>,
        key: &Ident,
        meta: &ParseNestedMeta<'_>,
    ) -> syn::Result<()> {
        let value = meta.value().map_err(|_| {
            syn::Error::new_spanned(key, format!("`{key}` needs a value: `{key} = \"...\"`"))
        })?;
        let lit: LitStr = value.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("`{key}` takes a string literal: `{key} = \"...\"`"),
            )
        })?;
        if slot.is_some() {
            return Err(syn::Error::new_spanned(
                key,
                format!("`{key}` is set more than once; keep one"),
            ));
        }
        *slot = Some(lit);
        Ok(())
    }

    fn parse_one(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let Some(key) = meta.path.get_ident().cloned() else {
            let path = &meta.path;
            return Err(meta.error(unknown_option_message(
                &quote::quote!(#path).to_string().replace(' ', ""),
            )));
        };
        let name = key.to_string();
        match name.as_str() {
            "name" => Self::set_lit(&mut self.name, &key, meta),
            "title" => Self::set_lit(&mut self.title, &key, meta),
            "description" => Self::set_lit(&mut self.description, &key, meta),
            "timeout" => Self::set_lit(&mut self.timeout, &key, meta),
            "max_output" => Self::set_lit(&mut self.max_output, &key, meta),
            flag if FLAGS.contains(&flag) => {
                let index = FLAGS.iter().position(|f| *f == flag).unwrap_or_default();
                if meta.input.peek(syn::token::Paren) {
                    return Err(syn::Error::new_spanned(
                        &key,
                        format!("write `{key}` or `{key} = false`"),
                    ));
                }
                let value = if meta.input.peek(syn::Token![=]) {
                    let lit: LitBool = meta.value()?.parse().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            format!("`{key}` takes `true` or `false`, or no value"),
                        )
                    })?;
                    lit.value
                } else {
                    true
                };
                if self.flags[index].is_some() {
                    return Err(syn::Error::new_spanned(
                        &key,
                        format!("`{key}` is set more than once; keep one"),
                    ));
                }
                self.flags[index] = Some((key, value));
                Ok(())
            }
            other => Err(syn::Error::new_spanned(&key, unknown_option_message(other))),
        }
    }

    fn build(self, cx: &Ctxt) -> ToolOptions {
        let flag = |i: usize| self.flags[i].as_ref().is_some_and(|(_, v)| *v);
        let options = ToolOptions {
            read_only: flag(0),
            destructive: flag(1),
            idempotent: flag(2),
            open_world: flag(3),
            untrusted_output: self.flags[4].as_ref().map(|(_, v)| *v),
            needs_approval: flag(5),
            // on unless written `false`
            output_schema: self.flags[6].as_ref().is_none_or(|(_, v)| *v),
            timeout_ms: self.timeout.as_ref().and_then(|lit| {
                match parse_duration_ms(&lit.value()) {
                    Ok(ms) => Some(ms),
                    Err(message) => {
                        cx.error_spanned_by(lit, message);
                        None
                    }
                }
            }),
            max_output: self
                .max_output
                .as_ref()
                .and_then(|lit| match parse_size(&lit.value()) {
                    Ok(bytes) => Some(bytes),
                    Err(message) => {
                        cx.error_spanned_by(lit, message);
                        None
                    }
                }),
            name: self.name,
            title: self.title,
            description: self.description,
        };
        if let (true, Some((key, _))) = (options.read_only && options.destructive, &self.flags[1]) {
            cx.error_spanned_by(key, "a tool cannot be both `read_only` and `destructive`; a read-only tool changes nothing");
        }
        if let Some(name) = &options.name
            && let Err(message) = check_tool_name(&name.value())
        {
            cx.error_spanned_by(name, message);
        }
        if let Some(description) = &options.description
            && description.value().trim().is_empty()
        {
            cx.error_spanned_by(
                description,
                "the description is empty; say what the tool does",
            );
        }
        if let Some(title) = &options.title
            && title.value().trim().is_empty()
        {
            cx.error_spanned_by(
                title,
                "the title is empty; give a short human-readable name, like `title = \"Look up an order\"`, or leave `title` out",
            );
        }
        options
    }
}

fn unknown_option_message(got: &str) -> String {
    let list = OPTIONS
        .iter()
        .map(|o| format!("`{o}`"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("unknown `#[tool]` option `{got}`; the options are {list}")
}

/// Parses the arguments of `#[tool(..)]`, recording every mistake in `cx`.
pub(crate) fn parse_tool_options(args: TokenStream, cx: &Ctxt) -> ToolOptions {
    let mut config = Config::default();
    if !args.is_empty() {
        let parser = syn::meta::parser(|meta| {
            if let Err(e) = config.parse_one(&meta) {
                cx.syn_error(e);
                skip_value(&meta);
            }
            Ok(())
        });
        if let Err(e) = syn::parse::Parser::parse2(parser, args) {
            cx.syn_error(e);
        }
    }
    config.build(cx)
}

/// Parses the options of a `#[tool(..)]` attribute on a method.
pub(crate) fn parse_tool_attr(attr: &syn::Attribute, cx: &Ctxt) -> ToolOptions {
    match &attr.meta {
        syn::Meta::Path(_) => ToolOptions::default(),
        syn::Meta::List(list) => parse_tool_options(list.tokens.clone(), cx),
        syn::Meta::NameValue(nv) => {
            cx.error_spanned_by(nv, "write `#[tool]` or `#[tool(option, ...)]`");
            ToolOptions::default()
        }
    }
}

/// Checks `^[a-zA-Z0-9_-]{1,64}$`, saying what is wrong.
pub(crate) fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a tool name cannot be empty".into());
    }
    if name.len() > 64 {
        return Err(format!(
            "the tool name is {} characters long; models accept at most 64: set a shorter one with `#[tool(name = \"...\")]`",
            name.chars().count()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "the tool name `{name}` has the character {c:?}; tool names may use only ASCII letters, digits, `_` and `-`: set one with `#[tool(name = \"...\")]`"
        ));
    }
    Ok(())
}

/// Parses `150ms`, `5s`, `2m`, `1h`, or combinations like `1m30s`, into milliseconds.
pub(crate) fn parse_duration_ms(text: &str) -> Result<u64, String> {
    const HELP: &str =
        "write the timeout as a number and a unit: `500ms`, `5s`, `2m`, `1h` or `1m30s`";
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("the timeout is empty; {HELP}"));
    }
    let mut total: u64 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!("cannot read the timeout `{text}`; {HELP}"));
        }
        let number: u64 = rest[..digits]
            .parse()
            .map_err(|_| format!("the timeout `{text}` is too large"))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].trim();
        rest = &rest[unit_len..];
        let scale = match unit {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "" => return Err(format!("the timeout `{text}` has no unit; {HELP}")),
            other => {
                return Err(format!(
                    "unknown unit `{other}` in the timeout `{text}`; {HELP}"
                ));
            }
        };
        total = number
            .checked_mul(scale)
            .and_then(|ms| total.checked_add(ms))
            .ok_or_else(|| format!("the timeout `{text}` is too large"))?;
    }
    if total == 0 {
        return Err(format!("the timeout must be longer than zero; {HELP}"));
    }
    Ok(total)
}

/// Parses a size in bytes: `4096`, `4096B`, `16KiB`, `1MiB`, `2GiB`, or in powers of ten
/// `16KB`, `1MB`, `2GB`; a space may stand between the number and the unit. At most 2 GiB, so
/// that the budget fits a `usize` on every target.
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    const HELP: &str = "write the output budget as a number of bytes with an optional unit: \
                        `4096`, `16KiB`, `1MiB` (or `16KB`, `1MB`)";
    const MAX: u64 = 2 << 30;
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("the output budget is empty; {HELP}"));
    }
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    if digits == 0 {
        return Err(format!("cannot read the output budget `{text}`; {HELP}"));
    }
    let too_large = || format!("the output budget `{text}` is larger than 2GiB, the largest one");
    let number: u64 = text[..digits].parse().map_err(|_| too_large())?;
    let scale: u64 = match text[digits..].trim_start() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        other => {
            return Err(format!(
                "unknown unit `{other}` in the output budget `{text}`; {HELP}"
            ));
        }
    };
    let bytes = number.checked_mul(scale).ok_or_else(too_large)?;
    if bytes == 0 {
        return Err(format!(
            "the output budget must be larger than zero; {HELP}, or leave `max_output` out for the agent's budget"
        ));
    }
    if bytes > MAX {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The text of the `#[doc]` attributes, with the one leading space of `///` removed; `None`
/// when there are none or they are blank.
pub(crate) fn doc_text(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            let value = s.value();
            // A blank `///` line is an empty string: keep it, it separates paragraphs.
            if value.is_empty() {
                lines.push(String::new());
            }
            for line in value.lines() {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    let text = lines.join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("150ms"), Ok(150));
        assert_eq!(parse_duration_ms("5s"), Ok(5_000));
        assert_eq!(parse_duration_ms("1m30s"), Ok(90_000));
        assert_eq!(parse_duration_ms("2h"), Ok(7_200_000));
        assert!(parse_duration_ms("5").is_err());
        assert!(parse_duration_ms("5 parsecs").is_err());
        assert!(parse_duration_ms("0s").is_err());
        assert!(parse_duration_ms("s").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4096B"), Ok(4096));
        assert_eq!(parse_size("16KiB"), Ok(16 * 1024));
        assert_eq!(parse_size("16 KiB"), Ok(16 * 1024));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("2MB"), Ok(2_000_000));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert!(parse_size("3GiB").is_err());
        assert!(parse_size("0KiB").is_err());
        assert!(parse_size("16kib").is_err());
        assert!(parse_size("KiB").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999999999999999").is_err());
    }

    #[test]
    fn names() {
        assert!(check_tool_name("get-weather_2").is_ok());
        assert!(check_tool_name("get weather").is_err());
        assert!(check_tool_name(&"x".repeat(65)).is_err());
        assert!(check_tool_name("").is_err());
    }

    #[test]
    fn docs_keep_paragraphs() {
        let item: syn::ItemFn = syn::parse_quote! {
            /// Look up an order.
            ///
            ///   Indented.
            #[doc = ""]
            fn f() {}
        };
        assert_eq!(
            doc_text(&item.attrs).as_deref(),
            Some("Look up an order.\n\n  Indented.")
        );
        let item: syn::ItemFn = syn::parse_quote! {
            ///
            fn f() {}
        };
        assert_eq!(doc_text(&item.attrs), None);
    }
}
