//! Enums the JSON spells as fixed codes (`"complete"`, `"page_cache"`), read back leniently: a
//! code another version of rigor wrote and this one does not know is kept as it is, so a saved
//! result always loads and shows what it said.

/// Declares an enum of coded values plus `Other(String)` for codes this version does not know,
/// with `ALL` (every known value, in order), `as_str`, `from_code`, `Display` and serde as the
/// code. One list makes the enum, its codes and `ALL`, so they cannot disagree.
macro_rules! coded_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $code:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $($(#[$vmeta])* $variant,)+
            /// A code this version of rigor does not know (written by another version); kept
            /// as it was so the result still loads and says what it said.
            Other(String),
        }

        impl $name {
            /// Every value this version knows, in declaration order (what the documentation
            /// lists and the tests walk).
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The code the JSON holds.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $code,)+
                    $name::Other(code) => code,
                }
            }

            /// Reads a code; one this version does not know becomes `Other`.
            pub fn from_code(code: &str) -> $name {
                match code {
                    $($code => $name::$variant,)+
                    other => $name::Other(other.to_string()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        /// Compares with the code the JSON holds, as scripts reading the result would.
        impl PartialEq<&str> for $name {
            fn eq(&self, code: &&str) -> bool {
                self.as_str() == *code
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let code = String::deserialize(d)?;
                Ok($name::from_code(&code))
            }
        }
    };
}

pub(crate) use coded_enum;
