//! What `#[tool]` writes per tool, and what is written once here around it.
//!
//! A tool's generated code holds only what depends on its types: the decoders picked for its
//! arguments (and their struct, when its parameters carry attributes), and [`ToolBody::run`], which calls the function and takes apart
//! what it returned. The methods of [`Tool`] that take arguments as a `Value` or as text and
//! want the output as a `Value` or as text are this module's generic functions, thin shells
//! over that one body: a tool is compiled with one call of its function, not one per method.
//! Its definition is built here too, from what the macro read.

use std::any::Any;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::args::Decoders;
use super::output::{AsText, AsValue, Encoded, Encoding, OutputAs};
use super::validate::{ArgumentValidator, ValidatorError};
use super::{Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolFuture, text};
use crate::error::{Failure, ToolError};

/// The part of a `#[tool]` that depends on its types; the [`Tool`] impl the macro writes
/// calls [`call`], [`call_text`] and [`call_text_output`] with it. `A` is what the arguments
/// decode into, the tuple of the parameters' types or the arguments struct the macro derives
/// from them: a parameter of the trait, not an associated type, which would have to be as
/// public as the tool.
pub trait ToolBody<A>: Tool + Sized {
    /// The decoders of the arguments.
    fn decoders() -> Decoders<A>;

    /// Calls the function with `arguments` (and `cx`, when it takes its context), and
    /// classifies what it returned, its output encoded as `as_` says.
    fn run(&self, arguments: A, cx: ToolContext, as_: OutputAs) -> ToolFuture<'_, Encoded>;

    /// The tool's definition and the check of its arguments, made once.
    fn described() -> &'static Described;
}

/// [`Tool::call`] of a `#[tool]`: the arguments checked against its schema's constraints
/// (when it has any), decoded from `args`, then the body run.
#[inline]
pub fn call<A, B: ToolBody<A>>(tool: &B, args: Value, cx: ToolContext) -> ToolFuture<'_> {
    let described = B::described();
    if described.checks() {
        return checked(
            tool,
            start_any::<A, B>,
            described,
            args,
            cx,
            OutputAs::Value,
        )
        .decode(AsValue::from_encoded);
    }
    start(tool, args, cx, OutputAs::Value).decode(AsValue::from_encoded)
}

/// [`Tool::call_text_output`] of a `#[tool]`: as [`call`], the output written as text.
#[inline]
pub fn call_text_output<A, B: ToolBody<A>>(
    tool: &B,
    args: Value,
    cx: ToolContext,
) -> ToolFuture<'_, String> {
    let described = B::described();
    if described.checks() {
        return checked(tool, start_any::<A, B>, described, args, cx, OutputAs::Text)
            .decode(AsText::from_encoded);
    }
    start(tool, args, cx, OutputAs::Text).decode(AsText::from_encoded)
}

/// [`Tool::call_text`] of a `#[tool]`: the arguments decoded from `text` in one pass, building
/// no `Value`. Text that does not decode that way takes the [`Tool::call`] path, which says
/// what is wrong; what is left runs as `call` runs it. A tool whose schema has constraints
/// checks a `Value`: its text is parsed into one first.
#[inline]
pub fn call_text<'a, A, B: ToolBody<A>>(
    tool: &'a B,
    text: &str,
    cx: ToolContext,
) -> ToolFuture<'a> {
    let described = B::described();
    if described.checks() {
        return match serde_json::from_str(text) {
            Ok(args) => checked(
                tool,
                start_any::<A, B>,
                described,
                args,
                cx,
                OutputAs::Value,
            ),
            Err(_) => return text::call_parsed::<dyn Tool>(tool, text, cx),
        }
        .decode(AsValue::from_encoded);
    }
    match B::decoders().decode_text(text) {
        Some(arguments) => tool
            .run(arguments, cx, OutputAs::Value)
            .decode(AsValue::from_encoded),
        None => text::call_parsed::<dyn Tool>(tool, text, cx),
    }
}

/// The arguments decoded from `args`, then the body run: the call once its arguments are
/// checked.
#[inline]
fn start<A, B: ToolBody<A>>(
    tool: &B,
    args: Value,
    cx: ToolContext,
    as_: OutputAs,
) -> ToolFuture<'_, Encoded> {
    match B::decoders().decode_value(args) {
        Ok(arguments) => tool.run(arguments, cx, as_),
        Err(error) => ToolFuture::ready(Err(error)),
    }
}

