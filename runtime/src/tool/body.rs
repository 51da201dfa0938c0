//! What `#[tool]` writes per tool, and what is written once here around it.
//!
//! A tool's generated code holds only what depends on its types: its arguments struct and the
//! decoders picked for it, and [`ToolBody::run`], which calls the function and takes apart
//! what it returned. The methods of [`Tool`] that take arguments as a `Value` or as text and
//! want the output as a `Value` or as text are this module's generic functions, thin shells
//! over that one body: a tool is compiled with one call of its function, not one per method.
//! Its definition is built here too, from what the macro read.

use std::sync::OnceLock;

use serde_json::Value;

use super::args::Decoders;
use super::output::{AsText, AsValue, Encoded, Encoding, OutputAs};
use super::{Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolFuture, text};

/// The part of a `#[tool]` that depends on its types; the [`Tool`] impl the macro writes
/// calls [`call`], [`call_text`] and [`call_text_output`] with it. `A` is the arguments struct
/// the macro derives from the function's parameters: a parameter of the trait, not an
/// associated type, which would have to be as public as the tool.
pub trait ToolBody<A>: Tool + Sized {
    /// The decoders of the arguments struct.
    fn decoders() -> Decoders<A>;

    /// Calls the function with `arguments` (and `cx`, when it takes its context), and
    /// classifies what it returned, its output encoded as `as_` says.
    fn run(&self, arguments: A, cx: ToolContext, as_: OutputAs) -> ToolFuture<'_, Encoded>;
}

/// [`Tool::call`] of a `#[tool]`: the arguments decoded from `args`, then the body run.
#[inline]
pub fn call<A, B: ToolBody<A>>(tool: &B, args: Value, cx: ToolContext) -> ToolFuture<'_> {
    match (B::decoders().value)(args) {
        Ok(arguments) => tool
            .run(arguments, cx, OutputAs::Value)
            .decode(AsValue::from_encoded),
        Err(error) => ToolFuture::ready(Err(error)),
    }
}

/// [`Tool::call_text_output`] of a `#[tool]`: as [`call`], the output written as text.
#[inline]
pub fn call_text_output<A, B: ToolBody<A>>(
    tool: &B,
    args: Value,
    cx: ToolContext,
) -> ToolFuture<'_, String> {
    match (B::decoders().value)(args) {
        Ok(arguments) => tool
            .run(arguments, cx, OutputAs::Text)
            .decode(AsText::from_encoded),
        Err(error) => ToolFuture::ready(Err(error)),
    }
}

/// [`Tool::call_text`] of a `#[tool]`: the arguments decoded from `text` in one pass, building
/// no `Value`. Text that does not decode that way takes the [`Tool::call`] path, which says
/// what is wrong; what is left runs as `call` runs it.
#[inline]
pub fn call_text<'a, A, B: ToolBody<A>>(
    tool: &'a B,
    text: &str,
    cx: ToolContext,
) -> ToolFuture<'a> {
    match (B::decoders().text)(text) {
        Some(arguments) => tool
            .run(arguments, cx, OutputAs::Value)
            .decode(AsValue::from_encoded),
        None => text::call_parsed::<dyn Tool>(tool, text, cx),
    }
}

/// A `#[tool]`'s definition, made once, the first time it is asked for.
#[derive(Debug)]
pub struct DefinitionCell(OnceLock<ToolDefinition>);

impl DefinitionCell {
    /// Empty.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Self(OnceLock::new())
    }

    /// The definition, made by `make` if it is not there yet.
    pub fn get(&self, make: fn() -> ToolDefinition) -> &ToolDefinition {
        self.0.get_or_init(make)
    }
}

/// A `#[tool]`'s definition from what the macro read: its name, description, parameter schema,
/// annotations, title (the `title` option) and output schema.
pub fn definition(
    name: &'static str,
    description: &'static str,
    parameters: Value,
    annotations: ToolAnnotations,
    title: Option<&'static str>,
    output_schema: Option<Value>,
) -> ToolDefinition {
    let mut definition =
        ToolDefinition::new(name, description, parameters).with_annotations(annotations);
    if let Some(title) = title {
        definition = definition.with_title(title);
    }
    match output_schema {
        Some(schema) => definition.with_output_schema(schema),
        None => definition,
    }
}
