//! Comparison tables: per compared row, the baseline's median, then per candidate its median,
//! the change of the medians, the 95% CI, the p-value and the verdict, followed by notes that
//! explain the cells without a verdict. `rigor run` (variants) and `rigor compare` (saved
//! results) show them alike.

use super::{format, Block, Cell, Style, Table};
use rigor_model::declarations::{self, Declarations};
use rigor_model::format::confidence_label;
use rigor_model::result::{Comparison, Method, Verdict};
use std::collections::BTreeMap;

/// What the columns of an unpaired comparison are (two independent samples).
const LEGEND: &str = "Δ median: candidate median vs baseline median · 95% CI: \
     Hodges–Lehmann interval of the ratio (the typical pairwise change) · p: Mann–Whitney \
     (exact for small samples) · no verdict where the interval misses the medians' change";

/// What the columns of a paired comparison are (variants of one run, round by round).
const LEGEND_PAIRED: &str = "Δ round: median of the within-round changes (each candidate \
     iteration against the baseline's of the same interleaved round) · CI: Hodges–Lehmann \
     interval of the within-round ratio · p: Wilcoxon signed-rank · no verdict where the \
     interval misses Δ round";

/// The cells each candidate adds to a line, after its median; the CI's label carries its
/// confidence ([`headers`]).
const PER_CANDIDATE: [&str; 4] = ["Δ median", "95% CI", "p", "verdict"];

/// The headers of a candidate's columns for comparisons done with `method` at `confidence`:
/// the change is the medians' one unpaired, the within-round one paired, and the interval is
/// labelled with its own confidence (a look of `--until-conclusive` is not 95%).
fn headers(method: Option<Method>, confidence: Option<f64>) -> [String; 4] {
    let delta = match method {
        Some(Method::Paired) => "Δ round",
        _ => PER_CANDIDATE[0],
    };
    let ci = match confidence {
        Some(c) => format!("{} CI", confidence_label(c)),
        None => PER_CANDIDATE[1].to_string(),
    };
    [
        delta.into(),
        ci,
        PER_CANDIDATE[2].into(),
        PER_CANDIDATE[3].into(),
    ]
}

/// [`LEGEND`] in one line of a terminal, for its short report.
const SHORT_LEGEND: &str = "Δ median: the medians' change · CI: Hodges–Lehmann interval of the \
     ratio · p: Mann–Whitney";

/// [`LEGEND_PAIRED`] in one line of a terminal, for its short report.
const SHORT_LEGEND_PAIRED: &str = "Δ round: median within-round change · CI: Hodges–Lehmann \
     interval of it · p: Wilcoxon signed-rank";

/// The legend lines the tables need: the unpaired one, the paired one, or both; `short`, a
/// line each.
fn legends(cmps: &[Comparison], short: bool) -> Vec<Block> {
    let paired = cmps.iter().any(|c| c.method == Some(Method::Paired));
    let unpaired = cmps.iter().any(|c| c.method != Some(Method::Paired));
    let mut out = Vec::new();
    if unpaired {
        out.push(Block::Text(
            if short { SHORT_LEGEND } else { LEGEND }.into(),
        ));
    }
    if paired {
        out.push(Block::Text(
            if short {
                SHORT_LEGEND_PAIRED
            } else {
                LEGEND_PAIRED
            }
            .into(),
        ));
    }
    out
}

/// Comparison tables, one per scenario and matrix row in order of appearance, each headed by
/// the row (its scenario too when several scenarios were compared, or when the comparison names
/// its scenario itself, as `rigor compare` does) and followed by its notes. A measurement with
/// no known direction shows `no verdict`.
pub fn comparison_blocks(cmps: &[Comparison], decl: &Declarations) -> Vec<Block> {
    comparison_blocks_noting(cmps, decl, &|_| true, false)
}

