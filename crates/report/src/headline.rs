//! The answer first: one line per compared pair with the verdict of each key figure,
//! `alpha vs zeta: Requests/sec -41.2% [-44.0%, -38.1%] regression · p99 +62.0% regression`,
//! printed right under a report's title and again as its last lines, so the reader never has
//! to find the primary's line among thirty measurements.
//!
//! The line's pieces are joined by ` · ` and a piece is `NAME CHANGE [LOW, HIGH] VERDICT`
//! (the interval only where there is one), so a script can split it as a person reads it. A
//! line wider than the report wraps at a ` · ` onto an indented line of its own.

use super::comparisons::{change_text, verdict_style, verdict_text};
use super::{format, Block, Cell, Style};
use rigor_model::declarations::{self, Declarations};
use rigor_model::measurements::ids;
use rigor_model::result::Comparison;
use std::collections::BTreeMap;

/// How far a wrapped headline line is indented under its first line.
const INDENT: &str = "  ";

/// Characters a list item's bullet (`• `) takes before its text.
const BULLET: usize = 2;

/// The key figures a headline shows when the reader named none: the primary, then per kind of
/// job a small set (a load job: its capacity when it searched for one, requests/s, p99, the
/// working set or owned memory, the application's mean CPU; a command job: its own figures and its elapsed time), each only
/// where some comparison has it.
pub fn default_key(cmps: &[Comparison], primary: Option<&str>) -> Vec<String> {
    let measured: Vec<&str> = cmps.iter().map(|c| c.measurement.as_str()).collect();
    default_key_of(&measured, primary)
}

/// [`default_key`] of the ids `measured` (in their order), compared or not: the terminal's
/// measurement tables show the same set for a scenario without variants.
pub fn default_key_of(measured: &[&str], primary: Option<&str>) -> Vec<String> {
    let has = |id: &str| measured.contains(&id);
    let mut key: Vec<String> = primary.map(str::to_string).into_iter().collect();
    let load = measured.iter().any(|id| id.starts_with("load."));
    if load {
        let memory = if has(ids::APP_RSS) {
            ids::APP_RSS
        } else {
            ids::APP_OWNED
        };
        for id in [
            ids::LOAD_CAPACITY,
            ids::LOAD_RPS,
            ids::LOAD_LATENCY_P99,
            memory,
            ids::APP_CPU_AVG,
        ] {
            key.push(id.to_string());
        }
    } else {
        for id in measured.iter().filter(|id| id.starts_with("cmd.")) {
            key.push(id.to_string());
        }
        key.push(ids::APP_ELAPSED.to_string());
    }
    let mut seen: Vec<String> = Vec::new();
    key.retain(|id| {
        let keep = has(id) && !seen.contains(id);
        seen.push(id.clone());
        keep
    });
    key
}

/// The key figures: those the reader named (`--key`, `[report] key`), else [`default_key`].
/// The headline, the terminal's comparisons and the HTML's key chart all show these.
pub fn chosen_key(cmps: &[Comparison], named: &[String], primary: Option<&str>) -> Vec<String> {
    if named.is_empty() {
        default_key(cmps, primary)
    } else {
        named.to_vec()
    }
}

