//! What the model sees for an error value of your own type: [`model_sees!`] and
//! [`assert_model_sees!`].
//!
//! A tool's error is classified by its type where the tool is compiled, by the call the
//! `#[tool]` wrapper makes: the ranks of `error/classify.rs`, picked by method resolution on
//! the concrete type. A generic function cannot make that choice, so these are macros: they
//! make the same call on your error, at your call site, and hand the result to
//! [`ToolError::model_text`](crate::ToolError::model_text), the one place that writes what the
//! model is told.

use crate::error::ToolError;
use crate::tool::Tool;

/// The text the model is shown for a failure of `tool`, classified as `error`.
#[doc(hidden)]
pub fn __shown<T: Tool + ?Sized>(
    tool: &T,
    error: ToolError,
    include_error_message: bool,
) -> String {
    error.model_text(&tool.definition().name, include_error_message)
}

/// Panics unless `shown` is `expected`.
#[doc(hidden)]
#[track_caller]
pub fn __assert_shown(shown: &str, expected: &str) {
    assert!(
        shown == expected,
        "the model is shown a different text for this error\n  expected: {expected}\n     shown: {shown}"
    );
}

/// The text the model is shown when `tool` fails with `error`: the error is classified as a
/// `#[tool]` wrapper classifies its function's error (by its type, when the crate compiles)
/// and written as the agent and the MCP server write it.
///
/// `include_error_message = true` shows what an agent built with
/// `ToolFailureOptions::include_error_message` shows.
///
/// ```
/// use reticent::Disclose;
///
/// #[derive(Debug, thiserror::Error, Disclose)]
/// enum OrderError {
///     #[error("no order {0}; order ids look like ORD-1042")]
///     #[disclose(argument)]
///     NotFound(String),
///     #[error("database unavailable: {0}")]
///     Database(String),
/// }
///
/// /// Look up an order by id.
/// #[reticent::tool]
/// fn lookup_order(
///     /// The order id.
///     order_id: String,
/// ) -> Result<String, OrderError> {
///     Err(OrderError::NotFound(order_id))
/// }
///
/// let db = OrderError::Database("postgres://admin:hunter2@db".into());
/// assert_eq!(
///     reticent::testing::model_sees!(&LookupOrder, db),
///     "Tool 'lookup_order' failed with OrderError::Database"
/// );
/// let db = OrderError::Database("postgres://admin:hunter2@db".into());
/// assert_eq!(
///     reticent::testing::model_sees!(&LookupOrder, db, include_error_message = true),
///     "Tool 'lookup_order' failed with OrderError::Database: database unavailable: postgres://admin:hunter2@db"
/// );
/// ```
///
/// Pass the error type the tool returns: the text depends on the type (and, for
/// `#[derive(Disclose)]` types, the variant), so a value of another type says nothing about
/// the tool.
#[doc(hidden)]
#[macro_export]
macro_rules! __testing_model_sees {
    ($tool:expr, $error:expr $(,)?) => {
        $crate::testing::model_sees!($tool, $error, include_error_message = false)
    };
    ($tool:expr, $error:expr, include_error_message = $include:expr $(,)?) => {{
        #[allow(unused_imports)]
        use $crate::__private::{
            ClassifiedKind as _, DiscloseKind as _, ErrorKind as _, NotAnErrorKind as _,
        };
        let __error = $error;
        let __classified: $crate::ToolError = (&&&&$crate::__private::Classify::new(&__error))
            .reticent_kind()
            .classify(::std::boxed::Box::new(__error));
        $crate::testing::__shown($tool, __classified, $include)
    }};
}

/// Asserts the text the model is shown when `tool` fails with `error` (see [`model_sees!`](crate::testing::model_sees));
/// the panic message has both texts.
///
/// ```
/// #[derive(Debug, thiserror::Error)]
/// #[error("gateway returned 503 via postgres://pay:s3cr3t@10.0.0.7/pay")]
/// struct GatewayError;
///
/// /// Charge the customer's card.
/// #[reticent::tool]
/// async fn charge_card(amount_cents: u64) -> Result<String, GatewayError> {
///     let _ = amount_cents;
///     Err(GatewayError)
/// }
///
/// reticent::testing::assert_model_sees!(
///     &ChargeCard,
///     GatewayError,
///     "Tool 'charge_card' failed with GatewayError"
/// );
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __testing_assert_model_sees {
    ($tool:expr, $error:expr, $expected:expr $(,)?) => {
        $crate::testing::__assert_shown(
            &$crate::testing::model_sees!($tool, $error),
            ::core::convert::AsRef::<str>::as_ref(&$expected),
        )
    };
    ($tool:expr, $error:expr, include_error_message = $include:expr, $expected:expr $(,)?) => {
        $crate::testing::__assert_shown(
            &$crate::testing::model_sees!($tool, $error, include_error_message = $include),
            ::core::convert::AsRef::<str>::as_ref(&$expected),
        )
    };
}
