//! An imported result checked as strictly as rigor's own: a file written by hand or by another
//! program must not enter the history with a start time that is not a time (it would sort
//! anywhere, and show as the latest run) or a status or exclusion no rigor writes.

use super::error::HistoryError;
use rigor_model::result::{Exclusion, RunResult, RunStatus};

/// Why `result` cannot be stored, naming the field, or `Ok` when it reads as rigor writes it.
pub fn check(result: &RunResult) -> Result<(), HistoryError> {
    let field = |name: &str, e: HistoryError| HistoryError::Invalid(format!("`{name}`: {e}"));
    super::time::parse(&result.started_at).map_err(|e| field("started_at", e))?;
    if let Some(f) = &result.finished_at {
        super::time::parse(f).map_err(|e| field("finished_at", e))?;
    }
    if let RunStatus::Other(s) = &result.status {
        return Err(HistoryError::Invalid(format!(
            "`status` is {s:?}: rigor writes \"running\", \"complete\", \"interrupted\" or \
             \"failed\""
        )));
    }
    for (r, row) in result.rows.iter().enumerate() {
        for (i, it) in row.iterations.iter().enumerate() {
            if let Exclusion::Other(e) = &it.excluded {
                return Err(HistoryError::Invalid(format!(
                    "`rows[{r}].iterations[{i}].excluded` is {e:?}: rigor writes false, \
                     \"order\" or \"interference\""
                )));
            }
        }
    }
    Ok(())
}
