//! Warnings in a report: each said once, where it belongs. A warning that says the run cannot
//! answer its question comes before the tables; the rest are listed after them, an iteration
//! warning repeated across a row's iterations once with the iterations it came from.

use super::{Block, Cell, Style};
use rigor_model::result::{Row, RunResult, Warning, WarningKind};

/// `[kind] message — advice`
pub fn warning_text(w: &Warning) -> String {
    if w.advice.is_empty() {
        format!("[{}] {}", w.kind, w.message)
    } else {
        format!("[{}] {} — {}", w.kind, w.message, w.advice)
    }
}

/// Whether a warning is said before any table: it says the run cannot answer its question,
/// whatever the figures are.
pub fn up_front(w: &Warning) -> bool {
    w.kind == WarningKind::TooFewIterations
}

/// The list of warnings said before the tables, if any.
pub fn up_front_block<'a>(warnings: impl IntoIterator<Item = &'a Warning>) -> Option<Block> {
    let items: Vec<Cell> = warnings
        .into_iter()
        .filter(|w| up_front(w))
        .map(|w| Cell::styled(warning_text(w), Style::Warning))
        .collect();
    (!items.is_empty()).then_some(Block::List(items))
}

/// The `warnings` section: a heading and the list, or nothing when `items` is empty.
pub fn section(items: Vec<Cell>) -> Vec<Block> {
    if items.is_empty() {
        return Vec::new();
    }
    vec![Block::Heading(2, "warnings".into()), Block::List(items)]
}

/// Warnings not said up front, as list items.
pub fn items<'a>(warnings: impl IntoIterator<Item = &'a Warning>) -> Vec<Cell> {
    warnings
        .into_iter()
        .filter(|w| !up_front(w))
        .map(|w| Cell::styled(warning_text(w), Style::Warning))
        .collect()
}

/// Whether a warning says the figures may be wrong whatever the noise (a proxy in the path, a
/// debug build, a heap warmed before the measurement, page cache counted as memory, the same
/// artifact on both sides): said before the warnings about a busy machine, which only widen
/// the intervals.
pub fn trap(kind: &WarningKind) -> bool {
    matches!(
        kind,
        WarningKind::Proxy
            | WarningKind::DebugBuild
            | WarningKind::ReadinessMemory
            | WarningKind::PageCache
            | WarningKind::PageCacheCarried
            | WarningKind::IdenticalArtifacts
            | WarningKind::TooFewIterations
    )
}

/// Run, row and iteration warnings of a run, each kind once per row, traps first.
#[cfg(test)]
pub fn run_items(result: &RunResult) -> Vec<Cell> {
    run_items_across(result, false)
}

/// [`run_items`]; with `across_rows`, a kind that is not a trap and that several rows said in
/// the same words (numbers aside) is one item for all of them (`one, two, three · 6 of 6
/// iterations: [foreign_cpu] … 58–91% …`), as the terminal shows a busy machine's warnings.
pub fn run_items_across(result: &RunResult, across_rows: bool) -> Vec<Cell> {
    let mut out: Vec<(WarningKind, Cell)> = result
        .warnings
        .iter()
        .filter(|w| !up_front(w))
        .map(|w| {
            (
                w.kind.clone(),
                Cell::styled(warning_text(w), Style::Warning),
            )
        })
        .collect();
    let mut said: Vec<Said> = result.rows.iter().flat_map(row_said).collect();
    if across_rows {
        said = merged_across_rows(said);
    }
    out.extend(said.iter().map(|s| (s.kind.clone(), s.item())));
    // Stable: within traps and within the rest, the order of the run.
    out.sort_by_key(|(kind, _)| !trap(kind));
    // Each advice once: a later item of the same kind with the same advice leaves it out.
    let mut advised: Vec<(WarningKind, String)> = Vec::new();
    out.into_iter()
        .map(|(kind, mut cell)| {
            let advice = kind.advice();
            let tail = format!(" — {advice}");
            if !advice.is_empty() && cell.text.ends_with(&tail) {
                if advised.iter().any(|(k, a)| *k == kind && a == advice) {
                    cell.text.truncate(cell.text.len() - tail.len());
                } else {
                    advised.push((kind, advice.to_string()));
                }
            }
            cell
        })
        .collect()
}

