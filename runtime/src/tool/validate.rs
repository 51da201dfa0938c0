//! [`ArgumentValidator`]: the model's arguments checked against what a tool's parameter schema
//! promises and its Rust types do not enforce — `minimum`, `pattern`, `maxItems`, an `enum` on
//! a string, ... — compiled once per tool, so that a value outside them is an argument error
//! naming the path and the constraint.
//!
//! The types enforce the rest: the shape (types, required and unknown properties), an integer
//! `format`'s range (`uint8` is 0 to 255 because `u8` is), a Rust enum's variant names. A
//! schema with nothing beyond that gets no validator (`constraints.rs` decides), and its tool
//! pays nothing per call.

use std::panic::{AssertUnwindSafe, catch_unwind};

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use serde_json::Value;

use super::constraints::has_constraints;
use crate::error::ArgumentError;
use crate::render;

/// Checks a model's arguments against the constraints a tool's parameter schema shows it.
///
/// The agent and the MCP server build one for every tool whose schema carries such a
/// constraint, once, when they are built, and check each call's arguments before the tool
/// runs. A tool called directly with [`Tool::call`](crate::Tool::call) is not checked; to
/// check arguments yourself, build a validator from the tool's schema:
///
/// ```
/// use reticent::{ArgumentValidator, ParametersSchema};
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// # #[allow(dead_code)]
/// struct Task {
///     #[schemars(range(min = 1, max = 5))]
///     effort: u8,
/// }
///
/// let mut schema = ParametersSchema::new();
/// schema.parameter::<Task>("task", None, true);
/// let validator = ArgumentValidator::new(&schema.finish())?.expect("a range is a constraint");
/// assert!(validator.check(&json!({"task": {"effort": 3}})).is_ok());
/// let error = validator.check(&json!({"task": {"effort": 9}})).unwrap_err();
/// assert_eq!(error.message(), "argument `task.effort`: 9 is greater than the maximum of 5");
/// assert_eq!(error.path(), Some("task.effort"));
///
/// // `u8`'s own range is the type's to enforce: nothing to check
/// let mut plain = ParametersSchema::new();
/// plain.parameter::<u8>("effort", None, true);
/// assert!(ArgumentValidator::new(&plain.finish())?.is_none());
/// # Ok::<(), reticent::ValidatorError>(())
/// ```
///
/// Which keywords are checked: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`
/// and `multipleOf` (but not bounds an integer `format` implies), `minLength`, `maxLength`,
/// `pattern`, `minItems`, `maxItems`, `uniqueItems`, `minProperties`, `maxProperties`, and
/// `enum` and `const` (but not a Rust enum's variant names and tags, which its `Deserialize`
/// checks). Not `format`, which JSON Schema 2020-12 makes an annotation (a type such as a date
/// checks its own). Violations of the shape — a wrong type, a missing or unknown property —
/// are left to the tool's decoding, which says what it expected.
pub struct ArgumentValidator {
    validator: jsonschema::Validator,
    /// Report violations of the shape too: the tool has no types of its own (an MCP server's).
    complete: bool,
}

impl std::fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentValidator")
            .field("complete", &self.complete)
            .finish_non_exhaustive()
    }
}

/// Why a parameter schema could not be compiled into an [`ArgumentValidator`]: a `pattern`
/// that is not a regular expression, a `$ref` to nothing, a keyword with a value of the wrong
/// type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the schema cannot be compiled into a validator: {reason}")]
pub struct ValidatorError {
    reason: String,
}

impl ValidatorError {
    /// What is wrong with the schema.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl ArgumentValidator {
    /// The validator for a tool's parameter schema, or `None` when the schema carries no
    /// constraint beyond what its Rust types enforce (nothing to check).
    pub fn new(schema: &Value) -> Result<Option<Self>, ValidatorError> {
        if !has_constraints(schema) {
            return Ok(None);
        }
        let options = jsonschema::options().should_validate_formats(false);
        compile(|| options.build(schema)).map(|validator| {
            Some(Self {
                validator,
                complete: false,
            })
        })
    }

    /// A validator that reports every violation, the shape's too, for a tool whose schema is
    /// all there is to check its arguments (an MCP server's tool). A schema from elsewhere:
    /// whatever the compiler makes of it must not end the program.
    #[cfg(feature = "mcp-client")]
    pub(crate) fn complete(schema: &Value) -> Result<Self, ValidatorError> {
        compile(|| jsonschema::validator_for(schema)).map(|validator| Self {
            validator,
            complete: true,
        })
    }

    /// Checks `arguments`: an argument error naming where each violation is and what the
    /// schema asks (the first few), or `Ok` when none is the validator's to report.
    pub fn check(&self, arguments: &Value) -> Result<(), ArgumentError> {
        if self.validator.is_valid(arguments) {
            return Ok(());
        }
        self.violations(arguments)
    }

    #[cold]
    fn violations(&self, arguments: &Value) -> Result<(), ArgumentError> {
        let mut found = Found::default();
        for error in self.validator.iter_errors(arguments) {
            found.collect(&error, arguments);
        }
        let mut violations = found.constraints;
        if self.complete {
            violations.extend(found.shape);
        }
        let Some((first, _)) = violations.first() else {
            // only the shape: the tool's decoding says what it expected
            return Ok(());
        };
        let path = first.clone();
        let message = render::schema_violations(violations.into_iter());
        Err(if path.is_empty() {
            ArgumentError::new(message)
        } else {
            ArgumentError::new(message).at(path)
        })
    }
}

