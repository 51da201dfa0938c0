//! Schema dialects: the parameter schemas reticent generates, rewritten into the subset of JSON
//! Schema a model provider accepts, and what the agent does so that a tool decodes exactly what
//! the rewritten schema let the model send.
//!
//! Tools describe their parameters in standard JSON Schema (draft 2020-12, as schemars writes
//! it). Some providers accept only part of it: OpenAI's strict mode wants every object closed
//! and every property required, Gemini takes a subset of the OpenAPI 3.0 schema object without
//! references. A [`Model`](crate::Model) names the dialect it needs with
//! [`Model::schema_dialect`](crate::Model::schema_dialect), and [`AgentBuilder::build`]
//! converts every tool's schema once, so a schema the provider cannot take is refused when the
//! agent is built ([`BuildError::UnsupportedSchema`]), never in the middle of a run.
//!
//! ```
//! use reticent::SchemaDialect;
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {
//!         "city": {"type": "string", "description": "The city."},
//!         "days": {"type": ["integer", "null"], "format": "uint8", "minimum": 1, "maximum": 16}
//!     },
//!     "required": ["city"],
//!     "additionalProperties": false
//! });
//! assert_eq!(
//!     SchemaDialect::OpenAiStrict.convert(&schema)?,
//!     json!({
//!         "type": "object",
//!         "properties": {
//!             "city": {"type": "string", "description": "The city."},
//!             "days": {"type": ["integer", "null"], "minimum": 1, "maximum": 16}
//!         },
//!         "required": ["city", "days"],
//!         "additionalProperties": false
//!     })
//! );
//! assert_eq!(
//!     SchemaDialect::Gemini.convert(&schema)?,
//!     json!({
//!         "type": "object",
//!         "properties": {
//!             "city": {"type": "string", "description": "The city."},
//!             "days": {"type": "integer", "nullable": true, "minimum": 1, "maximum": 16}
//!         },
//!         "required": ["city"]
//!     })
//! );
//! # Ok::<(), reticent::model::SchemaError>(())
//! ```
//!
//! # Keywords
//!
//! A keyword the dialect enforces stays a keyword. One it cannot express but the model should
//! read moves into the `description` as `keyword: value`; the agent still enforces the
//! constraints among them (see [`ArgumentValidator`](crate::tool::ArgumentValidator)). A `format` a
//! Rust number type implies (`uint8`, `int64`, `double`) is dropped where the dialect lacks it,
//! never described: the range of an integer format of 32 bits or fewer is written as
//! `minimum`/`maximum` instead (keeping bounds already written when they are tighter), so the
//! description says only what the developer wrote.
//!
//! | keyword | OpenAI strict | Gemini |
//! |---|---|---|
//! | `minimum`, `maximum`, `pattern`, `minItems`, `maxItems` | kept | kept |
//! | `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf` | kept | description |
//! | `minLength`, `maxLength`, `minProperties`, `maxProperties` | description | kept |
//! | `uniqueItems` | description | description |
//! | `enum` | kept | kept when all strings, else description |
//! | `const` | kept | a string becomes a one-value `enum`; others description |
//! | `format` | `date-time`, `time`, `date`, `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uuid` kept | `int32`, `int64`, `float`, `double`, `date-time`, `enum` kept |
//! | `default` | description | kept |
//! | `examples` | description | description |
//! | `oneOf` | `anyOf` | `anyOf` |
//! | `$ref`, `$defs` | kept | inlined; recursion refused |
//!
//! Sources: OpenAI's "Supported schemas"
//! (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>) and
//! Gemini's `Schema` object (<https://ai.google.dev/api/caching#Schema>).
//!
//! # Accepting exactly what the tool decodes
//!
//! OpenAI's strict mode requires every property, so an optional one also accepts `null`. A
//! tool's decoding accepts `null` for an `Option<T>`, but not for a field that is optional only
//! through `#[serde(default)]`. The conversion records where it added a `null`, and the agent
//! removes such a `null` from the model's arguments (at the top level and nested, through
//! `$ref`s, `items` and `anyOf`) before the tool decodes them: the property is then absent, as
//! the original schema allows. A `null` the original schema accepted is left alone.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | [`SchemaDialect`], [`SchemaError`] |
//! | `walk.rs` | what the converters share: paths, subschemas, integer formats, notes |
//! | `openai.rs` | the conversion to OpenAI's strict mode |
//! | `gemini.rs` | the conversion to Gemini's subset |
//! | `normalise.rs` | removing the `null`s a conversion added from the model's arguments |
//!
//! [`AgentBuilder::build`]: crate::AgentBuilder::build
//! [`BuildError::UnsupportedSchema`]: crate::BuildError::UnsupportedSchema

use std::fmt;

use serde_json::Value;

use crate::tool::ToolDefinition;

mod gemini;
mod normalise;
mod openai;
mod walk;

pub(crate) use normalise::Normaliser;
pub(crate) use walk::integer_format_range;

/// The flavor of JSON Schema a model provider accepts for tool parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SchemaDialect {
    /// JSON Schema as reticent generates it, unchanged. Anthropic, and OpenAI-compatible
    /// servers without strict mode, take it as it is.
    #[default]
    Standard,
    /// OpenAI's strict mode (structured outputs for function calling): every object has
    /// `additionalProperties: false`, every property is listed in `required` and optional ones
    /// also accept `null` (which the agent removes again before the tool decodes them), `oneOf`
    /// becomes `anyOf`; `pattern`, `minimum`, `maximum`, `exclusiveMinimum`,
    /// `exclusiveMaximum`, `multipleOf`, `minItems`, `maxItems` and the string formats strict
    /// mode knows stay keywords, and keywords it does not take (`minLength`, `maxLength`,
    /// `uniqueItems`, `default`, ...) move into the `description`. Free-form maps, values of
    /// any type and tuples are refused.
    OpenAiStrict,
    /// Gemini's function declarations (a subset of the OpenAPI 3.0 schema object): `$ref`s are
    /// inlined and recursive types refused, unions with `null` become `nullable: true`, `oneOf`
    /// becomes `anyOf`, `additionalProperties: false` is dropped, and keywords Gemini does not
    /// know (`exclusiveMinimum`, `multipleOf`, `uniqueItems`, string formats other than
    /// `date-time` and `enum`, non-string enums, ...) move into the `description`. Free-form
    /// maps, values of any type and tuples are refused.
    Gemini,
}

