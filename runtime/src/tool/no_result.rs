//! Encoding a tool's output with every `Result` in it refused, at any depth.
//!
//! serde writes `Result<T, E>` as the enum `Result` with the variants `Ok` and `Err`
//! (`{"Err": {..}}` in JSON): an error that derives `Serialize`, put anywhere in an output
//! (`Vec<Result<T, E>>`, a struct field), would reach the model as a successful output, with
//! whatever its fields hold. [`to_value`] serializes through a serializer that wraps
//! `serde_json`'s and refuses that enum wherever it appears, before any of its content is
//! written; the refusal carries no part of the value.
//!
//! A type written by hand that serializes itself as an enum named `Result` with a variant
//! `Ok` or `Err` is refused too. A `Result` flattened into a struct with `#[serde(flatten)]` is
//! written by serde as a plain map entry (`"Err": {..}`) and cannot be told apart; so is a
//! `Serialize` impl written to hide one.
//!
//! Over 400 lines only with its tests (a `Serializer` that refuses one shape must be shown to
//! let every other shape through); most of the rest is the trait's required methods.

use std::cell::Cell;
use std::fmt::Display;

use serde::ser::{self, Error as _, Serialize, Serializer};
use serde_json::Value;

/// Serializes `value` to JSON as `serde_json::to_value` does, refusing every `Result` in it.
/// `Err(None)` when the value holds a `Result`; `Err(Some(e))` when serializing failed
/// otherwise.
pub(super) fn to_value<T: Serialize + ?Sized>(
    value: &T,
) -> Result<Value, Option<serde_json::Error>> {
    let refused = Cell::new(false);
    let result = value.serialize(Guard {
        inner: serde_json::value::Serializer,
        refused: &refused,
    });
    // A `Serialize` impl could swallow the refusal and go on: the flag still says so.
    if refused.get() {
        return Err(None);
    }
    result.map_err(Some)
}

/// Writes `value` as compact JSON text, as `serde_json::to_string` does, refusing every
/// `Result` in it; the errors are [`to_value`]'s.
pub(super) fn to_text<T: Serialize + ?Sized>(
    value: &T,
) -> Result<String, Option<serde_json::Error>> {
    let refused = Cell::new(false);
    let result = serde_json::to_string(&Guarded {
        value,
        refused: &refused,
    });
    if refused.get() {
        return Err(None);
    }
    result.map_err(Some)
}

/// The message of the error a refused `Result` makes `serde_json` return; never seen, as
/// [`to_value`] reports the refusal itself.
const REFUSED: &str = "a `Result` cannot be part of a tool's output";

/// Whether serde's `Result` is what is being serialized.
fn is_result(name: &str, variant: &str) -> bool {
    name == "Result" && matches!(variant, "Ok" | "Err")
}

/// A serializer that forwards to `inner`, refusing serde's `Result`.
struct Guard<'r, S> {
    inner: S,
    refused: &'r Cell<bool>,
}

impl<S: Serializer> Guard<'_, S> {
    fn refuse(self) -> S::Error {
        self.refused.set(true);
        S::Error::custom(REFUSED)
    }
}

/// A value to serialize with the guard around the serializer it is given.
struct Guarded<'a, 'r, T: ?Sized> {
    value: &'a T,
    refused: &'r Cell<bool>,
}

impl<T: Serialize + ?Sized> Serialize for Guarded<'_, '_, T> {
    #[inline]
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(Guard {
            inner: serializer,
            refused: self.refused,
        })
    }
}

/// A compound serializer (sequence, map, struct ...) whose elements are serialized with the
/// guard.
struct Compound<'r, C> {
    inner: C,
    refused: &'r Cell<bool>,
}

impl<'r, C> Compound<'r, C> {
    #[inline]
    fn guard<'a, T: ?Sized>(&self, value: &'a T) -> Guarded<'a, 'r, T> {
        Guarded {
            value,
            refused: self.refused,
        }
    }
}

macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            #[inline]
            fn $method(self, $($arg: $ty),*) -> Result<S::Ok, S::Error> {
                self.inner.$method($($arg),*)
            }
        )*
    };
}

impl<'r, S: Serializer> Serializer for Guard<'r, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Compound<'r, S::SerializeSeq>;
    type SerializeTuple = Compound<'r, S::SerializeTuple>;
    type SerializeTupleStruct = Compound<'r, S::SerializeTupleStruct>;
    type SerializeTupleVariant = Compound<'r, S::SerializeTupleVariant>;
    type SerializeMap = Compound<'r, S::SerializeMap>;
    type SerializeStruct = Compound<'r, S::SerializeStruct>;
    type SerializeStructVariant = Compound<'r, S::SerializeStructVariant>;

    forward! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_i128(v: i128);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_u64(v: u64);
        serialize_u128(v: u128);
        serialize_f32(v: f32);
        serialize_f64(v: f64);
        serialize_char(v: char);
        serialize_str(v: &str);
        serialize_bytes(v: &[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
    }

    #[inline]
    fn serialize_unit_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
    ) -> Result<S::Ok, S::Error> {
        if is_result(name, variant) {
            return Err(self.refuse());
        }
        self.inner.serialize_unit_variant(name, index, variant)
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        let value = Guarded {
            value,
            refused: self.refused,
        };
        self.inner.serialize_some(&value)
    }

    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        let value = Guarded {
            value,
            refused: self.refused,
        };
        self.inner.serialize_newtype_struct(name, &value)
    }

    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        if is_result(name, variant) {
            return Err(self.refuse());
        }
        let value = Guarded {
            value,
            refused: self.refused,
        };
        self.inner
            .serialize_newtype_variant(name, index, variant, &value)
    }

    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Ok(Compound {
            inner: self.inner.serialize_seq(len)?,
            refused: self.refused,
        })
    }

    #[inline]
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        Ok(Compound {
            inner: self.inner.serialize_tuple(len)?,
            refused: self.refused,
        })
    }

    #[inline]
    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        Ok(Compound {
            inner: self.inner.serialize_tuple_struct(name, len)?,
            refused: self.refused,
        })
    }

    #[inline]
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        if is_result(name, variant) {
            return Err(self.refuse());
        }
        Ok(Compound {
            inner: self
                .inner
                .serialize_tuple_variant(name, index, variant, len)?,
            refused: self.refused,
        })
    }

    #[inline]
    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Ok(Compound {
            inner: self.inner.serialize_map(len)?,
            refused: self.refused,
        })
    }

    #[inline]
    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        Ok(Compound {
            inner: self.inner.serialize_struct(name, len)?,
            refused: self.refused,
        })
    }

    #[inline]
    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        if is_result(name, variant) {
            return Err(self.refuse());
        }
        Ok(Compound {
            inner: self
                .inner
                .serialize_struct_variant(name, index, variant, len)?,
            refused: self.refused,
        })
    }

    #[inline]
    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.inner.collect_str(value)
    }

    #[inline]
    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// The compound serializers whose elements have no key: each element is guarded.
macro_rules! guard_elements {
    ($($trait:ident::$method:ident),*) => {$(
        impl<C: ser::$trait> ser::$trait for Compound<'_, C> {
            type Ok = C::Ok;
            type Error = C::Error;

            #[inline]
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
                let value = self.guard(value);
                self.inner.$method(&value)
            }

            #[inline]
            fn end(self) -> Result<C::Ok, C::Error> {
                self.inner.end()
            }
        }
    )*};
}

guard_elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl<C: ser::SerializeMap> ser::SerializeMap for Compound<'_, C> {
    type Ok = C::Ok;
    type Error = C::Error;

    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), C::Error> {
        let key = self.guard(key);
        self.inner.serialize_key(&key)
    }

    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        let value = self.guard(value);
        self.inner.serialize_value(&value)
    }

    #[inline]
    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), C::Error> {
        let (key, value) = (self.guard(key), self.guard(value));
        self.inner.serialize_entry(&key, &value)
    }

    #[inline]
    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}

