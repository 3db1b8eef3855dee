//! Measurements the user declares (`[measurements.ID] unit/direction/label` in rigor.toml,
//! `--measure ID=higher` for `rigor compare`): which way is better for an id rigor's catalogue
//! does not know, so a throughput drop is never read as an improvement by guesswork.
//!
//! An id with neither a catalogue entry nor a declared direction gets no verdict.

use crate::measurements;
use crate::result::{Warning, WarningKind};
use rigor_stats::Direction;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which way is better, spelled as users write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    /// `higher` / `lower`, as in rigor.toml and the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }

    /// Reads `higher` or `lower` (the only two spellings, so a typo is an error, not a guess).
    pub fn parse(text: &str) -> Result<Better, DeclarationError> {
        match text.trim() {
            "higher" => Ok(Better::Higher),
            "lower" => Ok(Better::Lower),
            other => Err(DeclarationError::Direction(other.to_string())),
        }
    }

    fn of(d: Direction) -> Better {
        match d {
            Direction::HigherIsBetter => Better::Higher,
            Direction::LowerIsBetter => Better::Lower,
        }
    }

    fn direction(self) -> Direction {
        match self {
            Better::Higher => Direction::HigherIsBetter,
            Better::Lower => Direction::LowerIsBetter,
        }
    }
}

/// One declared measurement; every field optional (a label alone is a valid declaration).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Declaration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Better>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The practical threshold of this measurement's verdicts, in %, in place of the run's
    /// (`threshold = "1%"`, `--threshold ID=1%`): memory hunted at 1% beside latency at 5%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_pct: Option<f64>,
}

impl Declaration {
    /// Says nothing: no unit, direction, label or threshold.
    pub fn is_empty(&self) -> bool {
        self.unit.is_none()
            && self.direction.is_none()
            && self.label.is_none()
            && self.threshold_pct.is_none()
    }
}

/// The threshold `id`'s verdicts use: its declared one, else `global` (in %).
pub fn threshold(id: &str, decl: &Declarations, global: f64) -> f64 {
    decl.get(id).and_then(|d| d.threshold_pct).unwrap_or(global)
}

/// Sets the thresholds given on the command line (`--threshold ID=PCT`) over the declared ones.
pub fn set_thresholds(decl: &mut Declarations, thresholds: &[(String, f64)]) {
    for (id, pct) in thresholds {
        decl.entry(id.clone()).or_default().threshold_pct = Some(*pct);
    }
}

/// Declarations by measurement id; stored in the result JSON (`measurements`) so `rigor compare`
/// reads the same directions `rigor run` used.
pub type Declarations = BTreeMap<String, Declaration>;

/// Checks a declaration against the catalogue: relabelling a known id is fine, reversing its
/// direction or changing its unit is an error (rigor's own figures have one meaning, and the
/// numbers would not be converted).
pub fn check(id: &str, d: &Declaration) -> Result<(), DeclarationError> {
    let Some(m) = measurements::info(id) else {
        return Ok(());
    };
    if let Some(b) = d.direction.filter(|b| *b != Better::of(m.direction)) {
        return Err(DeclarationError::Reversed {
            id: id.to_string(),
            own: Better::of(m.direction),
            asked: b,
        });
    }
    match &d.unit {
        Some(u) if u != m.unit => Err(DeclarationError::Unit {
            id: id.to_string(),
            own: m.unit,
            asked: u.clone(),
        }),
        _ => Ok(()),
    }
}

/// The direction a verdict uses: the catalogue's, else the declared one, else none.
pub fn direction(id: &str, decl: &Declarations) -> Option<Direction> {
    measurements::info(id).map(|m| m.direction).or_else(|| {
        decl.get(id)
            .and_then(|d| d.direction)
            .map(Better::direction)
    })
}

/// `higher` / `lower` for the JSON `direction` of a comparison; `None` when undeclared.
pub fn direction_str(id: &str, decl: &Declarations) -> Option<String> {
    direction(id, decl).map(|d| Better::of(d).as_str().to_string())
}