/// [`comparison_blocks`] with the notes of the comparisons `noted` accepts alone: the terminal
/// notes its primary figure's comparisons (the same sentence for thirty measurements would
/// bury the tables), the files every one. With `joined` (the terminal's short report), a
/// row's table of the same columns as the one before it, with no notes between them, joins
/// it under a line naming the row.
pub fn comparison_blocks_noting(
    cmps: &[Comparison],
    decl: &Declarations,
    noted: &dyn Fn(&Comparison) -> bool,
    joined: bool,
) -> Vec<Block> {
    if joined {
        return joined_blocks(cmps, decl, noted);
    }
    let groups = groups(cmps);
    let several_scenarios = groups
        .iter()
        .any(|g| g[0].scenario != groups[0][0].scenario);
    let mut blocks = legends(cmps, false);
    for members in groups {
        let heading = row_heading(members[0], several_scenarios);
        let candidates = distinct(&members, |c| c.candidate.as_str());
        if !heading.is_empty() {
            blocks.push(Block::Heading(3, heading));
        }
        blocks.push(Block::Table(table(&members, &candidates, decl)));
        let noted: Vec<&Comparison> = members.iter().copied().filter(|c| noted(c)).collect();
        let notes = notes(&noted, candidates.len() > 1, decl);
        if !notes.is_empty() {
            blocks.push(Block::List(notes));
        }
        blocks.extend(adjusted_block(&members, candidates.len() > 1, decl));
    }
    blocks
}

/// The row a comparison belongs to, as its heading names it: its scenario too when several
/// scenarios were compared, or when the comparison names its scenario itself (as `rigor
/// compare` does).
fn row_heading(first: &Comparison, several_scenarios: bool) -> String {
    let key = first.row_key();
    if several_scenarios || first.row.contains_key("scenario") {
        key.label()
    } else {
        key.detail()
    }
}

/// The lines of the comparisons adjusted for interference, as a list.
fn adjusted_block(
    members: &[&Comparison],
    name_candidate: bool,
    decl: &Declarations,
) -> Option<Block> {
    let adjusted: Vec<Cell> = members
        .iter()
        .filter_map(|c| adjusted_line(c, name_candidate, decl))
        .collect();
    (!adjusted.is_empty()).then_some(Block::List(adjusted))
}

/// The terminal's short comparison: one table for every compared row of the same columns (a
/// sweep's points are its lines, under the measurement they compare), then the notes of the
/// comparisons `noted` accepts, each said once for every row it applies to, and the advice on
/// iterations in one line.
fn joined_blocks(
    cmps: &[Comparison],
    decl: &Declarations,
    noted: &dyn Fn(&Comparison) -> bool,
) -> Vec<Block> {
    let groups = groups(cmps);
    let several_scenarios = groups
        .iter()
        .any(|g| g[0].scenario != groups[0][0].scenario);
    // The rows of the same columns, in order of appearance.
    let mut parts: Vec<(Table, Vec<Vec<&Comparison>>)> = Vec::new();
    for members in groups {
        let candidates = distinct(&members, |c| c.candidate.as_str());
        let t = table(&members, &candidates, decl);
        match parts.iter_mut().find(|(p, _)| p.header == t.header) {
            Some((_, rows)) => rows.push(members),
            None => parts.push((t, vec![members])),
        }
    }
    let mut blocks = legends(cmps, true);
    for (mut t, rows) in parts {
        let labelled: Vec<(String, &[&Comparison])> = rows
            .iter()
            .map(|m| (row_heading(m[0], several_scenarios), m.as_slice()))
            .collect();
        let candidates = distinct(rows[0].as_slice(), |c| c.candidate.as_str());
        t.rows = joined_lines(&labelled, &candidates, t.header.len(), decl);
        blocks.push(Block::Table(t));
        let members: Vec<&Comparison> = rows.iter().flatten().copied().collect();
        let noted: Vec<(&str, &Comparison)> = labelled
            .iter()
            .flat_map(|(label, m)| m.iter().map(move |c| (label.as_str(), *c)))
            .filter(|(_, c)| noted(c))
            .collect();
        let notes = notes_across_rows(&noted, candidates.len() > 1, decl);
        if !notes.is_empty() {
            blocks.push(Block::List(notes));
        }
        blocks.extend(adjusted_block(&members, candidates.len() > 1, decl));
    }
    blocks
}