fn compile<E: std::fmt::Display>(
    build: impl FnOnce() -> Result<jsonschema::Validator, E>,
) -> Result<jsonschema::Validator, ValidatorError> {
    match catch_unwind(AssertUnwindSafe(build)) {
        Ok(Ok(validator)) => Ok(validator),
        Ok(Err(error)) => Err(ValidatorError {
            reason: error.to_string(),
        }),
        Err(_) => Err(ValidatorError {
            reason: "the schema validator panicked on it".to_owned(),
        }),
    }
}

/// The violations found, as (path, message): of constraints, and of the shape.
#[derive(Default)]
struct Found {
    constraints: Vec<(String, String)>,
    shape: Vec<(String, String)>,
}

impl Found {
    fn collect(&mut self, error: &jsonschema::ValidationError<'_>, arguments: &Value) {
        let path = || path_of(error.instance_path(), arguments);
        let value = error.instance();
        let message = match error.kind() {
            ValidationErrorKind::Minimum { limit } => {
                render::beyond(value, "less than the minimum", limit)
            }
            ValidationErrorKind::Maximum { limit } => {
                render::beyond(value, "greater than the maximum", limit)
            }
            ValidationErrorKind::ExclusiveMinimum { limit } => {
                render::beyond(value, "not greater than the exclusive minimum", limit)
            }
            ValidationErrorKind::ExclusiveMaximum { limit } => {
                render::beyond(value, "not less than the exclusive maximum", limit)
            }
            ValidationErrorKind::MultipleOf { multiple_of } => {
                render::not_a_multiple(value, *multiple_of)
            }
            ValidationErrorKind::MinLength { limit } => render::length(value, "shorter", *limit),
            ValidationErrorKind::MaxLength { limit } => render::length(value, "longer", *limit),
            ValidationErrorKind::Pattern { pattern } => render::no_match(value, pattern),
            ValidationErrorKind::Enum { options } => render::not_one_of(value, options),
            ValidationErrorKind::Constant { expected_value } => {
                render::not_the_constant(value, expected_value)
            }
            ValidationErrorKind::MinItems { limit } => {
                render::count(value, "item", "fewer than the minimum", *limit)
            }
            ValidationErrorKind::MaxItems { limit } => {
                render::count(value, "item", "more than the maximum", *limit)
            }
            ValidationErrorKind::MinProperties { limit } => {
                render::count(value, "property", "fewer than the minimum", *limit)
            }
            ValidationErrorKind::MaxProperties { limit } => {
                render::count(value, "property", "more than the maximum", *limit)
            }
            ValidationErrorKind::UniqueItems => render::not_unique(),
            ValidationErrorKind::Contains
            | ValidationErrorKind::Not { .. }
            | ValidationErrorKind::PropertyNames { .. }
            | ValidationErrorKind::Format { .. } => error.to_string(),
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                // the member the value is closest to: the first it misses by constraints only
                let closest = context.iter().find_map(|member| {
                    let mut found = Found::default();
                    for error in member {
                        found.collect(error, arguments);
                    }
                    (found.shape.is_empty() && !found.constraints.is_empty())
                        .then_some(found.constraints)
                });
                match closest {
                    Some(violations) => self.constraints.extend(violations),
                    None => self.shape.push((path(), error.to_string())),
                }
                return;
            }
            _ => {
                self.shape.push((path(), error.to_string()));
                return;
            }
        };
        self.constraints.push((path(), message));
    }
}

/// Where in the arguments a violation is, as the model would write it: `assignee.teamTags`,
/// `lines[2].qty`; empty for the arguments themselves.
fn path_of(location: &jsonschema::paths::Location, arguments: &Value) -> String {
    let mut path = String::new();
    let mut at = Some(arguments);
    for segment in location.segments() {
        let (key, index) = match &segment {
            LocationSegment::Property(name) => (name.to_string(), None),
            LocationSegment::Index(i) => (i.to_string(), Some(*i)),
        };
        match (at, index) {
            (Some(Value::Array(items)), Some(i)) => {
                path.push_str(&format!("[{i}]"));
                at = items.get(i);
            }
            (current, _) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&key);
                at = current.and_then(|v| v.get(&key));
            }
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_read_as_the_model_writes_them() {
        let arguments = json!({"a": {"b-c": [{"d": 1}], "0": 2}});
        let location: jsonschema::paths::Location = ["a", "b-c"]
            .into_iter()
            .map(LocationSegment::from)
            .chain([LocationSegment::from(0usize), LocationSegment::from("d")])
            .collect();
        assert_eq!(path_of(&location, &arguments), "a.b-c[0].d");
        let numeric: jsonschema::paths::Location =
            [LocationSegment::from("a"), LocationSegment::from(0usize)]
                .into_iter()
                .collect();
        assert_eq!(path_of(&numeric, &arguments), "a.0");
        assert_eq!(path_of(&jsonschema::paths::Location::new(), &arguments), "");
    }
}
