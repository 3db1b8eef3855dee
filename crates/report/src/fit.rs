//! Fitting a report into a terminal's width: prose and list items wrap at word boundaries, and a
//! table wider than the line is split into several tables that each repeat the label column, so
//! no line of the terminal report is wider than the width it was given.
//!
//! Widths are counted in bytes. The report is ASCII but for a few signs (`•`, `·`, `Δ`, `±`)
//! and what users name (variants, paths); a line that fits in bytes fits however it is
//! measured: a terminal's columns, a log viewer, a tool that counts bytes. A timeline's bars
//! (block elements, three bytes each) count one each: a chart asked for (`--verbose`) is drawn
//! to the terminal's columns, not shrunk to a third of them.

/// What a string's widest line takes: its bytes, a chart's bar counted as one.
pub fn columns(text: &str) -> usize {
    text.lines().map(line_width).max().unwrap_or(0)
}

/// What one line takes (see [`columns`]).
pub fn line_width(line: &str) -> usize {
    line.chars()
        .map(|c| match c {
            '\u{2580}'..='\u{259f}' => 1,
            c => c.len_utf8(),
        })
        .sum()
}

/// `text` broken at spaces into lines of at most `width` bytes, the lines after the first
/// indented by `indent`; a word longer than the line is cut (between characters). Line breaks
/// in `text` are kept.
pub fn wrap(text: &str, width: usize, indent: &str) -> Vec<String> {
    let step = indent.len();
    let width = width.max(step + 8);
    let mut out = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        let mut len = 0;
        let mut fresh = true;
        for word in paragraph.split(' ') {
            let mut word = word;
            if !fresh && len + 1 + word.len() <= width {
                line.push(' ');
                line.push_str(word);
                len += 1 + word.len();
                continue;
            }
            if !fresh {
                out.push(std::mem::replace(&mut line, indent.to_string()));
                len = step;
            }
            // A word wider than a line: cut it where the line ends.
            while len + word.len() > width {
                let mut cut = width - len;
                while !word.is_char_boundary(cut) {
                    cut -= 1;
                }
                // A line too narrow for even the word's first character takes that one.
                if cut == 0 {
                    cut = word.chars().next().map_or(word.len(), char::len_utf8);
                }
                line.push_str(&word[..cut]);
                out.push(std::mem::replace(&mut line, indent.to_string()));
                len = step;
                word = &word[cut..];
            }
            line.push_str(word);
            len += word.len();
            fresh = false;
        }
        out.push(line);
    }
    out
}

/// The value columns (indices from 1) of a table whose columns need `widths` characters each
/// (the label column first), grouped so that each group beside the label column fits in
/// `width`: the border and padding of the box-drawn table take three characters per column and
/// one more. A column marked in `sticky` stays in the group of the column before it (a
/// comparison's Δ, interval, p and verdict stay with their candidate); a run of columns too
/// wide for any group stands alone.
pub fn column_groups(widths: &[usize], sticky: &[bool], width: usize) -> Vec<Vec<usize>> {
    let Some((label, _)) = widths.split_first() else {
        return Vec::new();
    };
    let mut units: Vec<Vec<usize>> = Vec::new();
    for i in 1..widths.len() {
        match units.last_mut() {
            Some(u) if sticky.get(i).copied().unwrap_or(false) => u.push(i),
            _ => units.push(vec![i]),
        }
    }
    let base = 1 + label + 3;
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut used = base;
    for unit in units {
        let need: usize = unit.iter().map(|&i| widths[i] + 3).sum();
        match groups.last_mut() {
            Some(g) if used + need <= width => {
                g.extend(unit);
                used += need;
            }
            _ => {
                groups.push(unit);
                used = base + need;
            }
        }
    }
    groups
}

/// Which columns stick to the one before: those whose title the table repeats (a comparison of
/// several candidates repeats `Δ median`, `95% CI`, `p` and `verdict` after each).
pub fn sticky(header: &[String]) -> Vec<bool> {
    header
        .iter()
        .enumerate()
        .map(|(i, h)| i > 1 && header.iter().filter(|o| *o == h).count() > 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_lines_fit_and_keep_every_word() {
        let text = "[foreign_cpu] other processes used 61–97% of the machine's CPU in 14 of 14 \
                    iterations — stop other work on the machine";
        let lines = wrap(text, 40, "  ");
        assert!(lines.len() > 2, "{lines:?}");
        assert!(lines.iter().all(|l| l.len() <= 40), "{lines:?}");
        assert!(lines[1..].iter().all(|l| l.starts_with("  ")), "{lines:?}");
        let words: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
        assert_eq!(words, text.split_whitespace().collect::<Vec<_>>());
        assert_eq!(wrap("short", 40, "  "), vec!["short"]);
    }

    #[test]
    fn a_word_longer_than_the_line_is_cut() {
        let long = "x".repeat(50);
        let lines = wrap(&format!("see {long} here"), 20, "");
        assert!(lines.iter().all(|l| l.len() <= 20), "{lines:?}");
        assert_eq!(lines.concat().replace(' ', ""), format!("see{long}here"));
    }

    #[test]
    fn columns_are_grouped_to_fit_beside_the_labels() {
        // Label 20 wide: 24 characters before any value column; each value column takes 13.
        let widths = [20, 10, 10, 10, 10, 10];
        let loose = [false; 6];
        assert_eq!(
            column_groups(&widths, &loose, 100),
            vec![vec![1, 2, 3, 4, 5]]
        );
        assert_eq!(
            column_groups(&widths, &loose, 60),
            vec![vec![1, 2], vec![3, 4], vec![5]]
        );
        // A column wider than the line stands alone.
        assert_eq!(
            column_groups(&[20, 90, 5], &loose, 60),
            vec![vec![1], vec![2]]
        );
    }

    #[test]
    fn a_candidates_verdict_columns_stay_with_it() {
        let header: Vec<String> = ["measurement", "one", "two", "Δ", "p", "three", "Δ", "p"]
            .map(String::from)
            .to_vec();
        let sticky = sticky(&header);
        assert_eq!(sticky, [false, false, false, true, true, false, true, true]);
        // Room for the label and five columns: `three` does not leave its Δ and p behind.
        let widths = [20, 10, 10, 10, 10, 10, 10, 10];
        assert_eq!(
            column_groups(&widths, &sticky, 24 + 5 * 13),
            vec![vec![1, 2, 3, 4], vec![5, 6, 7]]
        );
    }
}