/// The lines of one joined table. When a measurement was compared in several rows (a sweep),
/// each measurement heads its rows, a line per row; otherwise each row heads its measurements.
fn joined_lines(
    rows: &[(String, &[&Comparison])],
    candidates: &[&str],
    columns: usize,
    decl: &Declarations,
) -> Vec<Vec<Cell>> {
    let all: Vec<&Comparison> = rows.iter().flat_map(|(_, m)| m.iter().copied()).collect();
    let ids = distinct(&all, |c| c.measurement.as_str());
    let rows_of = |id: &str| -> Vec<&(String, &[&Comparison])> {
        rows.iter()
            .filter(|(_, m)| m.iter().any(|c| c.measurement == id))
            .collect()
    };
    let heading = |text: String| {
        let mut l = vec![Cell::plain(text)];
        l.extend((1..columns).map(|_| Cell::plain("")));
        l
    };
    let indented = |mut l: Vec<Cell>, label: &str| {
        l[0].text = format!("  {label}");
        l
    };
    let mut lines = Vec::new();
    if ids.iter().any(|id| rows_of(id).len() > 1) {
        for id in ids {
            let of = rows_of(id);
            if of.len() == 1 && of[0].0.is_empty() {
                lines.push(line(of[0].1, candidates, id, decl));
                continue;
            }
            lines.push(heading(declarations::label(id, decl)));
            for (label, members) in of {
                let l = line(members, candidates, id, decl);
                lines.push(indented(l, label));
            }
        }
        return lines;
    }
    for (label, members) in rows {
        let ids = distinct(members, |c| c.measurement.as_str());
        if !label.is_empty() {
            lines.push(heading(label.clone()));
        }
        for id in ids {
            let l = line(members, candidates, id, decl);
            lines.push(if label.is_empty() {
                l
            } else {
                let text = l[0].text.clone();
                indented(l, &text)
            });
        }
    }
    lines
}

/// The comparisons of each compared row (scenario and matrix values), in order of appearance.
fn groups(cmps: &[Comparison]) -> Vec<Vec<&Comparison>> {
    let mut groups: Vec<Vec<&Comparison>> = Vec::new();
    // Each group's place by its key: one pass, however many rows were compared.
    let mut at: std::collections::HashMap<(&str, &BTreeMap<String, String>), usize> =
        std::collections::HashMap::new();
    for c in cmps {
        match at.entry((&c.scenario, &c.row)) {
            std::collections::hash_map::Entry::Occupied(e) => groups[*e.get()].push(c),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(groups.len());
                groups.push(vec![c]);
            }
        }
    }
    groups
}

