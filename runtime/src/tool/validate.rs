//! [`ArgumentValidator`]: the model's arguments checked against what a tool's parameter schema
//! promises and its Rust types do not enforce — `minimum`, `pattern`, `maxItems`, an `enum` on
//! a string, ... — compiled once per tool, so that a value outside them is an argument error
//! naming the path and the constraint.
//!
//! The types enforce the rest: the shape (types, required and unknown properties), an integer
//! `format`'s range (`uint8` is 0 to 255 because `u8` is), a Rust enum's variant names. A
//! schema with nothing beyond that gets no validator (`constraints.rs` decides), and its tool
//! pays nothing per call.
//!
//! The work of a check is bounded: `pattern` is this crate's keyword (`pattern.rs`), which
//! matches on the linear-time engine where it can and under a backtrack limit, a length limit
//! and a budget per check where it cannot; a match it cannot make refuses the call. A check
//! that may take more than a few matches against such patterns is made on the blocking pool
//! ([`ArgumentValidator::is_costly`]), where the call's time limit covers waiting for it.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use serde_json::Value;

use super::constraints::has_constraints;
use super::pattern;
use crate::error::ArgumentError;
use crate::render;

/// Checks a model's arguments against the constraints a tool's parameter schema shows it.
///
/// A `#[tool]` builds one from its schema when that carries such a constraint, once, and
/// checks each call's arguments with it before it decodes them, whoever calls it: its
/// [`Tool::call`](crate::Tool::call) refuses arguments that break a constraint with an argument
/// error. A tool written by hand whose schema has constraints builds one the same way:
///
/// ```
/// use reticent::tool::{ArgumentValidator, ParametersSchema};
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
/// # Ok::<(), reticent::tool::ValidatorError>(())
/// ```
///
/// Which keywords are checked: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`
/// and `multipleOf` (but not bounds an integer `format` implies), `minLength`, `maxLength`,
/// `pattern`, `minItems`, `maxItems`, `uniqueItems`, `minProperties`, `maxProperties`, and
/// `enum` and `const` (but not a Rust enum's variant names and tags, which its `Deserialize`
/// checks). Not `format`, which JSON Schema 2020-12 makes an annotation (a type such as a date
/// checks its own). Violations of the shape — a wrong type, a missing or unknown property —
/// are left to the tool's decoding, which says what it expected.
///
/// # The work of a check is bounded
///
/// A `pattern` without lookaround or backreferences (or whose only lookarounds are lookaheads
/// at its start, like `^(?=.*\d).{8,}$`) is matched by the linear-time `regex` engine, on
/// strings of any length. Any other is matched by a backtracking engine, whose work can grow
/// exponentially with the string, within bounds: a match gives up after 16,384 backtracking
/// steps, a string longer than 4,096 bytes is not matched, and the matches of one check cost at
/// most 32,768 bytes (each string counts its length, at least 64) and 100 ms, each string
/// matched against a pattern once however often the schema asks. A value these bounds keep
/// from being checked is refused, never passed: an argument error says it could not be checked
/// against the pattern, and why (``argument `name`: the value could not be checked against the
/// pattern "^((?!\\d)\\w+\\s?)+$": matching gave up after 16384 backtracking steps``). So a
/// check spends at most 100 ms, and the one match then running, on such patterns. A `#[tool]`
/// and an MCP client's tools make a check that may take more than a few such matches on the
/// blocking pool, inside the call's future, where the call's time limit covers it. `patternProperties` is
/// matched by the linear-time engine only: a schema whose `patternProperties` needs lookaround
/// or backreferences is refused by [`new`](Self::new).
pub struct ArgumentValidator {
    validator: jsonschema::Validator,
    /// Report violations of the shape too: the tool has no types of its own (an MCP server's).
    complete: bool,
    /// How many `pattern`s need the backtracking engine.
    backtracking: usize,
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
/// type, a `patternProperties` regex that needs lookaround or backreferences.
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
        Self::build(schema, false, |options| {
            options.should_validate_formats(false)
        })
        .map(Some)
    }

    /// A validator that reports every violation, the shape's too, for a tool whose schema is
    /// all there is to check its arguments (an MCP server's tool). A schema from elsewhere:
    /// whatever the compiler makes of it must not end the program.
    #[cfg(feature = "mcp-client")]
    pub(crate) fn complete(schema: &Value) -> Result<Self, ValidatorError> {
        Self::build(schema, true, |options| options)
    }

    fn build(
        schema: &Value,
        complete: bool,
        configure: impl FnOnce(jsonschema::ValidationOptions<'_>) -> jsonschema::ValidationOptions<'_>,
    ) -> Result<Self, ValidatorError> {
        let backtracking = Arc::new(AtomicUsize::new(0));
        let options = pattern::bounded(configure(jsonschema::options()), Arc::clone(&backtracking));
        compile(|| options.build(schema)).map(|validator| Self {
            validator,
            complete,
            backtracking: backtracking.load(Ordering::Relaxed),
        })
    }

    /// Checks `arguments`: an argument error naming where each violation is and what the
    /// schema asks (the first few), or `Ok` when none is the validator's to report. A value
    /// that could not be checked against a pattern is refused (see the bounds above).
    pub fn check(&self, arguments: &Value) -> Result<(), ArgumentError> {
        pattern::within_check(|| {
            if self.validator.is_valid(arguments) && pattern::first_unchecked().is_none() {
                return Ok(());
            }
            self.violations(arguments)
        })
    }

    /// Whether checking `arguments` may take more than a few matches against patterns that
    /// need backtracking, and so belongs on the blocking pool, where the call's time limit
    /// covers waiting for it. A few short strings, or a schema without such a pattern, are
    /// checked where the call is polled.
    pub(crate) fn is_costly(&self, arguments: &Value) -> bool {
        pattern::is_costly(arguments, self.backtracking)
    }

    /// [`check`](Self::check), on the blocking pool when [costly](Self::is_costly) (a panic
    /// in it goes on here); the arguments handed back.
    pub(crate) async fn check_owned(
        self: &Arc<Self>,
        arguments: Value,
    ) -> Result<Value, ArgumentError> {
        if !self.is_costly(&arguments) || tokio::runtime::Handle::try_current().is_err() {
            return self.check(&arguments).map(|()| arguments);
        }
        let validator = Arc::clone(self);
        super::blocking::on_pool(move || validator.check(&arguments).map(|()| arguments)).await
    }

    #[cold]
    fn violations(&self, arguments: &Value) -> Result<(), ArgumentError> {
        let mut found = Found::default();
        for error in self.validator.iter_errors(arguments) {
            found.collect(&error, arguments);
        }
        // a value that could not be checked is why the call is refused: it alone is reported;
        // one met where no violation is reported (under `not`, in a member of an `anyOf`) has
        // no path
        let unchecked = found.unchecked.into_iter().next().or_else(|| {
            pattern::first_unchecked().map(|(source, unchecked)| {
                let reason = unchecked.reason();
                (String::new(), render::unchecked(Some(&source), &reason))
            })
        });
        if let Some((path, message)) = unchecked {
            let error = ArgumentError::new(render::unchecked_violation(&path, &message));
            return Err(if path.is_empty() {
                error
            } else {
                error.at(path)
            });
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

/// The violations found, as (path, message): values that could not be checked against a
/// pattern, of constraints, and of the shape.
#[derive(Default)]
struct Found {
    unchecked: Vec<(String, String)>,
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
            ValidationErrorKind::Custom { keyword, message } if keyword == pattern::KEYWORD => {
                // this crate's `pattern`: its message is the pattern; the check knows whether
                // the value did not match or could not be checked
                match pattern::unchecked(message, value) {
                    Some(unchecked) => {
                        let reason = unchecked.reason();
                        self.unchecked
                            .push((path(), render::unchecked(Some(message), &reason)));
                        return;
                    }
                    None => render::no_match(value, message),
                }
            }
            ValidationErrorKind::BacktrackLimitExceeded { .. } => {
                self.unchecked
                    .push((path(), render::unchecked(None, &render::gave_up(None))));
                return;
            }
            ValidationErrorKind::RegexEngineFailure { .. } => {
                self.unchecked
                    .push((path(), render::unchecked(None, render::ENGINE_FAILED)));
                return;
            }
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
                    (found.shape.is_empty()
                        && !(found.constraints.is_empty() && found.unchecked.is_empty()))
                    .then_some(found)
                });
                match closest {
                    Some(found) => {
                        self.unchecked.extend(found.unchecked);
                        self.constraints.extend(found.constraints);
                    }
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

    /// A pattern whose match blows up: fancy-regex's default limit took 47 ms to give up on
    /// one 41-byte string, and `jsonschema` then validated the value again under each outcome.
    const EVIL: &str = "^((?!\\d)\\w+\\s?)+$";

    fn evil_string() -> String {
        format!("{}!", "a".repeat(40))
    }

    /// A distinct word of letters for each `i`: `g`..`v` for its hex digits.
    fn word(i: usize) -> String {
        format!("{i:x}")
            .chars()
            .map(|c| char::from(b'g' + c.to_digit(16).unwrap() as u8))
            .collect()
    }

    fn validator(schema: Value) -> ArgumentValidator {
        ArgumentValidator::new(&schema).unwrap().unwrap()
    }

    #[test]
    fn a_value_that_could_not_be_checked_is_refused_saying_so() {
        let validator = validator(json!({
            "type": "object",
            "properties": {"name": {"type": "string", "pattern": EVIL}},
        }));
        let error = validator
            .check(&json!({"name": evil_string()}))
            .unwrap_err();
        assert_eq!(
            error.message(),
            "argument `name`: the value could not be checked against the pattern \
             \"^((?!\\\\d)\\\\w+\\\\s?)+$\": matching gave up after 16384 backtracking steps"
        );
        assert_eq!(error.path(), Some("name"));
        // what it can match is checked as any pattern is
        assert!(validator.check(&json!({"name": "two words"})).is_ok());
        assert_eq!(
            validator
                .check(&json!({"name": "4ever"}))
                .unwrap_err()
                .message(),
            "argument `name`: \"4ever\" does not match the pattern \"^((?!\\\\d)\\\\w+\\\\s?)+$\""
        );
    }

    #[test]
    fn a_check_that_cannot_finish_is_refused_wherever_the_pattern_is() {
        let evil = evil_string();
        let cases = [
            // under `not`, giving up would pass the value
            (json!({"not": {"pattern": EVIL}}), json!(evil)),
            (json!({"items": {"pattern": EVIL}}), json!(["ok", evil])),
            (json!({"$ref": "#/$defs/p"}), json!(evil)),
            // one member would take it either way
            (
                json!({"anyOf": [{"pattern": EVIL}, {"maxLength": 100}]}),
                json!(evil),
            ),
            (
                json!({"propertyNames": {"pattern": EVIL}}),
                json!({evil.clone(): 1}),
            ),
        ];
        for (property, value) in cases {
            let validator = validator(json!({
                "type": "object",
                "$defs": {"p": {"pattern": EVIL}},
                "properties": {"v": property},
            }));
            let error = validator.check(&json!({"v": value})).unwrap_err();
            assert!(
                error
                    .message()
                    .contains("could not be checked against the pattern"),
                "{property}: {}",
                error.message()
            );
        }
    }

    #[test]
    fn a_pattern_the_schema_repeats_is_matched_once_per_string() {
        // 40 references to the pattern and 400 strings: 16,000 matches asked, 400 made,
        // within the budget of 512
        let refs: Vec<Value> = (0..40).map(|_| json!({"$ref": "#/$defs/p"})).collect();
        let validator = validator(json!({
            "type": "object",
            "$defs": {"p": {"pattern": EVIL}},
            "properties": {"v": {"items": {"allOf": refs}}},
        }));
        let words: Vec<String> = (0..400).map(|i| format!("word {}", word(i))).collect();
        assert!(validator.check(&json!({"v": words})).is_ok());
    }

    #[test]
    fn many_strings_are_checked_within_the_budget_and_refused_past_it() {
        let validator = validator(json!({
            "type": "object",
            "properties": {"v": {"items": {"pattern": EVIL}}},
        }));
        // 2,000 distinct strings the engine gives up on: 98 s before the budget
        let strings: Vec<String> = (0..2000)
            .map(|i| format!("{}{}!", "a".repeat(40), word(i)))
            .collect();
        let error = validator.check(&json!({"v": strings})).unwrap_err();
        assert_eq!(
            error.message(),
            "argument `v[0]`: the value could not be checked against the pattern \
             \"^((?!\\\\d)\\\\w+\\\\s?)+$\": matching gave up after 16384 backtracking steps"
        );
        // 600 distinct short strings that match: past the budget after 512
        let words: Vec<String> = (0..600).map(|i| format!("ab {}", word(i))).collect();
        let error = validator.check(&json!({"v": words})).unwrap_err();
        assert_eq!(
            error.message(),
            "argument `v[512]`: the value could not be checked against the pattern \
             \"^((?!\\\\d)\\\\w+\\\\s?)+$\": one call may check at most 32768 bytes, in \
             100ms, against patterns with lookaround or backreferences"
        );
        assert_eq!(error.path(), Some("v[512]"));
        assert!(validator.is_costly(&json!({"v": vec!["a"; 8]})));
        assert!(!validator.is_costly(&json!({"v": vec!["a"; 2]})));
    }

    #[test]
    fn a_linear_pattern_is_not_limited() {
        // catastrophic on a backtracking engine; linear here, on any length
        let validator = validator(json!({
            "type": "object",
            "properties": {"v": {"items": {"pattern": "^(a+)+$"}}},
        }));
        let long = "a".repeat(100_000);
        let strings: Vec<String> = (0..2000).map(|_| format!("{}!", "a".repeat(40))).collect();
        assert!(validator.check(&json!({"v": [long]})).is_ok());
        assert!(
            validator
                .check(&json!({"v": strings}))
                .unwrap_err()
                .message()
                .contains("does not match the pattern")
        );
        assert!(!validator.is_costly(&json!({"v": vec!["a"; 1000]})));
    }

    #[test]
    fn pattern_properties_that_need_backtracking_are_refused() {
        let error = ArgumentValidator::new(&json!({
            "type": "object",
            "properties": {"v": {"patternProperties": {"^(?!x)": {"type": "string"}}}},
        }))
        .unwrap_err();
        assert!(error.reason().contains("^(?!x)"), "{}", error.reason());
        assert!(
            ArgumentValidator::new(&json!({
                "type": "object",
                "properties": {"v": {"patternProperties": {"^x-": {"maxLength": 3}}}},
            }))
            .unwrap()
            .is_some()
        );
    }

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
