//! The known ids closest to a mistyped one, so a refusal can say what was probably meant.

/// Most ids a refusal suggests.
const MOST: usize = 3;

/// The ids of `known` nearest to `id` by edit distance, nearest first (ties in the order
/// given), at most three and only those close enough to be a typo: within a third of the
/// longer name's length, and never more than half of it. An id that contains `id` whole (or
/// is contained in it) counts as near.
pub fn closest<'a>(id: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut scored: Vec<(usize, usize, &str)> = Vec::new();
    for (order, k) in known.into_iter().enumerate() {
        if k == id || scored.iter().any(|(_, _, s)| *s == k) {
            continue;
        }
        let longer = id.chars().count().max(k.chars().count());
        let d = distance(id, k);
        let contains = !id.is_empty() && (k.contains(id) || id.contains(k));
        if d * 3 <= longer.max(3) || (contains && d * 2 <= longer) {
            scored.push((d, order, k));
        }
    }
    scored.sort();
    scored.into_iter().take(MOST).map(|(_, _, k)| k).collect()
}

/// Levenshtein distance between `a` and `b` in characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// `; closest known: a, b` for the suggestions of `id` among `known`, or nothing when none is
/// close.
pub fn closest_note<'a>(id: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let near = closest(id, known);
    if near.is_empty() {
        String::new()
    } else {
        format!("; closest known: {}", near.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("app.rss", "app.rss"), 0);
        assert_eq!(distance("load.rpz", "load.rps"), 1);
    }

    #[test]
    fn typos_find_the_intended_id_and_strangers_find_nothing() {
        let known = ["load.rps", "load.latency.p99", "app.rss", "app.elapsed"];
        // (Typos end in `!` or are the catalogue's own deliberate unknown, so the test of id
        // literals in the source does not take them for misspelt ids.)
        assert_eq!(closest("load.rpz", known), vec!["load.rps"]);
        assert_eq!(closest("app.elapse!", known), vec!["app.elapsed"]);
        assert_eq!(closest("latency.p99", known), vec!["load.latency.p99"]);
        assert!(closest("zzzzzzzz", known).is_empty());
        assert_eq!(closest_note("zzzzzzzz", known), "");
        assert_eq!(closest_note("app.rs!", known), "; closest known: app.rss");
    }
}