/// The distinct values of `f` over `members`, in order of appearance.
fn distinct<'a>(members: &[&'a Comparison], f: impl Fn(&'a Comparison) -> &'a str) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for c in members {
        let v = f(c);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// One compared row's table: a line per measurement, the baseline's median, then each
/// candidate's columns.
fn table(members: &[&Comparison], candidates: &[&str], decl: &Declarations) -> Table {
    let mut header = vec!["measurement".to_string(), members[0].baseline.clone()];
    for cand in candidates {
        header.push(cand.to_string());
        let first = members.iter().find(|c| c.candidate == *cand);
        let method = first.and_then(|c| c.method);
        let paired_alike = members
            .iter()
            .filter(|c| c.candidate == *cand)
            .all(|c| c.method == method);
        let mut cells = headers(method, first.and_then(|c| c.confidence));
        if !paired_alike {
            // Some lines paired, some not: each line's change is its own method's.
            cells[0] = "Δ".into();
        }
        header.extend(cells);
    }
    let rows = distinct(members, |c| c.measurement.as_str())
        .into_iter()
        .map(|id| line(members, candidates, id, decl))
        .collect();
    let droppable = droppable(&header);
    Table {
        header,
        rows,
        numeric: true,
        droppable,
    }
}

/// The columns a narrow terminal leaves out first: every candidate's `p`, then its interval
/// (the change and the verdict say the answer; both stay in the files).
fn droppable(header: &[String]) -> Vec<Vec<usize>> {
    let of = |is: &dyn Fn(&str) -> bool| -> Vec<usize> {
        (2..header.len()).filter(|&i| is(&header[i])).collect()
    };
    vec![of(&|h| h == PER_CANDIDATE[2]), of(&|h| h.ends_with(" CI"))]
}

/// The line of one measurement: its label, the baseline's median, each candidate's columns
/// (dashes where a candidate lacks the measurement).
fn line(members: &[&Comparison], candidates: &[&str], id: &str, decl: &Declarations) -> Vec<Cell> {
    let of = |cand: &str| {
        members
            .iter()
            .find(|c| c.measurement == id && c.candidate == cand)
            .copied()
    };
    let base_median = candidates
        .iter()
        .filter_map(|cand| of(cand))
        .find_map(|c| c.baseline_median);
    let mut line = vec![
        Cell::plain(declarations::label(id, decl)),
        Cell::plain(opt(base_median, format::number)),
    ];
    for cand in candidates {
        match of(cand) {
            Some(c) => line.extend(candidate_cells(c)),
            None => line.extend((0..=PER_CANDIDATE.len()).map(|_| Cell::plain("—"))),
        }
    }
    line
}

/// A candidate's median, change, interval, p-value and verdict.
fn candidate_cells(c: &Comparison) -> [Cell; 5] {
    [
        Cell::plain(opt(c.candidate_median, format::number)),
        Cell::plain(change_text(c)),
        Cell::plain(interval_text(c).unwrap_or_else(|| "—".into())),
        Cell::plain(opt(c.p_value, format::p_value)),
        verdict_cell(c),
    ]
}

/// The change as every report shows it: the medians' change in %, or, for a figure judged on
/// its absolute floor, the medians' difference in its own unit (one more page of cache is not
/// +100%).
pub fn change_text(c: &Comparison) -> String {
    match (c.floor, c.baseline_median, c.candidate_median) {
        (Some(_), Some(b), Some(m)) => signed_number(m - b),
        _ => opt(c.change_pct, format::signed_pct),
    }
}

/// The interval as every report shows it; for a figure judged on its floor, the floor it was
/// judged on instead of an interval in % of a near-zero baseline. `None` when there is neither.
pub fn interval_text(c: &Comparison) -> Option<String> {
    if let Some(f) = c.floor {
        return Some(format!("floor ±{}", format::number(f)));
    }
    match (c.ci_low_pct, c.ci_high_pct) {
        (Some(l), Some(h)) => Some(format::ci(l, h)),
        _ => None,
    }
}

/// `+0.25`, `-2`, `0`: a difference with its sign.
fn signed_number(v: f64) -> String {
    let text = format::number(v);
    if v > 0.0 {
        format!("+{text}")
    } else {
        text
    }
}

/// The verdict as a table shows it; an id whose direction nobody declared has none to show.
fn verdict_cell(c: &Comparison) -> Cell {
    Cell::styled(verdict_text(c), verdict_style(c))
}

/// The verdict's words: its name, or `no verdict` for an id whose direction nobody declared.
pub fn verdict_text(c: &Comparison) -> &'static str {
    if c.direction.is_none() && c.verdict == Verdict::Inconclusive {
        return "no verdict";
    }
    c.verdict.as_str()
}

/// The verdict's colour.
pub fn verdict_style(c: &Comparison) -> Style {
    if c.direction.is_none() && c.verdict == Verdict::Inconclusive {
        return Style::Inconclusive;
    }
    Style::of_verdict(c.verdict)
}

/// Notes grouped so one sentence covers every measurement it applies to, instead of repeating
/// "n=2 vs 2 can never reach…" once per line.
fn notes(members: &[&Comparison], name_candidate: bool, decl: &Declarations) -> Vec<Cell> {
    let mut notes: Vec<(&str, &str, Vec<String>)> = Vec::new();
    for c in members {
        let Some(note) = c.note.as_deref() else {
            continue;
        };
        let label = declarations::label(&c.measurement, decl);
        match notes
            .iter_mut()
            .find(|(cand, n, _)| *cand == c.candidate && *n == note)
        {
            Some((_, _, labels)) => labels.push(label),
            None => notes.push((&c.candidate, note, vec![label])),
        }
    }
    notes
        .into_iter()
        .map(|(cand, note, labels)| {
            let who = if name_candidate {
                format!("{cand} · ")
            } else {
                String::new()
            };
            Cell::styled(
                format!("{who}{}: {note}", labels.join(", ")),
                Style::Inconclusive,
            )
        })
        .collect()
}