/// A schema converted for the agent: what the model is shown, and the normaliser for the
/// `null`s the conversion added, if it added any.
pub(crate) struct Prepared {
    pub(crate) schema: Value,
    pub(crate) normaliser: Option<Normaliser>,
}

impl SchemaDialect {
    /// The dialect's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Standard => "standard JSON Schema",
            Self::OpenAiStrict => "OpenAI strict mode",
            Self::Gemini => "Gemini",
        }
    }

    /// Converts a parameter schema (whose root is an object) to this dialect.
    ///
    /// Converting a schema that is already in the dialect returns it unchanged.
    pub fn convert(self, schema: &Value) -> Result<Value, SchemaError> {
        self.prepare(schema).map(|prepared| prepared.schema)
    }

    /// Converts a parameter schema for the agent: the schema, and the normaliser the agent
    /// applies to the model's arguments before the tool decodes them.
    pub(crate) fn prepare(self, schema: &Value) -> Result<Prepared, SchemaError> {
        let (schema, normaliser) = match self {
            Self::Standard => (schema.clone(), None),
            Self::OpenAiStrict => openai::convert(schema)?,
            Self::Gemini => (gemini::convert(schema)?, None),
        };
        Ok(Prepared { schema, normaliser })
    }

    /// The same tool definition with its parameters converted to this dialect.
    pub fn convert_definition(
        self,
        definition: &ToolDefinition,
    ) -> Result<ToolDefinition, SchemaError> {
        Ok(definition
            .clone()
            .with_parameters(self.convert(&definition.parameters)?))
    }
}

impl fmt::Display for SchemaDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a schema could not be converted to a [`SchemaDialect`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    dialect: SchemaDialect,
    path: String,
    reason: String,
}

impl SchemaError {
    /// The dialect the schema was being converted to.
    pub fn dialect(&self) -> SchemaDialect {
        self.dialect
    }

    /// Where in the schema, as a JSON pointer (`/properties/tags`); empty for the root.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What could not be expressed.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() {
            "the root".to_owned()
        } else {
            format!("`{}`", self.path)
        };
        write!(f, "{} cannot express {at}: {}", self.dialect, self.reason)
    }
}

impl std::error::Error for SchemaError {}