/// The headline's lines, one per compared pair in the order the comparisons come (rows in
/// order, each row's candidates in declared order), showing `key` (the reader's `--key` or
/// `[report] key`) or else [`default_key`] of `primary`. A pair shows the key figures it
/// compared (a command's own rows have its figures, the row that ran it its elapsed time) and
/// is left out when it has none; a named id nothing compared is said on every line
/// (`cmd.foo not compared`) rather than silently dropped. Each line is coloured by its worst
/// verdict; empty when nothing was compared.
pub fn lines(
    cmps: &[Comparison],
    decl: &Declarations,
    key: &[String],
    primary: Option<&str>,
) -> Vec<Cell> {
    let key = chosen_key(cmps, key, primary);
    let several_scenarios = cmps.iter().any(|c| c.scenario != cmps[0].scenario);
    let compared = |id: &String| cmps.iter().any(|c| &c.measurement == id);
    pairs(cmps)
        .into_iter()
        .filter(|pair| {
            let has = |id: &String| pair.iter().any(|c| &c.measurement == id);
            key.iter().any(has) || !key.iter().any(compared)
        })
        .map(|pair| {
            let first = pair[0];
            let row = first.row_key();
            let row_name = if several_scenarios {
                row.label()
            } else {
                row.detail()
            };
            let mut head = format!("{} vs {}", first.candidate, first.baseline);
            if !row_name.is_empty() {
                head = format!("{head} ({row_name})");
            }
            if let Some(side) = unmeasured_side(&pair) {
                return Cell::styled(
                    format!("{head}: not compared: no iteration of {side} was measured"),
                    Style::Regression,
                );
            }
            let pieces: Vec<String> = key
                .iter()
                .filter_map(|id| match pair.iter().find(|c| &c.measurement == id) {
                    Some(c) => Some(piece(c, decl)),
                    None => (!compared(id)).then(|| format!("{id} not compared")),
                })
                .collect();
            let style = worst(key.iter().filter_map(|id| {
                pair.iter()
                    .find(|c| &c.measurement == id)
                    .map(|c| verdict_style(c))
            }));
            Cell::styled(format!("{head}: {}", pieces.join(" · ")), style)
        })
        .collect()
}

/// The headline as a report block: `lines` (the pairs' lines, and whatever a caller shows
/// under them, such as pass/fail limits) wrapped to `width` columns. `None` when there is
/// nothing to say.
pub fn block(lines: Vec<Cell>, width: usize) -> Option<Block> {
    if lines.is_empty() {
        return None;
    }
    Some(Block::List(
        lines
            .into_iter()
            .map(|c| Cell::styled(wrap(&c.text, width.saturating_sub(BULLET)), c.style))
            .collect(),
    ))
}

/// The side of a pair none of whose comparisons has a figure (every iteration of it failed, or
/// none was kept): its line says so instead of a verdict per key figure.
fn unmeasured_side<'a>(pair: &[&'a Comparison]) -> Option<&'a str> {
    let first = pair[0];
    if pair.iter().all(|c| c.candidate_median.is_none()) {
        Some(&first.candidate)
    } else if pair.iter().all(|c| c.baseline_median.is_none()) {
        Some(&first.baseline)
    } else {
        None
    }
}

/// The comparisons of each (row, baseline, candidate), in order of appearance.
fn pairs(cmps: &[Comparison]) -> Vec<Vec<&Comparison>> {
    let mut out: Vec<Vec<&Comparison>> = Vec::new();
    // Each pair's place by its key: one pass, however many rows were compared.
    type Key<'a> = (&'a str, &'a BTreeMap<String, String>, &'a str, &'a str);
    let mut at: std::collections::HashMap<Key, usize> = std::collections::HashMap::new();
    for c in cmps {
        let key = (
            c.scenario.as_str(),
            &c.row,
            c.baseline.as_str(),
            c.candidate.as_str(),
        );
        match at.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => out[*e.get()].push(c),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(out.len());
                out.push(vec![c]);
            }
        }
    }
    out
}

/// `Requests/sec -41.2% [-44.0%, -38.1%] regression`; a figure judged on its floor shows its
/// difference in its unit (`RSS +0.04 MiB no change`).
fn piece(c: &Comparison, decl: &Declarations) -> String {
    let mut out = format!("{} {}", short_name(&c.measurement, decl), change_text(c));
    if c.floor.is_some() {
        let unit = (decl.get(&c.measurement).and_then(|d| d.unit.clone()))
            .or_else(|| rigor_model::measurements::info(&c.measurement).map(|m| m.unit.to_string()))
            .filter(|u| !u.is_empty() && u != "count");
        if let Some(u) = unit {
            out.push(' ');
            out.push_str(&u);
        }
    } else {
        if let (Some(l), Some(h)) = (c.ci_low_pct, c.ci_high_pct) {
            out.push(' ');
            out.push_str(&format::ci(l, h));
        }
    }
    out.push(' ');
    out.push_str(verdict_text(c));
    out
}

