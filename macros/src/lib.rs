//! The procedural macros of [reticent](https://docs.rs/reticent): `#[tool]`, `#[tools]` and
//! `#[derive(Disclose)]`. Use them through the `reticent` crate, which documents them.
//!
//! Each macro has a folder (`tool/`, `tools/`, `disclose/`) and follows the same three steps:
//! parse the input into a model that borrows the user's tokens (`attr.rs`, `ast.rs`), check
//! it (`valid.rs`), collecting every mistake with a span at the offending tokens (`ctxt.rs`),
//! then expand it (`expand.rs`). When there are mistakes the original item is still emitted
//! beside the errors, with stand-ins for what the macro generates (`fallback.rs`), so one
//! mistake does not cascade. `#[tools]` reuses the phases of `#[tool]` for its methods.

use proc_macro::TokenStream;

mod ctxt;
mod disclose;
mod tool;
mod tools;

/// Turns a function into a tool: the function stays callable as written, and a unit struct
/// named in PascalCase after it (`lookup_order` → `LookupOrder`, same visibility) implements
/// `reticent::Tool`.
///
/// ```text
/// /// Look up an order by id.            <- the tool's description (required)
/// #[reticent::tool(read_only, timeout = "5s")]
/// async fn lookup_order(
///     /// The order id, like "ORD-1042".  <- the parameter's schema description
///     order_id: String,
///     with_items: Option<bool>,           <- optional: absent or null
///     cx: &ToolContext,                   <- injected, not in the schema
/// ) -> Result<Order, OrderError> { .. }
/// ```
///
/// Options:
///
/// | option | meaning |
/// |---|---|
/// | `name = ".."` | the tool's name (default: the function's), `^[a-zA-Z0-9_-]{1,64}$` |
/// | `title = ".."` | a human-readable title (`ToolDefinition::title`), for user interfaces such as MCP clients' tool lists |
/// | `description = ".."` | the description, instead of the doc comment |
/// | `read_only`, `destructive`, `idempotent`, `open_world` | the annotations (MCP hints) |
/// | `untrusted_output` | the output comes from outside the system and taints the run (`open_world` tools are untrusted unless `untrusted_output = false`) |
/// | `needs_approval` | the agent stops for a person's approval before running a call of this tool (`Tool::needs_approval`) |
/// | `task` | an MCP server answers a call with a task the client follows (`ToolDefinition::task`), for tools that run long |
/// | `output_schema = false` | no output schema in the definition (see below) |
/// | `timeout = "5s"` | the tool's own time limit (`ms`, `s`, `m`, `h`, e.g. `1m30s`) |
/// | `max_output = "16KiB"` | the tool's output budget (`Tool::max_output`): the most of a successful output the model is shown, in bytes (`4096`, `16KiB`, `1MiB`, `16KB`); the agent's `max_tool_output` (64 KiB) when left out |
///
/// Each option may be given once; flags take no value or `= true`/`= false`.
///
/// # Parameters
///
/// The parameters (all but a `ToolContext`) are decoded and described as the fields of a
/// struct that derives `serde::Deserialize` (the decoder) and `schemars::JsonSchema` (the
/// parameter schema) with `#[serde(deny_unknown_fields)]` would be: the schema and the decoder
/// agree, and an argument the tool does not take is refused by both. A parameter's doc comment
/// is its description. Parameters with attributes become the fields of such a hidden struct,
/// so `#[serde(..)]` and `#[schemars(..)]` on a parameter mean what they mean on a struct
/// field (parameters without them are decoded and described by `reticent` from their types,
/// with code compiled once rather than derived per tool):
///
/// ```text
/// #[reticent::tool]
/// fn search(
///     /// What to look for.                         <- the description
///     #[serde(rename = "q", alias = "query")]       <- read as `q` (or `query`)
///     text: String,
///     #[serde(default = "ten")]                     <- optional; `ten()` when absent
///     #[schemars(range(min = 1, max = 50))]         <- `minimum`/`maximum` in the schema
///     per_page: u32,
///     #[serde(default, deserialize_with = "duration")]
///     #[schemars(with = "Option<String>")]          <- the schema of what is sent
///     wait: Option<Duration>,
/// ) -> Vec<Hit> { .. }
/// ```
///
/// `Option<T>` parameters and parameters with a `#[serde(default)]` are optional (and `Option`
/// decodes from null too). `#[schemars]` constraints (`range`, `length`, `regex`) describe the
/// parameter in the schema, as on a struct field; serde's derive does not check them. Refused,
/// each with an error at its tokens: two arguments under one name (`rename`, `alias`);
/// `#[schemars(rename | default | skip | skip_deserializing | flatten)]`, which would change the
/// schema and not the decoder (write `#[serde(..)]`, which changes both); `#[serde]` and
/// `#[schemars]` on the `ToolContext` parameter.
///
/// Decoding errors the model is shown name the argument, and the path into it where there is
/// one: ``argument `address.zip`: invalid type: string "x", expected u32``. Errors written by
/// your own decoding code (`deserialize_with`, `try_from`, a `Deserialize` impl) are argument
/// errors, shown to the model in full: keep I/O and server state out of a parameter's
/// decoding, and do the lookups in the tool's body.
///
/// # Output schema
///
/// When the output type (the `T` of a `Result<T, E>`) implements `schemars::JsonSchema`,
/// decided when the crate compiles, the definition carries its schema as
/// `ToolDefinition::output_schema`; a tool that returns nothing has none, and
/// `output_schema = false` leaves it out. Its root is an object, as MCP requires: an output
/// whose own schema is not an object (a number, a list, an enum) is wrapped as
/// `{"type": "object", "properties": {"result": SCHEMA}, "required": ["result"],
/// "x-reticent-wrap-result": true}`, and an MCP server sends such output as structured content
/// `{"result": OUTPUT}` (`ToolDefinition::wraps_output`).
///
/// Parameters must be `Deserialize + JsonSchema` and own their data; the output must be
/// `Serialize`, and neither a `Result` nor an error type; the error type must be
/// `reticent::ArgumentError`, `reticent::Failure`, a `#[derive(Disclose)]` type, any
/// `std::error::Error + Send + Sync + 'static`, or (with `reticent`'s features of those names)
/// `anyhow::Error` or `eyre::Report`. Whether the function returns a `Result` is decided from
/// its type, not its spelling: aliases and renamed imports of `Result` are the same `Result`.
/// Each rule is checked at compile time, with the error at your token (the traits it names are
/// in `reticent::rules`). Sync functions are tools too.
///
/// A function that does not return a `Result` is a tool too: it cannot fail, so what it returns
/// is always its output (`fn add(a: i64, b: i64) -> i64`), and one that returns nothing answers
/// `null`. Panics are still caught, and a time limit still applies.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::tool(args.into(), input.into()).into()
}

