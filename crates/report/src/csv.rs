//! `--csv F`: one line per iteration, every figure in full precision, for spreadsheets and pandas.
//! Quoting follows RFC 4180 (fields with `,`, `"` or line breaks are quoted, quotes doubled);
//! lines end in `\n`. Text that a spreadsheet would run as a formula is defused first.

use rigor_model::measurements;
use rigor_model::result::{Iteration, RunResult};

/// Fixed leading columns; matrix variables and measurement ids follow.
const FIXED: &[&str] = &["scenario", "variant"];
const PER_ITERATION: &[&str] = &[
    "iteration",
    "excluded",
    "error",
    "pid",
    "outside_window_requests",
    "outside_window_bytes",
    "warnings",
];

/// The run as CSV: `scenario, variant, <matrix variables…>, iteration, excluded, error, pid,
/// outside_window_requests, outside_window_bytes, warnings, <measurement ids…>` (`warnings` holds
/// the kinds of the iteration's, its row's and the run's warnings, `;`-separated; ids are the
/// union over all iterations in catalogue order; a figure an iteration lacks is an empty field,
/// never 0).
pub fn render(result: &RunResult) -> String {
    let columns = Columns::of(result);
    let mut out = line(&columns.header());
    for row in &result.rows {
        let scenario = row.key_in(&result.scenario).scenario;
        let inherited: Vec<&str> = result
            .warnings
            .iter()
            .chain(&row.warnings)
            .map(|w| w.kind.as_str())
            .collect();
        for it in &row.iterations {
            let mut kinds = inherited.clone();
            kinds.extend(it.warnings.iter().map(|w| w.kind.as_str()));
            kinds.dedup();
            let mut fields = vec![scenario.clone(), row.variant.clone().unwrap_or_default()];
            fields.extend(
                columns
                    .vars
                    .iter()
                    .map(|v| row.variables.get(*v).cloned().unwrap_or_default()),
            );
            fields.extend(iteration_fields(it, &kinds));
            fields.extend(columns.ids.iter().map(|id| {
                it.measurements
                    .get(id)
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            }));
            out.push_str(&line(&fields));
        }
    }
    out
}

/// The variable and measurement columns of a run: the union over its rows and iterations.
struct Columns<'a> {
    vars: Vec<&'a String>,
    ids: Vec<String>,
}

impl<'a> Columns<'a> {
    fn of(result: &'a RunResult) -> Columns<'a> {
        let mut vars: Vec<&String> = Vec::new();
        for k in result.rows.iter().flat_map(|r| r.variables.keys()) {
            if !vars.contains(&k) {
                vars.push(k);
            }
        }
        let ids = measurements::order(
            result
                .rows
                .iter()
                .flat_map(|r| r.iterations.iter())
                .flat_map(|it| it.measurements.keys().cloned()),
        );
        Columns { vars, ids }
    }

    fn header(&self) -> Vec<String> {
        let mut header: Vec<String> = FIXED.iter().map(|s| s.to_string()).collect();
        for v in &self.vars {
            // A variable named like a fixed column would make the header ambiguous.
            let taken = FIXED.contains(&v.as_str())
                || PER_ITERATION.contains(&v.as_str())
                || self.ids.contains(v);
            header.push(if taken {
                format!("var.{v}")
            } else {
                v.to_string()
            });
        }
        header.extend(PER_ITERATION.iter().map(|s| s.to_string()));
        header.extend(self.ids.iter().cloned());
        header
    }
}

/// The [`PER_ITERATION`] fields of one iteration.
fn iteration_fields(it: &Iteration, kinds: &[&str]) -> [String; 7] {
    [
        it.number().to_string(),
        it.excluded.code().unwrap_or("false").to_string(),
        it.error.clone().unwrap_or_default(),
        it.pid.map(|p| p.to_string()).unwrap_or_default(),
        it.outside_window.requests.to_string(),
        it.outside_window.bytes.to_string(),
        kinds.join(";"),
    ]
}

/// One CSV line: control characters shown as `\u{1b}`-style escapes (as in every format),
/// formulas defused, fields quoted.
fn line(fields: &[String]) -> String {
    let mut s = fields
        .iter()
        .map(|f| quote(&defuse(&super::terminal::visible(f))))
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    s
}

/// Spreadsheets run a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return as a
/// formula: user text (a description, a variant, an error message) could then compute, fetch or
/// execute. Such text gets a leading `'` (the spreadsheet convention for "this is text");
/// numbers such as `-3.5` stay numbers.
pub fn defuse(field: &str) -> String {
    let risky = field.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && field.trim().parse::<f64>().is_err() {
        format!("'{field}")
    } else {
        field.to_string()
    }
}

/// RFC 4180: quote a field when it holds a separator, a quote or a line break; double its quotes.
pub fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::sample_result;

    #[test]
    fn quoting() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quote("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn formulas_are_defused_and_numbers_kept() {
        assert_eq!(
            defuse("=HYPERLINK(\"http://x\")"),
            "'=HYPERLINK(\"http://x\")"
        );
        assert_eq!(defuse("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(defuse("+cmd|' /C calc'!A0"), "'+cmd|' /C calc'!A0");
        assert_eq!(defuse("-3.5"), "-3.5");
        assert_eq!(defuse("+2"), "+2");
        assert_eq!(defuse("plain"), "plain");
    }

    #[test]
    fn user_strings_cannot_become_formulas_or_break_lines() {
        let mut r = sample_result();
        r.rows[0].variant = Some("=1+2".into());
        r.rows[0]
            .variables
            .insert("connections".into(), "@cmd".into());
        r.rows[1].iterations[3].error = Some("-boom\n=HYPERLINK(\"x\")".into());
        let csv = render(&r);
        // Each field is read back exactly as a spreadsheet would see it.
        let mut lines = csv.lines();
        lines.next();
        let first = lines.next().unwrap();
        assert!(first.starts_with("plaintext,'=1+2,'@cmd,1,"), "{first}");
        assert!(csv.contains(",\"'-boom\n=HYPERLINK(\"\"x\"\")\","), "{csv}");
    }

    #[test]
    fn control_characters_are_shown_not_sent() {
        let mut r = sample_result();
        r.rows[0].variant = Some("v\x1b[31mred".into());
        let csv = render(&r);
        assert!(!csv.contains('\x1b'), "{csv:?}");
        assert!(csv.contains("v\\u{1b}[31mred"), "{csv}");
    }

    #[test]
    fn one_line_per_iteration_with_the_union_of_measurements() {
        let mut r = sample_result();
        r.rows[1].iterations[3].error = Some("crashed, \"SIGSEGV\"".into());
        let csv = render(&r);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "scenario,variant,connections,iteration,excluded,error,pid,outside_window_requests,\
             outside_window_bytes,warnings,app.rss,app.start_time,load.rps,load.requests,load.latency.p99"
        );
        assert_eq!(lines.len(), 1 + 3 + 4);
        assert_eq!(
            lines[1],
            "plaintext,,16,1,false,,1001,2,180,debug_build;client_saturated,61.2,,1232440,12000000,0.57"
        );
        assert_eq!(
            lines[7],
            "plaintext,,64,4,false,\"crashed, \"\"SIGSEGV\"\"\",1004,2,180,debug_build;page_cache,,12,,,"
        );
    }
}