/// The label a table shows: a declared label (with its unit) wins, then the catalogue's.
pub fn label(id: &str, decl: &Declarations) -> String {
    let d = decl.get(id);
    let unit = d
        .and_then(|d| d.unit.clone())
        .or_else(|| measurements::info(id).map(|m| m.unit.to_string()));
    match d.and_then(|d| d.label.clone()) {
        Some(l) => match unit.filter(|u| u != "count" && !u.is_empty()) {
            Some(u) => format!("{l} ({u})"),
            None => l,
        },
        None if measurements::info(id).is_some() => measurements::label(id),
        None => match unit.filter(|u| u != "count" && !u.is_empty()) {
            Some(u) => format!("{id} ({u})"),
            None => id.to_string(),
        },
    }
}

/// Parses `ID=higher` / `ID=lower` given to `rigor compare --measure`.
pub fn parse_flag(text: &str) -> Result<(String, Better), DeclarationError> {
    let flag = |why: DeclarationError| DeclarationError::Flag {
        text: text.to_string(),
        why: Box::new(why),
    };
    let (id, dir) = text
        .split_once('=')
        .ok_or_else(|| flag(DeclarationError::FlagShape))?;
    let id = id.trim();
    if id.is_empty() {
        return Err(flag(DeclarationError::FlagNoId));
    }
    let better = Better::parse(dir).map_err(flag)?;
    let d = Declaration {
        direction: Some(better),
        ..Default::default()
    };
    check(id, &d).map_err(flag)?;
    Ok((id.to_string(), better))
}

/// `--measure` given the same id with both directions: no declaration can win silently, so the
/// contradiction is named (a usage error) instead of the last one taking effect.
pub fn flag_conflicts(flags: &[(String, Better)]) -> Result<(), DeclarationError> {
    for (i, (id, better)) in flags.iter().enumerate() {
        if let Some((_, other)) = flags[..i].iter().find(|(f, b)| f == id && b != better) {
            return Err(DeclarationError::Conflict {
                id: id.clone(),
                first: *other,
                second: *better,
            });
        }
    }
    Ok(())
}

/// Why a declaration (or a `--measure` flag declaring one) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeclarationError {
    #[error("direction must be \"higher\" or \"lower\", not \"{0}\"")]
    Direction(String),
    #[error(
        "`{id}` is rigor's own measurement and {} is better for it; \
         a declaration cannot make it {}",
        own.as_str(),
        asked.as_str()
    )]
    Reversed {
        id: String,
        own: Better,
        asked: Better,
    },
    #[error(
        "`{id}` is rigor's own measurement, in {own}; a declaration cannot change its unit to \
         {asked}"
    )]
    Unit {
        id: String,
        own: &'static str,
        asked: String,
    },
    #[error("expected ID=higher or ID=lower")]
    FlagShape,
    #[error("the measurement id is empty")]
    FlagNoId,
    #[error("--measure `{text}`: {why}")]
    Flag {
        text: String,
        why: Box<DeclarationError>,
    },
    #[error(
        "--measure declares {id} both {id}={} and {id}={}: give one direction",
        first.as_str(),
        second.as_str()
    )]
    Conflict {
        id: String,
        first: Better,
        second: Better,
    },
}

/// The message alone, for the callers that still report errors as text.
impl From<DeclarationError> for String {
    fn from(e: DeclarationError) -> String {
        e.to_string()
    }
}

/// Why `--fail-on-regression` refuses to gate on `id`: without a direction it can never be a
/// regression, so the gate would pass whatever happened. `conflicting`: the results declare it
/// both ways (rather than not at all). Names the id and how to declare it.
pub fn cannot_gate(id: &str, conflicting: bool) -> String {
    let why = if conflicting {
        "the results declare its direction differently"
    } else {
        "rigor does not know whether higher or lower is better"
    };
    format!(
        "--fail-on-regression watches {id}, which cannot be judged: {why}; declare it in \
         rigor.toml (`[measurements.\"{id}\"]` with `direction = \"higher\"` or \"lower\"), or \
         pass `--measure {id}=higher` (or `=lower`) to rigor compare"
    )
}