/// What the headline calls a figure: the names people use for the usual ones, else its label
/// without the unit.
pub(super) fn short_name(id: &str, decl: &Declarations) -> String {
    let known = match id {
        ids::LOAD_RPS => Some("Requests/sec"),
        ids::LOAD_LATENCY_P50 => Some("p50"),
        ids::LOAD_LATENCY_P75 => Some("p75"),
        ids::LOAD_LATENCY_P90 => Some("p90"),
        ids::LOAD_LATENCY_P99 => Some("p99"),
        ids::LOAD_LATENCY_P999 => Some("p99.9"),
        ids::APP_RSS => Some("RSS"),
        ids::APP_OWNED => Some("Owned memory"),
        ids::APP_CPU_AVG => Some("App CPU"),
        ids::APP_ELAPSED => Some("Elapsed"),
        _ => None,
    };
    if let Some(k) = known.filter(|_| decl.get(id).and_then(|d| d.label.as_ref()).is_none()) {
        return k.to_string();
    }
    let label = declarations::label(id, decl);
    match label.rfind(" (") {
        Some(i) if label.ends_with(')') => label[..i].to_string(),
        _ => label,
    }
}

/// The colour of a line: red when any key figure regressed, else green when one improved,
/// else yellow when one is undecided, else plain.
fn worst(styles: impl Iterator<Item = Style>) -> Style {
    let styles: Vec<Style> = styles.collect();
    for s in [Style::Regression, Style::Improvement, Style::Inconclusive] {
        if styles.contains(&s) {
            return s;
        }
    }
    Style::Plain
}

/// Lines printed outside a report's blocks (`rigor bench`'s verdicts), each wrapped as a
/// headline line is to the terminal's width, so they fit where the report fits.
pub fn fit_to_terminal(lines: &[String]) -> Vec<String> {
    let width = super::view::terminal_width();
    lines.iter().map(|l| wrap(l, width)).collect()
}

