//! How far a run got, and what a comparison concluded: the two one-word answers scripts read
//! from a result (`status`, `verdict`), as types so every reader and writer spells them alike.

use super::coded::coded_enum;
use serde::{Deserialize, Serialize};

coded_enum! {
    /// Where a run stands. A result is rewritten while it runs (`running`), then once more when
    /// it ends; `rigor compare` warns about a result that did not end `complete`.
    pub enum RunStatus {
        /// Iterations are still being written.
        Running = "running",
        /// Every planned iteration ran (some may have failed).
        Complete = "complete",
        /// Ctrl-C or a signal stopped the run; finished iterations are kept.
        Interrupted = "interrupted",
        /// rigor itself failed part-way; finished iterations are kept.
        Failed = "failed",
        /// Results written before rigor recorded a status say nothing.
        Unrecorded = "",
    }
}

impl Default for RunStatus {
    /// An absent `status` (older results) is one that was not recorded.
    fn default() -> RunStatus {
        RunStatus::Unrecorded
    }
}

impl RunStatus {
    /// Whether the result says it did not finish: running, interrupted, failed, or a status this
    /// version does not know. A result without a status says nothing either way.
    pub fn says_unfinished(&self) -> bool {
        !matches!(self, RunStatus::Complete | RunStatus::Unrecorded)
    }
}

/// The answer of one comparison. The statistics decide it ([`rigor_stats::Verdict`]); this is
/// its spelling in the JSON, the tables and `--fail-on-regression`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Verdict {
    /// The whole interval is beyond the threshold on the bad side.
    #[serde(rename = "regression")]
    Regression,
    /// The whole interval is beyond the threshold on the good side.
    #[serde(rename = "improvement")]
    Improvement,
    /// The whole interval is within the threshold.
    #[serde(rename = "no change")]
    NoChange,
    /// Anything else: too few iterations, a wide interval, or no known direction.
    #[serde(rename = "inconclusive")]
    Inconclusive,
}

impl Verdict {
    /// The contract spelling (JSON `verdict`, table cells).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// A verdict spelled other than the contract's four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a verdict")]
pub struct UnknownVerdict(pub String);

/// The message alone, for the callers that still report errors as text.
impl From<UnknownVerdict> for String {
    fn from(e: UnknownVerdict) -> String {
        e.to_string()
    }
}

impl std::str::FromStr for Verdict {
    type Err = UnknownVerdict;

    /// Reads the contract spelling (`no change`, not `NoChange`).
    fn from_str(s: &str) -> Result<Verdict, UnknownVerdict> {
        [
            Verdict::Regression,
            Verdict::Improvement,
            Verdict::NoChange,
            Verdict::Inconclusive,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
        .ok_or_else(|| UnknownVerdict(s.to_string()))
    }
}

impl<'de> Deserialize<'de> for Verdict {
    /// Reads the contract spelling leniently: a saved comparison's verdict is only ever shown
    /// again (`rigor compare` judges anew), so a verdict another version wrote and this one does
    /// not know loads as `inconclusive` rather than refusing the whole file.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Verdict, D::Error> {
        let spelled = String::deserialize(d)?;
        Ok(spelled.parse().unwrap_or(Verdict::Inconclusive))
    }
}

/// Compares with the spelling the JSON holds, as scripts reading the result would.
impl PartialEq<&str> for Verdict {
    fn eq(&self, spelled: &&str) -> bool {
        self.as_str() == *spelled
    }
}

impl From<rigor_stats::Verdict> for Verdict {
    /// The one mapping from the statistics' answer to the result's.
    fn from(v: rigor_stats::Verdict) -> Verdict {
        match v {
            rigor_stats::Verdict::Regression => Verdict::Regression,
            rigor_stats::Verdict::Improvement => Verdict::Improvement,
            rigor_stats::Verdict::NoChange => Verdict::NoChange,
            rigor_stats::Verdict::Inconclusive => Verdict::Inconclusive,
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_and_write_their_codes() {
        for s in RunStatus::ALL {
            let json = serde_json::to_string(s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(&serde_json::from_str::<RunStatus>(&json).unwrap(), s);
        }
        assert_eq!(
            serde_json::from_str::<RunStatus>("\"\"").unwrap(),
            RunStatus::Unrecorded
        );
        assert_eq!(
            serde_json::from_str::<RunStatus>("\"paused\"").unwrap(),
            RunStatus::Other("paused".into())
        );
        assert!(!RunStatus::Complete.says_unfinished());
        assert!(!RunStatus::Unrecorded.says_unfinished());
        assert!(RunStatus::Interrupted.says_unfinished());
        assert!(RunStatus::Other("paused".into()).says_unfinished());
    }

    #[test]
    fn verdicts_are_spelled_as_the_statistics_serialise_them() {
        use rigor_stats::Verdict as S;
        for v in [S::Regression, S::Improvement, S::NoChange, S::Inconclusive] {
            let ours = Verdict::from(v);
            assert_eq!(
                serde_json::to_value(ours).unwrap(),
                serde_json::to_value(v).unwrap()
            );
            assert_eq!(serde_json::to_value(ours).unwrap(), ours.as_str());
            assert!("NoChange".parse::<Verdict>().is_err());
            let back: Verdict = serde_json::from_value(serde_json::to_value(v).unwrap()).unwrap();
            assert_eq!(back, ours);
            assert_eq!(ours.as_str().parse::<Verdict>(), Ok(ours));
        }
    }

    #[test]
    fn a_verdict_from_another_version_loads_as_inconclusive() {
        let v: Verdict = serde_json::from_str("\"future_verdict\"").unwrap();
        assert_eq!(v, Verdict::Inconclusive);
        let v: Verdict = serde_json::from_str("\"no change\"").unwrap();
        assert_eq!(v, Verdict::NoChange);
    }
}
