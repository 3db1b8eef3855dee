//! The exact null distribution of the Mann–Whitney statistic when values tie.
//!
//! With ties the pooled sample carries midranks, and the classic no-ties recurrence no longer
//! describes U. Under the null every choice of which `n1` of the `N` pooled values belong to the
//! first sample is equally likely, so counting the choices by their rank sum gives the exact
//! (permutation) distribution. Midranks are multiples of ½, so doubled ranks keep the count in
//! integers and every comparison exact.

/// Largest pooled sample counted exactly; beyond it the tie-corrected normal approximation is
/// within a few percent and the count would grow as N³.
pub(crate) const MAX_EXACT_TIED: usize = 40;

/// Two-sided p-value P(|U − n1·n2/2| ≥ |u − n1·n2/2|) from the exact permutation distribution,
/// given the doubled midranks of the pooled sample and which of them belong to the first sample.
/// `None` when the pooled sample is too large to count (see [`MAX_EXACT_TIED`]).
pub(crate) fn tied_exact_p(doubled_ranks: &[u64], in_first: &[bool]) -> Option<f64> {
    let big_n = doubled_ranks.len();
    let n1 = in_first.iter().filter(|&&f| f).count();
    if big_n > MAX_EXACT_TIED || n1 == 0 || n1 == big_n {
        return None;
    }
    let max_sum: u64 = doubled_ranks.iter().sum();
    let width = max_sum as usize + 1;
    // ways[k][s]: choices of k values so far whose doubled ranks sum to s.
    let mut ways = vec![vec![0u128; width]; n1 + 1];
    ways[0][0] = 1;
    for (seen, &r) in doubled_ranks.iter().enumerate() {
        let r = r as usize;
        for k in (1..=n1.min(seen + 1)).rev() {
            let (lower, upper) = ways.split_at_mut(k);
            let (from, to) = (&lower[k - 1], &mut upper[0]);
            for s in (r..width).rev() {
                to[s] += from[s - r];
            }
        }
    }
    let observed: u64 = doubled_ranks
        .iter()
        .zip(in_first)
        .filter(|(_, &f)| f)
        .map(|(r, _)| r)
        .sum();
    // The doubled rank sum has mean n1·(N+1); U is the rank sum shifted by a constant, so the
    // distance from the mean is the same for both.
    let centre = (n1 * (big_n + 1)) as i128;
    let distance = |s: i128| (s - centre).abs();
    let observed_distance = distance(observed as i128);
    let (mut tail, mut total) = (0u128, 0u128);
    for (s, &count) in ways[n1].iter().enumerate() {
        total += count;
        if distance(s as i128) >= observed_distance {
            tail += count;
        }
    }
    Some((tail as f64 / total as f64).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Rng;

    /// The same p-value by listing every one of the C(N, n1) splits of the pooled ranks.
    fn brute_force(ranks: &[u64], in_first: &[bool]) -> f64 {
        let big_n = ranks.len();
        let n1 = in_first.iter().filter(|&&f| f).count();
        let centre = (n1 * (big_n + 1)) as i64;
        let observed: i64 = ranks
            .iter()
            .zip(in_first)
            .filter(|(_, &f)| f)
            .map(|(&r, _)| r as i64)
            .sum();
        let (mut tail, mut total) = (0u64, 0u64);
        for mask in 0u32..(1 << big_n) {
            if mask.count_ones() as usize != n1 {
                continue;
            }
            let s: i64 = (0..big_n)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| ranks[i] as i64)
                .sum();
            total += 1;
            if (s - centre).abs() >= (observed - centre).abs() {
                tail += 1;
            }
        }
        tail as f64 / total as f64
    }

    /// Doubled midranks of a pooled sample given as sorted-order values.
    fn doubled_midranks(values: &[u64]) -> Vec<u64> {
        let mut sorted = values.to_vec();
        sorted.sort();
        values
            .iter()
            .map(|v| {
                let first = sorted.iter().position(|s| s == v).unwrap();
                let last = sorted.iter().rposition(|s| s == v).unwrap();
                (first + last + 2) as u64
            })
            .collect()
    }

    #[test]
    fn matches_listing_every_split() {
        let mut rng = Rng::new(7);
        for _ in 0..200 {
            let big_n = 4 + (rng.next_u64() % 11) as usize; // 4..=14
            let values: Vec<u64> = (0..big_n).map(|_| rng.next_u64() % 5).collect();
            let mut in_first: Vec<bool> = (0..big_n)
                .map(|_| rng.next_u64().is_multiple_of(2))
                .collect();
            in_first[0] = true;
            in_first[big_n - 1] = false;
            let ranks = doubled_midranks(&values);
            let p = tied_exact_p(&ranks, &in_first).unwrap();
            let want = brute_force(&ranks, &in_first);
            assert!(
                (p - want).abs() < 1e-12,
                "{values:?} {in_first:?}: {p} vs {want}"
            );
        }
    }

    #[test]
    fn declines_what_it_cannot_count() {
        assert_eq!(tied_exact_p(&[3, 3], &[true, true]), None);
        let ranks = vec![2u64; MAX_EXACT_TIED + 1];
        let mut sides = vec![false; MAX_EXACT_TIED + 1];
        sides[0] = true;
        assert_eq!(tied_exact_p(&ranks, &sides), None);
        // The largest pooled sample it counts, all values tied: no evidence at all.
        let ranks = vec![(MAX_EXACT_TIED + 1) as u64; MAX_EXACT_TIED];
        let sides: Vec<bool> = (0..MAX_EXACT_TIED).map(|i| i.is_multiple_of(2)).collect();
        assert_eq!(tied_exact_p(&ranks, &sides), Some(1.0));
    }
}