/// `text` in lines of at most `width` characters, broken after a ` · ` where it can (between
/// words where a piece alone is too wide), every line after the first indented.
fn wrap(text: &str, width: usize) -> String {
    let width = width.max(20);
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    let pieces: Vec<&str> = text.split(" · ").collect();
    for (i, piece) in pieces.iter().enumerate() {
        let joined = if i == 0 {
            piece.to_string()
        } else {
            format!("{current} · {piece}")
        };
        // Room for the ` ·` a break after this piece would add.
        let tail = if i + 1 < pieces.len() { 2 } else { 0 };
        if i == 0 || joined.chars().count() + tail <= width {
            current = joined;
            continue;
        }
        lines.push(std::mem::take(&mut current) + " ·");
        current = format!("{INDENT}{piece}");
    }
    lines.push(current);
    lines
        .into_iter()
        .flat_map(|l| split_words(&l, width))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One line too wide for `width` split between words, the parts after the first indented.
fn split_words(line: &str, width: usize) -> Vec<String> {
    if line.chars().count() <= width {
        return vec![line.to_string()];
    }
    let mut out: Vec<String> = Vec::new();
    // A line wrap() already indented keeps its indent on its first part.
    let mut current = line[..line.len() - line.trim_start().len()].to_string();
    for word in line.split(' ').filter(|w| !w.is_empty()) {
        let candidate = if current.trim().is_empty() {
            format!("{current}{word}")
        } else {
            format!("{current} {word}")
        };
        if candidate.chars().count() > width && !current.trim().is_empty() {
            out.push(std::mem::take(&mut current));
            current = format!("{INDENT}{word}");
        } else {
            current = candidate;
        }
    }
    out.push(current);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::sample_result;

    #[test]
    fn one_line_per_pair_with_the_key_figures() {
        let r = sample_result();
        let lines = lines(&r.comparisons, &r.measurements, &[], Some(ids::LOAD_RPS));
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(
            lines[0].text,
            "slow vs base (connections=16): Requests/sec -10.8% [-12.0%, -9.5%] regression"
        );
        assert_eq!(lines[0].style, Style::Regression);
    }

    /// A candidate of which no iteration was measured (all failed) is said to be so, not given
    /// an "inconclusive" verdict per key figure as if it had been compared.
    #[test]
    fn a_side_with_no_measured_iteration_is_not_compared() {
        let mut r = sample_result();
        for c in &mut r.comparisons {
            c.candidate_median = None;
            c.change_pct = None;
            c.ci_low_pct = None;
            c.ci_high_pct = None;
            c.verdict = rigor_model::result::Verdict::Inconclusive;
        }
        let lines = lines(&r.comparisons, &r.measurements, &[], Some(ids::LOAD_RPS));
        assert_eq!(
            lines[0].text,
            "slow vs base (connections=16): not compared: no iteration of slow was measured"
        );
        assert_eq!(lines[0].style, Style::Regression);
    }

    #[test]
    fn a_named_key_figure_nobody_compared_is_said() {
        let r = sample_result();
        let key = vec![ids::LOAD_RPS.to_string(), "cmd.nope".to_string()];
        let lines = lines(&r.comparisons, &r.measurements, &key, None);
        assert!(
            lines[0].text.ends_with(" · cmd.nope not compared"),
            "{}",
            lines[0].text
        );
    }

    #[test]
    fn long_lines_wrap_at_a_separator_and_indent() {
        let text = "alpha vs zeta (connections=64): Requests/sec -41.2% [-44.0%, -38.1%] \
                    regression · p99 +62.0% [+50.1%, +70.0%] regression · RSS +0.3% no change";
        let wrapped = wrap(text, 90);
        let parts: Vec<&str> = wrapped.lines().collect();
        assert_eq!(parts.len(), 2, "{wrapped}");
        for p in &parts {
            assert!(p.chars().count() <= 90, "{p:?} in {wrapped}");
        }
        // Narrower than a piece: split between words, still within the width.
        // …and every line after the first indented, also the parts of an indented piece.
        let narrow = wrap(text, 40);
        for (i, p) in narrow.lines().enumerate() {
            assert!(p.chars().count() <= 40, "{p:?}");
            assert_eq!(i > 0, p.starts_with(INDENT), "{p:?} in\n{narrow}");
        }
        assert!(parts[1].starts_with(INDENT), "{wrapped}");
        assert!(parts[0].ends_with(" ·"), "{wrapped}");
        // Joined back, nothing was lost.
        let joined: String = parts.iter().map(|p| p.trim()).collect::<Vec<_>>().join(" ");
        assert_eq!(joined, text);
        assert_eq!(wrap("short · line", 60), "short · line");
        // A line that fills the width exactly with a piece after it breaks before that piece:
        // its ` ·` never lands on a line of its own.
        let exact = format!("{} · {} · z", "a".repeat(9), "b".repeat(8));
        let lines: Vec<String> = wrap(&exact, 20).lines().map(String::from).collect();
        assert!(
            lines
                .iter()
                .all(|l| l.chars().count() <= 20 && l.trim() != "·"),
            "{lines:?}"
        );
    }

    #[test]
    fn default_key_per_kind_of_job() {
        let mut r = sample_result();
        let base = r.comparisons[0].clone();
        let with = |id: &str| Comparison {
            measurement: id.into(),
            ..base.clone()
        };
        r.comparisons = vec![
            with(ids::APP_CPU),
            with(ids::APP_CPU_AVG),
            with(ids::APP_OWNED),
            with(ids::LOAD_LATENCY_P99),
            with(ids::LOAD_RPS),
            with(ids::LOAD_LATENCY_MEAN),
        ];
        assert_eq!(
            default_key(&r.comparisons, Some(ids::LOAD_LATENCY_MEAN)),
            vec![
                ids::LOAD_LATENCY_MEAN,
                ids::LOAD_RPS,
                ids::LOAD_LATENCY_P99,
                ids::APP_OWNED,
                ids::APP_CPU_AVG
            ]
        );
        // A load that searched for its capacity leads with it.
        r.comparisons = vec![with(ids::LOAD_RPS), with(ids::LOAD_CAPACITY)];
        assert_eq!(
            default_key(&r.comparisons, None),
            vec![ids::LOAD_CAPACITY, ids::LOAD_RPS]
        );
        r.comparisons = vec![with(ids::APP_ELAPSED), with("cmd.b"), with("cmd.a")];
        assert_eq!(
            default_key(&r.comparisons, Some("cmd.a")),
            vec!["cmd.a", "cmd.b", ids::APP_ELAPSED]
        );
    }
}
