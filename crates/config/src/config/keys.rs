//! Every key `rigor.toml` accepts, read from the serde structs themselves rather than from a list
//! kept by hand: a deserializer that feeds each struct one value per field it declares and
//! records the `fields` serde passes to `deserialize_struct`. A key added to `raw` appears here
//! without anyone remembering to, so the documentation test cannot fall behind the parser.

use super::raw::RawConfig;
use serde::de::value::{Error, StrDeserializer};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::cell::RefCell;

/// One accepted key: where it sits (`jobs.NAME.ready`) and its name (`timeout`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// The table holding the key, with `NAME` for user-chosen names; empty for the top level.
    pub table: String,
    pub name: &'static str,
}

impl Key {
    /// `jobs.NAME.ready.timeout`, for messages.
    pub fn path(&self) -> String {
        match self.table.as_str() {
            "" => self.name.to_string(),
            t => format!("{t}.{}", self.name),
        }
    }
}

/// Every key of every table, in declaration order.
pub fn all() -> Vec<Key> {
    let keys = RefCell::new(Vec::new());
    RawConfig::deserialize(Recorder {
        table: String::new(),
        keys: &keys,
    })
    .expect("the recorder satisfies every raw struct");
    keys.into_inner()
}

/// Stands in for a value at `table`: a struct records its fields and receives each of them, a
/// table of user-chosen names receives one entry `NAME`, a scalar receives a value its visitor
/// accepts.
struct Recorder<'a> {
    table: String,
    keys: &'a RefCell<Vec<Key>>,
}

impl Recorder<'_> {
    fn at(&self, name: &str) -> Self {
        Recorder {
            table: match self.table.as_str() {
                "" => name.to_string(),
                t => format!("{t}.{name}"),
            },
            keys: self.keys,
        }
    }
}

impl<'de> Deserializer<'de> for Recorder<'_> {
    type Error = Error;

    /// Numbers, `{{templated}}` scalars and counts all accept a small whole number.
    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_bool(true)
    }
    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_str("x")
    }
    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_str("x")
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_some(self)
    }
    /// A list holds one element standing in at the list's own path: an array of tables
    /// (`[[limits]]`) records its fields there, a list of scalars records nothing.
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_seq(One(Some(self)))
    }
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_map(Entries {
            names: vec!["NAME"],
            parent: self,
            user_named: true,
        })
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        self.keys.borrow_mut().extend(fields.iter().map(|name| Key {
            table: self.table.clone(),
            name,
        }));
        v.visit_map(Entries {
            names: fields.to_vec(),
            parent: self,
            user_named: false,
        })
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit unit_struct
        newtype_struct tuple tuple_struct enum identifier ignored_any
    }
}

/// The entries of a struct (its fields) or of a table of user-chosen names (one `NAME`).
struct Entries<'a> {
    names: Vec<&'static str>,
    parent: Recorder<'a>,
    user_named: bool,
}

impl<'de> MapAccess<'de> for Entries<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.names.first() {
            Some(name) => seed.deserialize(StrDeserializer::new(name)).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Error> {
        let name = self.names.remove(0);
        let child = if self.user_named {
            self.parent.at("NAME")
        } else {
            self.parent.at(name)
        };
        seed.deserialize(child)
    }
}

/// A list of one element, the recorder of the list's path.
struct One<'a>(Option<Recorder<'a>>);

impl<'de> SeqAccess<'de> for One<'_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0.take().map(|r| seed.deserialize(r)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_from_every_table_with_their_paths() {
        let keys = all();
        let paths: Vec<String> = keys.iter().map(Key::path).collect();
        for expected in [
            "jobs",
            "jobs.NAME.command",
            "jobs.NAME.ready.stderr",
            "jobs.NAME.validate.body_contains",
            "scenarios.NAME.variants.NAME.artifact",
            "profiles.NAME.load.priority",
            "measurements.NAME.direction",
            "limits.max",
        ] {
            assert!(
                paths.iter().any(|p| p == expected),
                "{expected} not in {paths:?}"
            );
        }
        // RawRole is reached twice (application and load): each place is its own key.
        assert!(paths.iter().any(|p| p == "profiles.NAME.application.cpus"));
    }
}
