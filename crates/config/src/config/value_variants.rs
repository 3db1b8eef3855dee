//! Variants made from values of one variable: how `rigor bisect --var NAME --values …` runs
//! values against each other with the run's own machinery (each variant sets the variable, so
//! it reaches build, command and env as any variable does).

use super::raw::{RawVariant, Scalar};
use super::Config;

impl Config {
    /// Replaces the variants of `scenario` with one per `(variant, value)`, each setting the
    /// variable `name` to its value and otherwise as the scenario is.
    pub fn use_value_variants(&mut self, scenario: &str, name: &str, values: &[(String, String)]) {
        if let Some(s) = self.raw.scenarios.get_mut(scenario) {
            s.variants = values
                .iter()
                .map(|(variant, value)| {
                    let mut v = RawVariant::default();
                    v.variables
                        .insert(name.to_string(), Scalar::Text(value.clone()));
                    (variant.clone(), v)
                })
                .collect();
        }
    }
}