/// The notes of comparisons in several rows (each with its row's label). A clause of a note
/// (its `; `-separated parts) that several rows share is said once, naming the measurements
/// and how many rows it applies to; the advice on iterations of several rows is one line (the
/// largest `-i` any of them needs, and how many would need more than any practical count);
/// what is left of a row's note stays one line naming the row.
fn notes_across_rows(
    noted: &[(&str, &Comparison)],
    name_candidate: bool,
    decl: &Declarations,
) -> Vec<Cell> {
    use rigor_analysis::sufficiency::{settle_advice, Settle};
    let clauses = |c: &Comparison| -> Vec<String> {
        c.note
            .as_deref()
            .map(|n| n.split("; ").map(str::to_string).collect())
            .unwrap_or_default()
    };
    // How many rows share each clause, and how many comparisons advise on iterations, per
    // candidate.
    let mut shared: Vec<(&str, String, Vec<&str>)> = Vec::new();
    let mut advising: Vec<(&str, usize)> = Vec::new();
    for &(row, c) in noted {
        for clause in clauses(c) {
            if settle_advice(&clause).is_some() {
                match advising.iter_mut().find(|a| a.0 == c.candidate) {
                    Some(a) => a.1 += 1,
                    None => advising.push((&c.candidate, 1)),
                }
                continue;
            }
            match shared
                .iter_mut()
                .find(|s| s.0 == c.candidate && s.1 == clause)
            {
                Some(s) if !s.2.contains(&row) => s.2.push(row),
                Some(_) => {}
                None => shared.push((&c.candidate, clause, vec![row])),
            }
        }
    }
    let is_shared = |cand: &str, clause: &str| {
        shared
            .iter()
            .any(|s| s.0 == cand && s.1 == clause && s.2.len() > 1)
    };
    let advised_once = |cand: &str| advising.iter().any(|a| a.0 == cand && a.1 == 1);
    /// One line to say and where it applies: the candidate, the measurements, the rows.
    struct Said<'a> {
        candidate: &'a str,
        text: String,
        labels: Vec<String>,
        rows: Vec<&'a str>,
    }
    let mut said: Vec<Said> = Vec::new();
    // Where the advice on iterations applies (its text unused), and what each row advises.
    let mut advice: Vec<(Said, Vec<Settle>)> = Vec::new();
    for &(row, c) in noted {
        let label = declarations::label(&c.measurement, decl);
        let mut rest: Vec<String> = Vec::new();
        let mut lines: Vec<String> = Vec::new();
        for clause in clauses(c) {
            match settle_advice(&clause) {
                Some(settle) if !advised_once(&c.candidate) => {
                    let at = match advice.iter().position(|a| a.0.candidate == c.candidate) {
                        Some(at) => at,
                        None => {
                            let empty = Said {
                                candidate: &c.candidate,
                                text: String::new(),
                                labels: Vec::new(),
                                rows: Vec::new(),
                            };
                            advice.push((empty, Vec::new()));
                            advice.len() - 1
                        }
                    };
                    let (a, settles) = &mut advice[at];
                    if !a.labels.contains(&label) {
                        a.labels.push(label.clone());
                    }
                    a.rows.push(row);
                    settles.push(settle);
                }
                _ if is_shared(&c.candidate, &clause) => lines.push(clause),
                _ => rest.push(clause),
            }
        }
        if !rest.is_empty() {
            lines.push(rest.join("; "));
        }
        for text in lines {
            match said
                .iter_mut()
                .find(|s| s.candidate == c.candidate && s.text == text)
            {
                Some(s) => {
                    if !s.labels.contains(&label) {
                        s.labels.push(label.clone());
                    }
                    s.rows.push(row);
                }
                None => said.push(Said {
                    candidate: &c.candidate,
                    text,
                    labels: vec![label.clone()],
                    rows: vec![row],
                }),
            }
        }
    }
    let who = |candidate: &str, labels: &[String], rows: &[&str]| {
        let mut head = if name_candidate {
            format!("{candidate} · ")
        } else {
            String::new()
        };
        let mut distinct_rows: Vec<&str> = Vec::new();
        for r in rows {
            if !distinct_rows.contains(r) {
                distinct_rows.push(r);
            }
        }
        match distinct_rows.as_slice() {
            [] | [""] => head.push_str(&labels.join(", ")),
            [one] => head.push_str(&format!("{one} · {}", labels.join(", "))),
            many => head.push_str(&format!("{} in {} rows", labels.join(", "), many.len())),
        }
        head
    };
    let mut out: Vec<Cell> = said
        .iter()
        .map(|s| {
            Cell::styled(
                format!("{}: {}", who(s.candidate, &s.labels, &s.rows), s.text),
                Style::Inconclusive,
            )
        })
        .collect();
    for (a, settles) in &advice {
        let most = settles
            .iter()
            .filter_map(|s| match s {
                Settle::Iterations(i) => Some(*i),
                Settle::Beyond => None,
            })
            .max();
        let settling = settles
            .iter()
            .filter(|s| matches!(s, Settle::Iterations(_)))
            .count();
        let beyond = settles.len() - settling;
        let max = rigor_analysis::sufficiency::MAX_SUGGESTED_ITERATIONS;
        let mut parts = Vec::new();
        if let Some(most) = most {
            parts.push(if settling == 1 {
                format!("-i {most} would likely settle one")
            } else {
                format!("-i {most} would likely settle {settling} (the most any of them needs)")
            });
        }
        if beyond > 0 {
            parts.push(format!(
                "{beyond} would need over {max} iterations per side (quiet the machine, or \
                 accept {} as unsettled)",
                if beyond == 1 { "it" } else { "them" }
            ));
        }
        out.push(Cell::styled(
            format!(
                "{}: {}",
                who(a.candidate, &a.labels, &a.rows),
                parts.join("; ")
            ),
            Style::Inconclusive,
        ));
    }
    out
}