/// One kind of warning said by a row (or by several rows, merged), or by some of its
/// iterations.
struct Said {
    kind: WarningKind,
    /// The labels of the rows that said it.
    labels: Vec<String>,
    /// For iteration warnings, the numbers of the iterations that said it (of a single row)
    /// and how many iterations the rows ran; `None` for a row's own warning.
    iterations: Option<(Vec<usize>, usize)>,
    messages: Vec<String>,
    advice: String,
}

impl Said {
    /// `label · iterations 1, 2: [kind] message — advice`, the messages merged.
    fn item(&self) -> Cell {
        let messages: Vec<&str> = self.messages.iter().map(String::as_str).collect();
        let merged = Warning::new(
            self.kind.clone(),
            merged_message(&messages),
            self.advice.clone(),
        );
        let who = if self.labels.len() <= 3 {
            self.labels.join(", ")
        } else {
            format!("{} rows", self.labels.len())
        };
        let text = match &self.iterations {
            None => format!("{who}: {}", warning_text(&merged)),
            Some((numbers, total)) => {
                let when = if numbers.len() <= 3 && self.labels.len() == 1 {
                    iterations_named(numbers)
                } else {
                    format!("{} of {total} iterations", numbers.len())
                };
                format!("{who} · {when}: {}", warning_text(&merged))
            }
        };
        Cell::styled(text, Style::Warning)
    }
}

/// A row's own warnings, then its iterations' warnings, one per kind: which of the row's
/// iterations said it and what each said.
fn row_said(row: &Row) -> Vec<Said> {
    let label = row.label();
    let mut out: Vec<Said> = row
        .warnings
        .iter()
        .map(|w| Said {
            kind: w.kind.clone(),
            labels: vec![label.clone()],
            iterations: None,
            messages: vec![w.message.clone()],
            advice: w.advice.clone(),
        })
        .collect();
    let total = row.iterations.len();
    for (kind, said) in grouped_by_kind(row) {
        out.push(Said {
            kind,
            labels: vec![label.clone()],
            iterations: Some((said.iter().map(|(n, _)| *n).collect(), total)),
            messages: said.iter().map(|(_, w)| w.message.clone()).collect(),
            advice: said[0].1.advice.clone(),
        });
    }
    out
}

/// `said` with the items of one kind that is not a trap, said in the same words by several
/// rows (both row warnings or both iteration warnings), merged into the first of them.
fn merged_across_rows(said: Vec<Said>) -> Vec<Said> {
    let mut out: Vec<Said> = Vec::new();
    for s in said {
        let words = split_numbers(&s.messages[0]).0.concat();
        let alike = |o: &Said| {
            o.kind == s.kind
                && !trap(&s.kind)
                && o.iterations.is_some() == s.iterations.is_some()
                && o.advice == s.advice
                && o.messages
                    .iter()
                    .chain(&s.messages)
                    .all(|m| split_numbers(m).0.concat() == words)
        };
        match out.iter_mut().find(|o| alike(o)) {
            Some(o) => {
                o.labels.extend(s.labels);
                o.messages.extend(s.messages);
                if let (Some((mine, total)), Some((theirs, more))) =
                    (&mut o.iterations, s.iterations)
                {
                    mine.extend(theirs);
                    *total += more;
                }
            }
            None => out.push(s),
        }
    }
    out
}

/// Each kind of iteration warning a row has, with the number of each iteration that said it
/// and what it said, in order of first appearance.
fn grouped_by_kind(row: &Row) -> Vec<(WarningKind, Vec<(usize, &Warning)>)> {
    let mut grouped: Vec<(WarningKind, Vec<(usize, &Warning)>)> = Vec::new();
    for it in &row.iterations {
        for w in &it.warnings {
            match grouped.iter_mut().find(|(k, _)| *k == w.kind) {
                Some((_, said)) => {
                    if said.last().map(|(n, _)| *n) != Some(it.number()) {
                        said.push((it.number(), w));
                    }
                }
                None => grouped.push((w.kind.clone(), vec![(it.number(), w)])),
            }
        }
    }
    grouped
}

