//! A `#[tool]`'s parameters as a tuple of their types, when none of them carries a `#[serde]`
//! or `#[schemars]` attribute: decoded from the arguments object by name and described by
//! name, by code written once here for each number of parameters rather than derived per
//! tool. Tools whose parameters have the same types share it.
//!
//! What it decodes and the schema it makes are what `#[derive(Deserialize, JsonSchema)]` with
//! `deny_unknown_fields` gives a struct of those fields: the same errors in the same order (an
//! unknown argument, one given twice, then the first one missing in the order of the
//! parameters; an `Option` that is missing is `None`), and the same schema (each field's
//! schema with the title and description of its doc comment, the fields that are not an
//! `Option` required). The macro splits each doc comment into its title and description as
//! schemars does.

use std::fmt;
use std::marker::PhantomData;

use schemars::{JsonSchema, SchemaGenerator};
use serde::Deserializer;
use serde::de::{DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde_json::Value;

use super::args::{
    CannotDecodeArguments, DecodeArguments, Decoders, FieldSeed, Names, field_or_missing,
    next_field,
};
use super::schema::{ArgumentsSchema, MakeSchema, NoArgumentsSchema, parameters_schema};
use super::text::from_text;
use super::value::decode_value;

/// The title and description of each parameter, from its doc comment, in order; empty when
/// it has none.
pub(super) type Docs = &'static [(&'static str, &'static str)];

/// A tuple of the types of a `#[tool]`'s parameters, each `Deserialize` and `JsonSchema`.
/// Implemented for tuples of up to 16 types; a tool with more parameters derives an arguments
/// struct instead.
pub trait Parameters: Sized {
    /// Decodes the parameters from the arguments object, the argument named `names[i]` into
    /// the `i`th.
    fn visit_map<'de, M: MapAccess<'de>>(map: M, names: Names) -> Result<Self, M::Error>;

    /// How each parameter's schema is made (`subschema_for` its type), and whether the
    /// parameter may be left out (it is an `Option`), in order.
    fn schemas() -> Vec<(MakeSchema, bool)>;
}

/// Decodes `T` from the arguments object, by the names of its parameters.
pub(super) struct Named<T> {
    names: Names,
    marker: PhantomData<fn() -> T>,
}

impl<T> Named<T> {
    pub(super) fn new(names: Names) -> Self {
        Self {
            names,
            marker: PhantomData,
        }
    }
}

impl<T> Clone for Named<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Named<T> {}

impl<'de, T: Parameters> DeserializeSeed<'de> for Named<T> {
    type Value = T;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, T: Parameters> Visitor<'de> for Named<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the arguments object")
    }

    #[inline]
    fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<T, M::Error> {
        T::visit_map(map, self.names)
    }
}

/// `T`'s schema where a parameter of type `T` is: `subschema_for`, a reference to its
/// definition where it has one.
fn subschema<T: JsonSchema>(generator: &mut SchemaGenerator) -> schemars::Schema {
    generator.subschema_for::<T>()
}

macro_rules! parameters {
    ($($index:tt $param:ident),*) => {
        impl<$($param: DeserializeOwned + JsonSchema),*> Parameters for ($($param,)*) {
            #[inline]
            #[allow(unused_mut, unused_variables)]
            fn visit_map<'de, M: MapAccess<'de>>(mut map: M, names: Names) -> Result<Self, M::Error> {
                let mut slots = ($(None::<$param>,)*);
                while let Some(key) = map.next_key_seed(FieldSeed(names))? {
                    match key {
                        $($index => next_field(&mut map, &mut slots.$index, names[$index])?,)*
                        _ => unreachable!("a key is the index of a name"),
                    }
                }
                Ok(($(field_or_missing(slots.$index, names[$index])?,)*))
            }

            fn schemas() -> Vec<(MakeSchema, bool)> {
                vec![$((subschema::<$param> as MakeSchema, $param::_schemars_private_is_option())),*]
            }
        }
    };
}