/// The compound serializers of named fields: each field's value is guarded.
macro_rules! guard_fields {
    ($($trait:ident),*) => {$(
        impl<C: ser::$trait> ser::$trait for Compound<'_, C> {
            type Ok = C::Ok;
            type Error = C::Error;

            #[inline]
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), C::Error> {
                let value = self.guard(value);
                self.inner.serialize_field(key, &value)
            }

            #[inline]
            fn skip_field(&mut self, key: &'static str) -> Result<(), C::Error> {
                self.inner.skip_field(key)
            }

            #[inline]
            fn end(self) -> Result<C::Ok, C::Error> {
                self.inner.end()
            }
        }
    )*};
}

guard_fields!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::json;

    use super::{to_text, to_value};

    #[derive(Serialize)]
    struct Dsn {
        dsn: String,
    }

    #[derive(Serialize)]
    struct Report {
        rows: u32,
        outcome: Result<u32, Dsn>,
    }

    #[derive(Serialize)]
    enum Wrapper {
        Tuple(u8, Result<u8, Dsn>),
        Struct { inner: Vec<Result<u8, Dsn>> },
    }

    fn secret() -> Dsn {
        Dsn {
            dsn: "postgres://admin:hunter2@10.0.0.7/prod".into(),
        }
    }

    #[test]
    fn plain_values_encode_as_serde_json_does() {
        let mut map = BTreeMap::new();
        map.insert("a", vec![Some(1), None]);
        assert_eq!(to_value(&map).unwrap(), json!({"a": [1, null]}));
        assert_eq!(to_value(&(1, "x", 'c')).unwrap(), json!([1, "x", "c"]));
        assert_eq!(
            to_value(&Wrapper::Struct { inner: Vec::new() }).unwrap(),
            json!({"Struct": {"inner": []}})
        );
        let e = to_value(&f64::NAN).unwrap();
        assert_eq!(e, serde_json::to_value(f64::NAN).unwrap());
        // as text, the same JSON
        assert_eq!(to_text(&map).unwrap(), r#"{"a":[1,null]}"#);
        assert_eq!(to_text(&(1, "x", 'c')).unwrap(), r#"[1,"x","c"]"#);
        assert_eq!(to_text(&f64::NAN).unwrap(), "null");
    }

    #[test]
    fn a_result_is_refused_at_any_depth() {
        let refused: [&dyn erased::Check; 7] = [
            &Result::<u8, Dsn>::Err(secret()),
            &Result::<u8, Dsn>::Ok(1),
            &vec![Ok(1), Err(secret())],
            &Report {
                rows: 1,
                outcome: Err(secret()),
            },
            &Some(Box::new(Result::<(), Dsn>::Err(secret()))),
            &Wrapper::Tuple(1, Err(secret())),
            &BTreeMap::from([("k", Result::<(), Dsn>::Err(secret()))]),
        ];
        for value in refused {
            assert!(value.refused(), "not refused");
        }
    }

    #[test]
    fn other_errors_are_kept() {
        let map = BTreeMap::from([((1, 2), 3)]);
        let error = to_value(&map).unwrap_err().expect("a serde error");
        assert!(error.to_string().contains("key must be a string"));
        let error = to_text(&map).unwrap_err().expect("a serde error");
        assert!(error.to_string().contains("key must be a string"));
    }

    /// Serializing through the guard, for values of different types in one array.
    mod erased {
        pub(super) trait Check {
            fn refused(&self) -> bool;
        }

        impl<T: serde::Serialize> Check for T {
            fn refused(&self) -> bool {
                let as_value = matches!(super::to_value(self), Err(None));
                let as_text = matches!(super::to_text(self), Err(None));
                assert_eq!(
                    as_value, as_text,
                    "refused as a value but not as text, or the reverse"
                );
                as_value
            }
        }
    }
}
