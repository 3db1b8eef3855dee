//! Flame graphs drawn by `inferno`: one of a profile, and a differential one of a candidate
//! against its baseline (the baseline's counts scaled to the candidate's total, so colour says
//! a frame's share grew, red, or shrank, blue, not that one side took more samples).

use crate::{Folded, ProfileError};
use inferno::differential;
use inferno::flamegraph::{self, Options};

/// The flame graph of `folded`, titled `title`, as SVG text (interactive when opened on its
/// own; a still picture inside an `<img>`). Colours are chosen per function name, so the same
/// function has the same colour in every graph of a run.
pub fn flame_graph(folded: &Folded, title: &str) -> Result<String, ProfileError> {
    let mut options = options(title);
    options.subtitle = Some(format!("{} samples", folded.total()));
    draw(&mut options, &folded.to_text())
}

/// The differential flame graph of `candidate` against `baseline`: the candidate's stacks,
/// red where a frame's share of the samples grew, blue where it shrank.
pub fn diff_flame_graph(
    baseline: &Folded,
    candidate: &Folded,
    title: &str,
) -> Result<String, ProfileError> {
    let mut two = Vec::new();
    differential::from_readers(
        differential::Options {
            normalize: true,
            strip_hex: false,
        },
        baseline.to_text().as_bytes(),
        candidate.to_text().as_bytes(),
        &mut two,
    )
    .map_err(|source| ProfileError::Render {
        what: "pairing the stacks of a differential flame graph",
        source,
    })?;
    let mut options = options(title);
    options.subtitle = Some(format!(
        "red: a larger share in the candidate, blue: smaller (baseline {} samples scaled to the \
         candidate's {})",
        baseline.total(),
        candidate.total()
    ));
    draw(&mut options, &String::from_utf8_lossy(&two))
}

/// The options every graph shares.
fn options(title: &str) -> Options<'static> {
    let mut o = Options::default();
    o.title = title.to_string();
    o.count_name = "samples".into();
    o.hash = true;
    o.deterministic = true;
    o
}

/// Draws folded `lines` (one or two counts each).
fn draw(options: &mut Options<'_>, lines: &str) -> Result<String, ProfileError> {
    let mut out = Vec::new();
    flamegraph::from_lines(options, lines.lines(), &mut out).map_err(|source| {
        ProfileError::Render {
            what: "drawing a flame graph",
            source,
        }
    })?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphs_name_their_frames_and_the_diff_colours_growth() {
        let base = Folded::parse("app;main;hot 10\napp;main;cold 10\n").unwrap();
        let cand = Folded::parse("app;main;hot 30\napp;main;cold 10\n").unwrap();
        let svg = flame_graph(&cand, "candidate").unwrap();
        assert!(svg.contains("<svg") && svg.contains("hot") && svg.contains("40 samples"));
        let diff = diff_flame_graph(&base, &cand, "candidate vs baseline").unwrap();
        assert!(diff.contains("hot") && diff.contains("cold"));
        // hot grew from 50% to 75%: some frame is drawn red (255, lower g/b), cold blue.
        assert!(diff.contains("fill=\"rgb(255,"), "no red frame");
        assert!(diff.contains(",255)\""), "no blue frame");
    }

    #[test]
    fn an_empty_profile_is_an_error_not_a_picture() {
        assert!(flame_graph(&Folded::default(), "x").is_err());
    }
}