parameters!();
parameters!(0 P0);
parameters!(0 P0, 1 P1);
parameters!(0 P0, 1 P1, 2 P2);
parameters!(0 P0, 1 P1, 2 P2, 3 P3);
parameters!(0 P0, 1 P1, 2 P2, 3 P3, 4 P4);
parameters!(0 P0, 1 P1, 2 P2, 3 P3, 4 P4, 5 P5);
parameters!(0 P0, 1 P1, 2 P2, 3 P3, 4 P4, 5 P5, 6 P6);
parameters!(0 P0, 1 P1, 2 P2, 3 P3, 4 P4, 5 P5, 6 P6, 7 P7);
parameters!(0 P0, 1 P1, 2 P2, 3 P3, 4 P4, 5 P5, 6 P6, 7 P7, 8 P8);
parameters!(0 P0, 1 P1, 2 P2, 3 P3, 4 P4, 5 P5, 6 P6, 7 P7, 8 P8, 9 P9);
parameters!(0 P0, 1 P1, 2 P2, 3 P3, 4 P4, 5 P5, 6 P6, 7 P7, 8 P8, 9 P9, 10 P10);
parameters!(0 P0, 1 P1, 2 P2, 3 P3, 4 P4, 5 P5, 6 P6, 7 P7, 8 P8, 9 P9, 10 P10, 11 P11);
parameters!(0 P0, 1 P1, 2 P2, 3 P3, 4 P4, 5 P5, 6 P6, 7 P7, 8 P8, 9 P9, 10 P10, 11 P11, 12 P12);
parameters!(0 P0, 1 P1, 2 P2, 3 P3, 4 P4, 5 P5, 6 P6, 7 P7, 8 P8, 9 P9, 10 P10, 11 P11, 12 P12, 13 P13);
parameters!(0 P0, 1 P1, 2 P2, 3 P3, 4 P4, 5 P5, 6 P6, 7 P7, 8 P8, 9 P9, 10 P10, 11 P11, 12 P12, 13 P13, 14 P14);
parameters!(0 P0, 1 P1, 2 P2, 3 P3, 4 P4, 5 P5, 6 P6, 7 P7, 8 P8, 9 P9, 10 P10, 11 P11, 12 P12, 13 P13, 14 P14, 15 P15);

/// The tuple `T` of a `#[tool]`'s parameter types with their names and doc comments, for
/// autoref specialization as [`ArgumentsOf`](super::args::ArgumentsOf) is for a derived
/// struct: `(&&ParametersOf::<T>::new(..)).decoders()` is
/// [`DecodeArguments`](super::args::DecodeArguments)'s when `T` is [`Parameters`], else
/// [`CannotDecodeArguments`](super::args::CannotDecodeArguments)'s, which only a crate that
/// does not compile picks (the macro reports the parameter type that is not `Deserialize` or
/// not `JsonSchema` at the type); and the same for the schema.
pub struct ParametersOf<T> {
    names: Names,
    docs: Docs,
    marker: PhantomData<fn() -> T>,
}

impl<T> ParametersOf<T> {
    /// The parameters `T`, named `names`, with the titles and descriptions `docs`.
    pub const fn new(names: Names, docs: Docs) -> Self {
        Self {
            names,
            docs,
            marker: PhantomData,
        }
    }
}

impl<T> fmt::Debug for ParametersOf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParametersOf")
            .field("names", &self.names)
            .finish_non_exhaustive()
    }
}

impl<T: Parameters> DecodeArguments<T> for &ParametersOf<T> {
    #[inline]
    fn decoders(&self) -> Decoders<T> {
        Decoders {
            value: |args, names| decode_value(args, Named::<T>::new(names)),
            text: |text, names| from_text(text, Named::<T>::new(names)),
            names: self.names,
        }
    }
}

impl<T> CannotDecodeArguments<T> for ParametersOf<T> {
    fn decoders(&self) -> Decoders<T> {
        let () = NotParameters::<T>::REFUSED;
        unreachable!()
    }
}

impl<T: Parameters> ArgumentsSchema for &ParametersOf<T> {
    fn arguments_schema(&self) -> Value {
        parameters_schema(&T::schemas(), self.names, self.docs)
    }
}

impl<T> NoArgumentsSchema for ParametersOf<T> {
    fn arguments_schema(&self) -> Value {
        let () = NotParameters::<T>::REFUSED;
        unreachable!()
    }
}

/// A constant whose evaluation fails, for each `T` it is evaluated for: the fallbacks are
/// never built for a `T` in a crate that compiles.
struct NotParameters<T>(PhantomData<T>);

impl<T> NotParameters<T> {
    const REFUSED: () =
        panic!("a `#[tool]`'s parameter types are not all `Deserialize` and `JsonSchema`");
}