/// The noise floor of each group, one line each under its own heading: the smallest change the
/// run could tell from no change at the n it ended with, and what the threshold needs.
pub fn noise_floor_blocks(floors: &[rigor_model::result::NoiseFloor]) -> Vec<Block> {
    if floors.is_empty() {
        return Vec::new();
    }
    // With several scenarios, each line names its scenario (rows without variables would
    // otherwise read alike).
    let several = floors.iter().any(|f| f.scenario != floors[0].scenario);
    let lines = floors
        .iter()
        .map(|f| {
            let row = rigor_model::result::RowKey::of_map(&f.scenario, &f.row);
            let key = if several { row.label() } else { row.detail() };
            let sentence = rigor_analysis::noise_floor::sentence(f);
            let text = if key.is_empty() {
                sentence
            } else {
                format!("{key}: {sentence}")
            };
            Cell::plain(text)
        })
        .collect();
    vec![Block::Heading(2, "noise floor".into()), Block::List(lines)]
}

/// One line for a comparison adjusted for interference: the adjusted change and interval, how
/// much variance went with it, and that the verdict stands on the unadjusted figures. Only an
/// adjustment that removed at least a tenth of the variance is worth a line: one that removed
/// none (or added noise) says nothing the unadjusted figures do not, and stays in the JSON.
fn adjusted_line(c: &Comparison, name_candidate: bool, decl: &Declarations) -> Option<Cell> {
    let a = c
        .adjusted
        .as_ref()
        .filter(|a| a.variance_reduction >= 0.1)?;
    let who = if name_candidate {
        format!("{} · ", c.candidate)
    } else {
        String::new()
    };
    let ci = match (a.ci_low_pct, a.ci_high_pct) {
        (Some(l), Some(h)) => format!(" {}", format::ci(l, h)),
        _ => String::new(),
    };
    Some(Cell::plain(format!(
        "{who}{} adjusted for interference (θ {:.4} per point): {}{ci}, {:.0}% of the \
         variance removed; the verdict stands on the unadjusted figures",
        declarations::label(&c.measurement, decl),
        a.theta,
        format::signed_pct(a.change_pct),
        a.variance_reduction * 100.0
    )))
}

