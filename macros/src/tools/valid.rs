//! The rules a `#[tools]` impl block must follow, and those of each of its tools.

use std::collections::HashSet;

use super::ast::ToolsImpl;
use crate::ctxt::Ctxt;

impl ToolsImpl<'_> {
    /// Records every mistake in `cx`.
    pub(crate) fn validate(&self, cx: &Ctxt) {
        let item = self.item;
        if let Some((_, path, _)) = &item.trait_ {
            cx.error_spanned_by(
                path,
                "`#[tools]` goes on an inherent impl block (`impl Type { .. }`), not a trait impl",
            );
        }
        if !item.generics.params.is_empty() {
            cx.error_spanned_by(
                &item.generics,
                "a `#[tools]` impl block cannot be generic: each tool's schema is computed once for a concrete type; write the impl block for a concrete type instead",
            );
        }
        if self.tools.is_empty() {
            cx.error_spanned_by(
                &item.self_ty,
                "this `#[tools]` impl block has no tools: mark each tool method with `#[tool]`",
            );
        }
        for tool in &self.tools {
            tool.validate(cx);
        }
        let mut seen = HashSet::new();
        for tool in &self.tools {
            if !seen.insert(tool.name.as_str()) {
                cx.syn_error(syn::Error::new(
                    tool.name_span,
                    format!(
                        "a second tool named `{}` in this impl block; tool names must be unique: rename one with `#[tool(name = \"...\")]`",
                        tool.name
                    ),
                ));
            }
        }
    }
}
