//! The order iterations run in. Variants of the same matrix row are interleaved in a shuffled
//! order each round (seeded, so `--seed` replays it): machine drift hits every side alike.

use crate::plan::Group;
use rand::seq::SliceRandom;
use rand::{rngs::StdRng, SeedableRng};

/// One slot of the schedule: which row, which of its iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub row: usize,
    pub iteration: usize,
}

/// Rounds `from..to` of every group: without variants a row's iterations run back to back; with
/// variants each round runs every variant once, in a fresh shuffled order.
pub fn plan(groups: &[Group], from: usize, to: usize, rng: &mut StdRng) -> Vec<Slot> {
    let mut out = Vec::new();
    for g in groups.iter().map(|g| &g.rows) {
        if g.len() == 1 {
            out.extend((from..to).map(|i| Slot {
                row: g[0],
                iteration: i,
            }));
            continue;
        }
        for i in from..to {
            let mut order = g.clone();
            order.shuffle(rng);
            out.extend(order.into_iter().map(|row| Slot { row, iteration: i }));
        }
    }
    out
}

/// The random source for a seed.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::RowKey;

    fn groups(rows: &[Vec<usize>]) -> Vec<Group> {
        rows.iter()
            .enumerate()
            .map(|(i, rows)| Group {
                key: RowKey {
                    scenario: format!("s{i}"),
                    variables: Default::default(),
                    variant: None,
                },
                rows: rows.clone(),
            })
            .collect()
    }

    #[test]
    fn same_seed_same_order_and_balanced_rounds() {
        let g = groups(&[vec![0, 1, 2], vec![3, 4, 5]]);
        let p1 = plan(&g, 0, 4, &mut rng(7));
        let p2 = plan(&g, 0, 4, &mut rng(7));
        assert_eq!(p1, p2);
        assert_eq!(p1.len(), 24);
        for round in p1[..12].chunks(3) {
            let mut rows: Vec<usize> = round.iter().map(|s| s.row).collect();
            rows.sort();
            assert_eq!(rows, vec![0, 1, 2]);
        }
        let orders: std::collections::BTreeSet<Vec<usize>> = p1[..12]
            .chunks(3)
            .map(|c| c.iter().map(|s| s.row).collect())
            .collect();
        assert!(orders.len() > 1, "rounds should not all share one order");
    }

    #[test]
    fn single_rows_run_back_to_back() {
        let g = groups(&[vec![0], vec![1]]);
        let p = plan(&g, 0, 2, &mut rng(1));
        assert_eq!(
            p.iter().map(|s| (s.row, s.iteration)).collect::<Vec<_>>(),
            vec![(0, 0), (0, 1), (1, 0), (1, 1)]
        );
    }
}