/// [`start`] for a tool given as `&dyn Any`, which is a `B`: what a checked call goes on with,
/// so that the check, and the future that waits for it on the blocking pool, are written once,
/// not per tool.
fn start_any<A, B: ToolBody<A>>(
    tool: &(dyn Any + Send + Sync),
    args: Value,
    cx: ToolContext,
    as_: OutputAs,
) -> ToolFuture<'_, Encoded> {
    let tool = tool
        .downcast_ref::<B>()
        .expect("a tool is started as the type it was checked as");
    start(tool, args, cx, as_)
}

/// The call of a tool whose schema has constraints: `args` checked against them, in place, or,
/// when the check may be costly, on the blocking pool inside the call's future (so that its
/// time limit covers it); then the call goes on as `start` starts it. Refused arguments are the
/// call's argument error. Not generic: written once for every tool.
#[inline(never)]
fn checked<'a>(
    tool: &'a (dyn Any + Send + Sync),
    start: Start,
    described: &Described,
    args: Value,
    cx: ToolContext,
    as_: OutputAs,
) -> ToolFuture<'a, Encoded> {
    match described.check(args) {
        Checked::Passed(args) => start(tool, args, cx, as_),
        Checked::Refused(error) => ToolFuture::ready(Err(error)),
        Checked::Costly(validator, args) => ToolFuture::new(async move {
            let args = validator.check_owned(args).await?;
            start(tool, args, cx, as_).await
        }),
    }
}

/// What [`start_any`] is, for one tool type.
type Start = for<'t> fn(
    &'t (dyn Any + Send + Sync),
    Value,
    ToolContext,
    OutputAs,
) -> ToolFuture<'t, Encoded>;

/// What checking a call's arguments came to.
enum Checked {
    /// Nothing in them breaks a constraint.
    Passed(Value),
    /// Something does, or they could not be checked.
    Refused(ToolError),
    /// The check may take long: to be made on the blocking pool.
    Costly(Arc<ArgumentValidator>, Value),
}

/// A `#[tool]`'s definition and the check of its arguments against its schema's constraints,
/// made once, from its definition.
#[derive(Debug)]
pub struct Described {
    definition: ToolDefinition,
    check: Check,
}

#[derive(Debug)]
enum Check {
    /// The schema has no constraint its Rust types do not enforce.
    Nothing,
    /// The validator of its constraints.
    Validator(Arc<ArgumentValidator>),
    /// Its constraints cannot be compiled into a validator: every call is refused. (A tool
    /// set refuses the tool when it is built.)
    Uncheckable(ValidatorError),
}

impl Described {
    /// `definition`, with the validator of its parameter schema's constraints.
    fn new(definition: ToolDefinition) -> Self {
        let check = match ArgumentValidator::new(&definition.parameters) {
            Ok(None) => Check::Nothing,
            Ok(Some(validator)) => Check::Validator(Arc::new(validator)),
            Err(error) => Check::Uncheckable(error),
        };
        Self { definition, check }
    }

    /// The tool's definition.
    #[inline]
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// Whether a call's arguments are checked before they are decoded.
    #[inline]
    fn checks(&self) -> bool {
        !matches!(self.check, Check::Nothing)
    }

    /// Checks `args`, or says the check is to be made on the blocking pool.
    fn check(&self, args: Value) -> Checked {
        match &self.check {
            Check::Nothing => Checked::Passed(args),
            Check::Uncheckable(error) => Checked::Refused(ToolError::Failed(
                Failure::new("ValidatorError", error.clone()).fatal(),
            )),
            Check::Validator(validator) => {
                if validator.is_costly(&args) && tokio::runtime::Handle::try_current().is_ok() {
                    return Checked::Costly(Arc::clone(validator), args);
                }
                match validator.check(&args) {
                    Ok(()) => Checked::Passed(args),
                    Err(error) => Checked::Refused(error.into()),
                }
            }
        }
    }
}

/// A `#[tool]`'s definition and the check of its arguments, made once, the first time either
/// is asked for.
#[derive(Debug)]
pub struct DefinitionCell(OnceLock<Described>);

impl DefinitionCell {
    /// Empty.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Self(OnceLock::new())
    }

    /// What the tool is, made from the definition `make` returns if it is not there yet.
    #[inline]
    pub fn get(&self, make: fn() -> ToolDefinition) -> &Described {
        self.0.get_or_init(|| Described::new(make()))
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