/// The warning for ids compared without a known direction: what they are and how to declare them.
pub fn undeclared_warning(ids: &[String]) -> Option<Warning> {
    if ids.is_empty() {
        return None;
    }
    let first = &ids[0];
    Some(Warning::new(
        WarningKind::UndeclaredMeasurement,
        format!(
            "no verdict for {}: rigor does not know whether higher or lower is better",
            ids.join(", ")
        ),
        format!(
            "declare it in rigor.toml (`[measurements.\"{first}\"]` with `direction = \"higher\"` \
             or \"lower\"), or pass `--measure {first}=higher` to rigor compare"
        ),
    ))
}

/// Ids among `ids` that have no direction (neither catalogue nor declaration), in order.
pub fn undeclared<'a>(
    ids: impl IntoIterator<Item = &'a String>,
    decl: &Declarations,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        if direction(id, decl).is_none() && !out.contains(id) {
            out.push(id.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(
        id: &str,
        dir: Option<Better>,
        label: Option<&str>,
        unit: Option<&str>,
    ) -> Declarations {
        [(
            id.to_string(),
            Declaration {
                unit: unit.map(str::to_string),
                direction: dir,
                label: label.map(str::to_string),
                threshold_pct: None,
            },
        )]
        .into()
    }

    #[test]
    fn unknown_ids_have_no_direction_until_declared() {
        let none = Declarations::new();
        assert_eq!(direction("cmd.msgs_per_sec", &none), None);
        let d = declared("cmd.msgs_per_sec", Some(Better::Higher), None, None);
        assert_eq!(
            direction("cmd.msgs_per_sec", &d),
            Some(Direction::HigherIsBetter)
        );
        assert_eq!(
            direction("load.rps", &none),
            Some(Direction::HigherIsBetter)
        );
        assert_eq!(
            undeclared(&["cmd.x".to_string(), "load.rps".to_string()], &none),
            vec!["cmd.x"]
        );
    }

    #[test]
    fn labels_prefer_the_declaration() {
        let d = declared("cmd.mps", None, Some("Messages/sec"), Some("1/s"));
        assert_eq!(label("cmd.mps", &d), "Messages/sec (1/s)");
        assert_eq!(label("cmd.other", &d), "cmd.other");
        let d = declared("load.rps", None, Some("Throughput"), None);
        assert_eq!(label("load.rps", &d), "Throughput (1/s)");
        assert_eq!(
            label("load.rps", &Declarations::new()),
            "Requests/sec (1/s)"
        );
    }

    #[test]
    fn flags_and_catalogue_conflicts() {
        assert_eq!(
            parse_flag("cmd.mps=higher"),
            Ok(("cmd.mps".to_string(), Better::Higher))
        );
        assert_eq!(parse_flag("load.rps=higher").unwrap().1, Better::Higher);
        let e = parse_flag("load.rps=lower").unwrap_err().to_string();
        assert!(e.contains("higher is better"), "{e}");
        let unit = Declaration {
            unit: Some("GiB".into()),
            ..Default::default()
        };
        assert!(check("app.rss", &unit)
            .unwrap_err()
            .to_string()
            .contains("in MiB"));
        assert!(check("cmd.mem", &unit).is_ok());
        let e = parse_flag("cmd.mps=up").unwrap_err().to_string();
        assert!(e.contains("\"higher\" or \"lower\""), "{e}");
        assert!(parse_flag("cmd.mps").is_err());
        assert!(parse_flag("=higher").is_err());
    }

    #[test]
    fn contradictory_flags_are_named() {
        let h = ("cmd.x".to_string(), Better::Higher);
        let l = ("cmd.x".to_string(), Better::Lower);
        let y = ("cmd.y".to_string(), Better::Lower);
        assert!(flag_conflicts(&[h.clone(), y.clone(), h.clone()]).is_ok());
        let e = flag_conflicts(&[h, y, l]).unwrap_err().to_string();
        assert!(
            e.contains("cmd.x=higher") && e.contains("cmd.x=lower"),
            "{e}"
        );
    }
}