fn opt(v: Option<f64>, f: fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "—".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn noise_floors_of_several_scenarios_name_their_scenario() {
        let floor = |scenario: &str| rigor_model::result::NoiseFloor {
            scenario: scenario.into(),
            row: BTreeMap::new(),
            measurement: "load.rps".into(),
            method: rigor_model::result::Method::Unpaired,
            pairs: 3,
            spread_pct: 5.0,
            detectable_pct: f64::INFINITY,
            threshold_pct: 2.0,
            verdict_pct: f64::INFINITY,
            pairs_for_threshold: Some(900),
        };
        let text = |floors: &[rigor_model::result::NoiseFloor]| match &noise_floor_blocks(floors)[1]
        {
            Block::List(items) => items.iter().map(|i| i.text.clone()).collect::<Vec<_>>(),
            _ => panic!("the floors are not a list"),
        };
        let two = text(&[floor("plaintext"), floor("json")]);
        assert!(two[0].starts_with("plaintext: "), "{two:?}");
        assert!(two[1].starts_with("json: "), "{two:?}");
        let one = text(&[floor("plaintext")]);
        assert!(!one[0].starts_with("plaintext"), "{one:?}");
    }

    /// An inconclusive comparison of `id` in `scenario`'s row `row` (a map as comparisons
    /// carry it).
    fn mk(scenario: &str, row: &[(&str, &str)], id: &str) -> Comparison {
        Comparison {
            scenario: scenario.into(),
            shift_pct: None,
            direction: Some("lower".into()),
            row: row
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            measurement: id.into(),
            baseline: "a".into(),
            candidate: "b".into(),
            baseline_median: Some(1.0),
            candidate_median: Some(1.0),
            change_pct: Some(0.0),
            ci_low_pct: None,
            ci_high_pct: None,
            p_value: None,
            verdict: Verdict::Inconclusive,
            note: Some(
                "n=2 vs 2 can never reach 95% confidence: run more iterations (-i 5)".into(),
            ),
            method: None,
            pairs: None,
            confidence: None,
            adjusted: None,
            floor: None,
        }
    }

    #[test]
    fn inconclusive_notes_are_grouped() {
        let blocks = comparison_blocks(
            &[
                mk("plaintext", &[], "load.rps"),
                mk("plaintext", &[], "app.rss"),
            ],
            &Declarations::new(),
        );
        let Block::List(notes) = &blocks[2] else {
            panic!("{blocks:?}")
        };
        assert_eq!(
            notes,
            &vec![Cell::styled(
                "Requests/sec (1/s), Max Working Set (MiB): n=2 vs 2 can never reach 95% \
                 confidence: run more iterations (-i 5)",
                Style::Inconclusive
            )]
        );
    }

    fn headings(blocks: &[Block]) -> Vec<&str> {
        blocks
            .iter()
            .filter_map(|b| match b {
                Block::Heading(3, h) => Some(h.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn headings_name_the_row_and_the_scenario_only_where_it_tells_rows_apart() {
        let none = Declarations::new();
        let one_scenario = [
            mk("plaintext", &[("connections", "16")], "load.rps"),
            mk("plaintext", &[("connections", "64")], "load.rps"),
            mk("plaintext", &[("connections", "64")], "app.rss"),
        ];
        let blocks = comparison_blocks(&one_scenario, &none);
        assert_eq!(headings(&blocks), vec!["connections=16", "connections=64"]);
        let two = [
            mk("plaintext", &[("connections", "16")], "load.rps"),
            mk("json", &[("connections", "16")], "load.rps"),
        ];
        let blocks = comparison_blocks(&two, &none);
        assert_eq!(
            headings(&blocks),
            vec!["plaintext connections=16", "json connections=16"]
        );
        // `rigor compare` names the scenario and variant in the row itself.
        let saved = [mk(
            "plaintext",
            &[
                ("connections", "16"),
                ("scenario", "plaintext"),
                ("variant", "slow"),
            ],
            "load.rps",
        )];
        let blocks = comparison_blocks(&saved, &none);
        assert_eq!(headings(&blocks), vec!["plaintext connections=16 slow"]);
        assert!(headings(&comparison_blocks(
            &[mk("plaintext", &[], "load.rps")],
            &none
        ))
        .is_empty());
    }

    #[test]
    fn a_candidate_without_the_measurement_shows_dashes() {
        let mut c = mk("plaintext", &[], "load.rps");
        c.candidate = "c".into();
        let blocks = comparison_blocks(
            &[
                mk("plaintext", &[], "load.rps"),
                mk("plaintext", &[], "app.rss"),
                c,
            ],
            &Declarations::new(),
        );
        let Block::Table(t) = &blocks[1] else {
            panic!("{blocks:?}")
        };
        assert_eq!(t.header.len(), 2 + 2 * 5);
        let rss: Vec<&str> = t.rows[1].iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            rss,
            vec![
                "Max Working Set (MiB)",
                "1",
                "1",
                "0.0%",
                "—",
                "—",
                "inconclusive",
                "—",
                "—",
                "—",
                "—",
                "—"
            ]
        );
    }

    /// A sweep of `id` over `clients`, each point noted with `note` (its `-i` advice varying).
    fn sweep(id: &str, notes: &[&str]) -> Vec<Comparison> {
        notes
            .iter()
            .enumerate()
            .map(|(i, note)| {
                let clients = (1 << i).to_string();
                let mut c = mk("pingpong", &[("clients", &clients)], id);
                c.note = Some(note.to_string());
                c.p_value = Some(0.5);
                c.ci_low_pct = Some(-10.0);
                c.ci_high_pct = Some(5.0);
                c
            })
            .collect()
    }

    #[test]
    fn the_terminal_joins_a_sweep_into_one_table_and_says_each_note_once() {
        let paired = "5 round(s) paired, too few for the paired test: compared unpaired";
        let settle = |i: usize| rigor_analysis::sufficiency::settle_note(5, 0, Some(i), 2.0, None);
        let notes = [
            format!("{paired}; {}", settle(20)),
            format!("{paired}; {}", settle(90)),
            format!("{paired}; {}", settle(500)),
            format!("{paired}; the interval is odd here"),
        ];
        let notes: Vec<&str> = notes.iter().map(String::as_str).collect();
        let mut cmps = sweep("load.rps", &notes);
        // The same rows' elapsed time, without notes.
        for mut c in sweep("app.elapsed", &["", "", "", ""]) {
            c.note = None;
            cmps.push(c);
        }
        let noted = |c: &Comparison| c.measurement == "load.rps";
        let blocks = comparison_blocks_noting(&cmps, &Declarations::new(), &noted, true);
        let tables: Vec<&Table> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(tables.len(), 1, "{blocks:?}");
        let labels: Vec<&str> = tables[0].rows.iter().map(|r| r[0].text.as_str()).collect();
        assert_eq!(
            labels,
            vec![
                "Requests/sec (1/s)",
                "  clients=1",
                "  clients=2",
                "  clients=4",
                "  clients=8",
                "Elapsed Time (ms)",
                "  clients=1",
                "  clients=2",
                "  clients=4",
                "  clients=8",
            ]
        );
        // p first, then the interval, may go on a narrow terminal.
        assert_eq!(tables[0].droppable, vec![vec![5], vec![4]]);
        let Some(Block::List(said)) = blocks.iter().find(|b| matches!(b, Block::List(_))) else {
            panic!("no notes: {blocks:?}")
        };
        let said: Vec<&str> = said.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            said,
            vec![
                format!("Requests/sec (1/s) in 4 rows: {paired}").as_str(),
                "clients=8 · Requests/sec (1/s): the interval is odd here",
                "Requests/sec (1/s) in 3 rows: -i 90 would likely settle 2 (the most any of them \
                 needs); 1 would need over 100 iterations per side (quiet the machine, or accept \
                 it as unsettled)",
            ]
        );
        // The files keep a table and the whole note per row.
        let files = comparison_blocks(&cmps, &Declarations::new());
        let tables = files
            .iter()
            .filter(|b| matches!(b, Block::Table(_)))
            .count();
        assert_eq!(tables, 4);
        let notes: Vec<&Cell> = files
            .iter()
            .filter_map(|b| match b {
                Block::List(l) => Some(l),
                _ => None,
            })
            .flatten()
            .collect();
        assert!(notes[1].text.ends_with("(-i 90)"), "{notes:?}");
    }

    #[test]
    fn one_rows_advice_stays_its_own_line() {
        let note = rigor_analysis::sufficiency::settle_note(5, 0, Some(30), 2.0, None);
        let cmps = sweep(
            "load.rps",
            &[&note, "n=2 vs 2 can never reach 95% confidence"],
        );
        let blocks = comparison_blocks_noting(&cmps, &Declarations::new(), &|_| true, true);
        let Some(Block::List(said)) = blocks.iter().find(|b| matches!(b, Block::List(_))) else {
            panic!("no notes: {blocks:?}")
        };
        assert_eq!(
            said[0].text,
            format!("clients=1 · Requests/sec (1/s): {note}")
        );
        assert_eq!(
            said[1].text,
            "clients=2 · Requests/sec (1/s): n=2 vs 2 can never reach 95% confidence"
        );
    }
}