/// Turns the `#[tool]` methods of an inherent `impl` block into a `reticent::Toolbox`: the
/// tools share the value, which the agent holds in an `Arc`.
///
/// ```text
/// struct Shop { db: Db }
///
/// #[reticent::tools]
/// impl Shop {
///     /// Ship an order.
///     #[tool(destructive)]
///     async fn ship_order(&self, order_id: String) -> Result<Shipment, ShipError> { .. }
/// }
///
/// let agent = Agent::builder(model).toolbox(Arc::new(shop)).build()?;
/// ```
///
/// Tool methods take `&self` (or no receiver); `#[tool]` takes the same options as on a free
/// function. Tool names must be unique within the block. A type has one `#[tools]` block: it
/// implements `Toolbox` once, and a second block is refused as a conflicting `Toolbox` impl,
/// reported at both blocks; put every tool method of the type in one block (other methods
/// may live in other `impl` blocks).
#[proc_macro_attribute]
pub fn tools(args: TokenStream, input: TokenStream) -> TokenStream {
    tools::tools(args.into(), input.into()).into()
}

/// Derives `reticent::Disclose`: how each variant of an error type is shown to the model,
/// decided at compile time. The type must also be a `std::error::Error + Send + Sync +
/// 'static` (derive `thiserror::Error` beside it).
///
/// ```text
/// #[derive(Debug, thiserror::Error, reticent::Disclose)]
/// enum OrderError {
///     #[error("no order {0}; order ids look like ORD-1042")]
///     #[disclose(argument)]          // the model's fault: it sees this message
///     NotFound(String),
///     #[error("database unavailable: {0}")]
///     #[disclose(transient)]         // `OrderError::Database (transient: retrying later may succeed)`
///     Database(#[from] DbError),
/// }
/// ```
///
/// Attributes, on the type (for every variant) or on a variant:
///
/// | attribute | the model sees |
/// |---|---|
/// | (none) | `Tool 'NAME' failed with Type::Variant` (a struct: `Type`) |
/// | `#[disclose(argument)]` | the `Display`, as an argument error; such a variant may not carry a source error |
/// | `#[disclose(kind = "..")]` | that kind instead of the type's name |
/// | `#[disclose(transient)]`, `#[disclose(permanent)]` | a fixed retry hint after the kind |
/// | `#[disclose(fatal)]` | the run ends with `AgentError::ToolFailed`, whatever the failure mode |
///
/// What an argument error may hold. Its message is shown to the model in full, so it must be
/// written from the model's own input. The fields of a `#[disclose(argument)]` variant (or of
/// a type that is `#[disclose(argument)]` as a whole) are checked at compile time, each with
/// the error at the field's type:
///
/// - no source error: no `#[from]`, `#[source]`, field named `source`, or
///   `#[error(transparent)]`;
/// - no field of an error type, whatever it is named and however its type is written (an
///   alias counts): any `std::error::Error`, and any type that derefs to an error or `AsRef`s
///   a `dyn Error` — `Box<dyn Error>` with or without `Send` and `Sync`, `anyhow::Error` and
///   `eyre::Report`, whatever `reticent`'s features. Its `Display` or `Debug` would put that
///   error's message (a connection string, a path, SQL) into the model's text;
/// - no field whose type depends on a type parameter of the error type (`Value(T)`,
///   `Vec<T>`): the derive cannot check that `T` is never an error type. Use a concrete type
///   such as `String`; a generic parameter may still be held by a variant that is not an
///   argument error.
///
/// To keep the error that caused an argument error, give it its own variant that is not
/// `#[disclose(argument)]`, as its source: `Database(#[source] DbError)`. The model then sees
/// that variant by its kind only, and the caller still has the whole error.
#[proc_macro_derive(Disclose, attributes(disclose))]
pub fn derive_disclose(input: TokenStream) -> TokenStream {
    disclose::derive(&syn::parse_macro_input!(input as syn::DeriveInput)).into()
}