/// One message for several: the same words with numbers that differ shown as their range
/// (`used 61–97% of the machine`); messages that differ in words are the first one and how
/// many others there were.
fn merged_message(messages: &[&str]) -> String {
    let parsed: Vec<(Vec<&str>, Vec<&str>)> = messages.iter().map(|m| split_numbers(m)).collect();
    let (words, _) = &parsed[0];
    if parsed.iter().any(|(w, _)| w != words) {
        let others = messages
            .iter()
            .skip(1)
            .filter(|m| *m != &messages[0])
            .count();
        return match others {
            0 => messages[0].to_string(),
            n => format!("{} (and {n} other message(s))", messages[0]),
        };
    }
    let mut out = String::new();
    for (i, word) in words.iter().enumerate() {
        out.push_str(word);
        if i + 1 == words.len() {
            break;
        }
        let values: Vec<&str> = parsed.iter().map(|(_, n)| n[i]).collect();
        let value = |s: &str| s.replace(',', "").parse::<f64>().unwrap_or(f64::NAN);
        let low = values
            .iter()
            .copied()
            .min_by(|a, b| value(a).total_cmp(&value(b)))
            .unwrap_or(values[0]);
        let high = values
            .iter()
            .copied()
            .max_by(|a, b| value(a).total_cmp(&value(b)))
            .unwrap_or(values[0]);
        if low == high || value(low) == value(high) {
            out.push_str(low);
        } else {
            out.push_str(&format!("{low}–{high}"));
        }
    }
    out
}

/// A message split into the words around its numbers and the numbers (`1,234.5`): one more
/// piece of words than numbers.
fn split_numbers(message: &str) -> (Vec<&str>, Vec<&str>) {
    let bytes = message.as_bytes();
    let mut words = Vec::new();
    let mut numbers = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        let begins = bytes[i].is_ascii_digit()
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if !begins {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < bytes.len()
            && (bytes[j].is_ascii_digit()
                || ((bytes[j] == b'.' || bytes[j] == b',')
                    && bytes.get(j + 1).is_some_and(u8::is_ascii_digit)))
        {
            j += 1;
        }
        // An address or a version (`127.0.0.1`, `4.3.1`) is words, not a number to range.
        if message[i..j].matches('.').count() > 1 {
            i = j;
            continue;
        }
        words.push(&message[start..i]);
        numbers.push(&message[i..j]);
        start = j;
        i = j;
    }
    words.push(&message[start..]);
    (words, numbers)
}

