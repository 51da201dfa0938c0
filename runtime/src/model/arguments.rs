//! [`Arguments`]: a tool call's arguments, as the JSON text a provider handed over or as a
//! JSON value, with a value view made only when something asks for it.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The arguments of a tool call.
///
/// Providers hand over the model's arguments as the JSON text the model wrote; the agent runs
/// the call straight from that text ([`Tool::call_text`](crate::Tool::call_text)), without
/// building a [`serde_json::Value`] first. Everything else — the transcript, events, repeat
/// detection, the caller's records — sees them as a `Value`, through [`Arguments::value`] or
/// `Deref`, parsed the first time it is asked for.
///
/// Text that is not JSON stays text: its value view is a JSON string holding the text, and a
/// call with such arguments is answered as an argument error the model can correct. For the
/// same reason a JSON *string* given as a value (`json!("{\"a\": 1")`) is read as such text.
///
/// ```
/// use reticent::model::Arguments;
/// use serde_json::json;
///
/// let sent = Arguments::from_text(r#"{"order_id": "ORD-1042"}"#);
/// assert_eq!(sent.text(), Some(r#"{"order_id": "ORD-1042"}"#));
/// assert_eq!(sent["order_id"], "ORD-1042"); // the value view
/// assert_eq!(sent, json!({"order_id": "ORD-1042"}));
///
/// let broken = Arguments::from_text(r#"{"order_id": "#);
/// assert!(!broken.is_json());
/// assert_eq!(*broken, json!(r#"{"order_id": "#));
/// ```
#[derive(Clone)]
pub struct Arguments(Repr);

#[derive(Clone)]
enum Repr {
    /// The text the model wrote, and its value once asked for.
    Text {
        text: Box<str>,
        /// The value view, and whether the text was JSON.
        view: OnceLock<(Value, bool)>,
    },
    /// A value (from a model that builds values, or a recording).
    Value(Value),
}

impl Arguments {
    /// Arguments as the JSON text the model wrote.
    pub fn from_text(text: impl Into<Box<str>>) -> Self {
        Self(Repr::Text {
            text: text.into(),
            view: OnceLock::new(),
        })
    }

    /// No arguments: `{}`.
    pub fn empty() -> Self {
        Self(Repr::Value(Value::Object(serde_json::Map::new())))
    }

    /// The JSON text the model wrote, when the arguments arrived as text.
    pub fn text(&self) -> Option<&str> {
        match &self.0 {
            Repr::Text { text, .. } => Some(text),
            Repr::Value(_) => None,
        }
    }

    /// Whether the arguments are JSON (text that parses, or a value).
    pub fn is_json(&self) -> bool {
        match &self.0 {
            Repr::Text { text, view } => view_of(text, view).1,
            Repr::Value(_) => true,
        }
    }

    /// The arguments as a JSON value, parsed from the text the first time it is asked for;
    /// text that is not JSON is a JSON string holding it.
    pub fn value(&self) -> &Value {
        match &self.0 {
            Repr::Text { text, view } => &view_of(text, view).0,
            Repr::Value(value) => value,
        }
    }

    /// The arguments as JSON text to send back to a provider: the model's own text, or the
    /// value written out.
    pub fn to_json_text(&self) -> Cow<'_, str> {
        match &self.0 {
            Repr::Text { text, .. } => Cow::Borrowed(text),
            Repr::Value(Value::String(text)) => Cow::Borrowed(text),
            Repr::Value(value) => Cow::Owned(value.to_string()),
        }
    }

    /// The arguments as a JSON value, taken (see [`Arguments::value`]).
    pub fn into_value(self) -> Value {
        match self.0 {
            Repr::Value(value) => value,
            Repr::Text { text, view } => match view.into_inner() {
                Some((value, _)) => value,
                None => view_of(&text, &OnceLock::new()).0.clone(),
            },
        }
    }

    /// The value, when the arguments are a value (not text) that can be changed in place.
    pub(crate) fn value_mut(&mut self) -> Option<&mut Value> {
        match &mut self.0 {
            Repr::Value(value) => Some(value),
            Repr::Text { .. } => None,
        }
    }
}

/// The value view of `text`, made once.
fn view_of<'a>(text: &str, view: &'a OnceLock<(Value, bool)>) -> &'a (Value, bool) {
    view.get_or_init(|| match serde_json::from_str(text) {
        Ok(value) => (value, true),
        Err(_) => (Value::String(text.to_owned()), false),
    })
}

impl Deref for Arguments {
    type Target = Value;

    /// The value view (see [`Arguments::value`]).
    fn deref(&self) -> &Value {
        self.value()
    }
}

impl Default for Arguments {
    fn default() -> Self {
        Self::empty()
    }
}

impl From<Value> for Arguments {
    /// A value; a JSON string is read as the text of the arguments (see the type's docs).
    fn from(value: Value) -> Self {
        match value {
            Value::String(text) => Self::from_text(text),
            value => Self(Repr::Value(value)),
        }
    }
}

impl From<serde_json::Map<String, Value>> for Arguments {
    fn from(map: serde_json::Map<String, Value>) -> Self {
        Self(Repr::Value(Value::Object(map)))
    }
}

/// Arguments are equal when their values are: the same arguments in another key order, or as
/// text and as a value, are the same arguments.
impl PartialEq for Arguments {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Repr::Text { text: a, .. }, Repr::Text { text: b, .. }) if a == b => true,
            _ => self.value() == other.value(),
        }
    }
}

impl PartialEq<Value> for Arguments {
    fn eq(&self, other: &Value) -> bool {
        self.value() == other
    }
}

impl PartialEq<Arguments> for Value {
    fn eq(&self, other: &Arguments) -> bool {
        self == other.value()
    }
}

impl fmt::Debug for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Text { text, .. } => f.debug_tuple("Arguments").field(text).finish(),
            Repr::Value(value) => f.debug_tuple("Arguments").field(value).finish(),
        }
    }
}

/// The JSON text: the model's own text, or the value written out.
impl fmt::Display for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json_text())
    }
}

/// As the value view: a JSON object (or a string holding text that was not JSON).
impl Serialize for Arguments {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Arguments {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Arguments;

    #[test]
    fn text_and_value_views_agree() {
        let text = Arguments::from_text(r#"{"b": 1, "a": [true]}"#);
        let value = Arguments::from(json!({"a": [true], "b": 1}));
        assert_eq!(text, value);
        assert!(text.is_json());
        assert_eq!(text.text(), Some(r#"{"b": 1, "a": [true]}"#));
        assert_eq!(value.text(), None);
        assert_eq!(text.to_json_text(), r#"{"b": 1, "a": [true]}"#);
        assert_eq!(
            serde_json::to_value(&text).unwrap(),
            json!({"a": [true], "b": 1})
        );
    }

    #[test]
    fn text_that_is_not_json_stays_text() {
        let broken = Arguments::from_text("{\"a\": ");
        assert!(!broken.is_json());
        assert_eq!(*broken, json!("{\"a\": "));
        let json = serde_json::to_string(&broken).unwrap();
        let back: Arguments = serde_json::from_str(&json).unwrap();
        assert_eq!(back, broken);
        assert_eq!(back.text(), Some("{\"a\": "));
        // a string given as a value is that text
        assert_eq!(Arguments::from(json!("{\"a\": ")).text(), Some("{\"a\": "));
    }
}
