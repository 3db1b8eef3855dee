//! Why an iteration is left out of the statistics. The JSON `excluded` is `false` for an
//! iteration that counts and the reason's code for one that does not, so a script testing
//! `if it["excluded"]` reads both the old `true`/`false` and the reasons alike.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Whether an iteration counts, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Exclusion {
    /// It counts.
    #[default]
    Kept,
    /// `--exclude LOW:HIGH` dropped it as one of its row's lowest or highest.
    Order,
    /// Something else on the machine took CPU from it (steal, other processes) far beyond the
    /// run's own baseline; a replacement ran in its slot.
    Interference,
    /// A reason this version of rigor does not know (written by another version).
    Other(String),
}

impl Exclusion {
    /// Whether the iteration is left out.
    pub fn is_excluded(&self) -> bool {
        *self != Exclusion::Kept
    }

    /// The JSON code of an excluded iteration (`order`, `interference`); `None` when kept.
    pub fn code(&self) -> Option<&str> {
        match self {
            Exclusion::Kept => None,
            Exclusion::Order => Some("order"),
            Exclusion::Interference => Some("interference"),
            Exclusion::Other(code) => Some(code),
        }
    }
}

impl Serialize for Exclusion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.code() {
            None => s.serialize_bool(false),
            Some(code) => s.serialize_str(code),
        }
    }
}

impl<'de> Deserialize<'de> for Exclusion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Exclusion, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Flag(bool),
            Code(String),
        }
        Ok(match Raw::deserialize(d)? {
            Raw::Flag(false) => Exclusion::Kept,
            // Results written before reasons were recorded: only --exclude could set it.
            Raw::Flag(true) => Exclusion::Order,
            Raw::Code(c) => match c.as_str() {
                "order" => Exclusion::Order,
                "interference" => Exclusion::Interference,
                _ => Exclusion::Other(c),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_is_false_and_reasons_are_codes_both_ways() {
        let cases = [
            (Exclusion::Kept, "false"),
            (Exclusion::Order, "\"order\""),
            (Exclusion::Interference, "\"interference\""),
            (Exclusion::Other("later".into()), "\"later\""),
        ];
        for (e, json) in cases {
            assert_eq!(serde_json::to_string(&e).unwrap(), json);
            assert_eq!(serde_json::from_str::<Exclusion>(json).unwrap(), e);
        }
        assert_eq!(
            serde_json::from_str::<Exclusion>("true").unwrap(),
            Exclusion::Order
        );
        assert!(serde_json::from_str::<Exclusion>("3").is_err());
    }
}