/// `iteration 3` or `iterations 1, 2`.
fn iterations_named(numbers: &[usize]) -> String {
    match numbers {
        [one] => format!("iteration {one}"),
        many => format!(
            "iterations {}",
            many.iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_names_the_kind_and_adds_the_advice_when_there_is_one() {
        let w = Warning::new(WarningKind::Proxy, "through nginx", "");
        assert_eq!(warning_text(&w), "[proxy] through nginx");
        let w = Warning::new(WarningKind::Steal, "stole 5%", "move");
        assert_eq!(warning_text(&w), "[steal] stole 5% — move");
    }

    #[test]
    fn an_address_in_a_message_is_words_not_a_range() {
        let m = [
            "127.0.0.1:8080 is this machine's own loopback, where PID 12 (conmon) listens",
            "127.0.0.1:8080 is this machine's own loopback, where PID 14 (conmon) listens",
        ];
        assert_eq!(
            merged_message(&m),
            "127.0.0.1:8080 is this machine's own loopback, where PID 12–14 (conmon) listens"
        );
        let m = ["engine 4.3.1 on 10.0.0.2", "engine 4.3.1 on 10.0.0.3"];
        assert_eq!(
            merged_message(&m),
            "engine 4.3.1 on 10.0.0.2 (and 1 other message(s))"
        );
    }

    #[test]
    fn numbers_that_differ_become_a_range() {
        let m = [
            "other processes used 61.2% of the machine's CPU during this iteration",
            "other processes used 97.5% of the machine's CPU during this iteration",
            "other processes used 80.0% of the machine's CPU during this iteration",
        ];
        assert_eq!(
            merged_message(&m),
            "other processes used 61.2–97.5% of the machine's CPU during this iteration"
        );
        assert_eq!(
            merged_message(&["took 1,200 ms at p99", "took 900 ms at p99"]),
            "took 900–1,200 ms at p99"
        );
        // Words that differ: the first message and how many others.
        assert_eq!(
            merged_message(&["a 1", "b 2", "a 1"]),
            "a 1 (and 1 other message(s))"
        );
        // Digits inside a word (http2, p99) are not numbers.
        assert_eq!(split_numbers("http2 p99 at 5 ms").1, vec!["5"]);
    }

    #[test]
    fn each_kind_once_per_row_with_count_and_range_and_traps_first() {
        let mut r = crate::sample::sample_result();
        r.warnings.clear();
        for row in &mut r.rows {
            row.warnings.clear();
            for it in &mut row.iterations {
                it.warnings.clear();
            }
        }
        for (i, it) in r.rows[0].iterations.iter_mut().enumerate() {
            it.warnings.push(Warning::of(
                WarningKind::ForeignCpu,
                format!("other processes used {}% of the machine's CPU", 60 + 10 * i),
            ));
        }
        r.rows[1].iterations[0]
            .warnings
            .push(Warning::of(WarningKind::ReadinessMemory, "heap warmed up"));
        let items = run_items(&r);
        let texts: Vec<&str> = items.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(
            texts[0].contains("[readiness_memory] heap warmed up"),
            "{texts:?}"
        );
        assert!(
            texts[1].starts_with(
                "connections=16 · iterations 1, 2, 3: [foreign_cpu] other processes used 60–80% \
                 of the machine's CPU — "
            ),
            "{texts:?}"
        );
        // The advice once.
        let advice = WarningKind::ForeignCpu.advice();
        assert_eq!(texts[1].matches(advice).count(), 1, "{texts:?}");
        // More than three iterations: counted.
        let mut it = r.rows[0].iterations[0].clone();
        it.index = 3;
        r.rows[0].iterations.push(it);
        let items = run_items(&r);
        assert!(
            items[1].text.contains("· 4 of 4 iterations: [foreign_cpu]"),
            "{items:?}"
        );
    }

    #[test]
    fn the_terminal_says_a_noise_kind_once_for_every_row_and_keeps_traps_per_row() {
        let mut r = crate::sample::sample_result();
        r.warnings.clear();
        for (i, row) in r.rows.iter_mut().enumerate() {
            row.warnings.clear();
            for (k, it) in row.iterations.iter_mut().enumerate() {
                it.warnings.clear();
                it.warnings.push(Warning::of(
                    WarningKind::ForeignCpu,
                    format!(
                        "other processes used {}% of the machine's CPU",
                        60 + 10 * (i + k)
                    ),
                ));
                it.warnings
                    .push(Warning::of(WarningKind::ReadinessMemory, "heap warmed up"));
            }
        }
        let runs: usize = r.rows.iter().map(|row| row.iterations.len()).sum();
        let per_row = run_items_across(&r, false);
        let across = run_items_across(&r, true);
        let texts: Vec<&str> = across.iter().map(|c| c.text.as_str()).collect();
        // The trap stays per row, first; the noise kind is one item with the range of all.
        assert_eq!(per_row.len(), 4, "{per_row:?}");
        assert_eq!(texts.len(), 3, "{texts:?}");
        assert!(texts[0].starts_with("connections=16 · "), "{texts:?}");
        assert!(texts[1].starts_with("connections=64 · "), "{texts:?}");
        assert!(texts[0].contains("[readiness_memory]"), "{texts:?}");
        let merged = format!(
            "connections=16, connections=64 · {runs} of {runs} iterations: [foreign_cpu] other \
             processes used 60–"
        );
        assert!(texts[2].starts_with(&merged), "{texts:?}");
        // Words that differ are not merged.
        r.rows[1].iterations[0].warnings[0].message = "something else".into();
        let texts: Vec<String> = run_items_across(&r, true)
            .into_iter()
            .map(|c| c.text)
            .collect();
        assert_eq!(texts.len(), 4, "{texts:?}");
    }

    #[test]
    fn too_few_iterations_goes_up_front_and_nowhere_else() {
        let few = Warning::of(WarningKind::TooFewIterations, "2 per variant");
        let steal = Warning::new(WarningKind::Steal, "stole 5%", "");
        let both = [few.clone(), steal.clone()];
        let Some(Block::List(first)) = up_front_block(&both) else {
            panic!("no up-front block")
        };
        assert_eq!(
            first,
            vec![Cell::styled(warning_text(&few), Style::Warning)]
        );
        assert_eq!(
            items(&both),
            vec![Cell::styled("[steal] stole 5%", Style::Warning)]
        );
        assert!(up_front_block(&[steal]).is_none());
        assert!(section(Vec::new()).is_empty());
    }
}
