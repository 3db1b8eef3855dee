//! CPU lists such as `0`, `0-3`, `0,2,4-5`, as taskset writes them.

use crate::config::ValueError;

/// CPU numbers the affinity calls can name (the size of `cpu_set_t`); a list beyond it cannot be
/// applied, and refusing it before expanding a range keeps `0-99999999999` from allocating.
pub const CPU_SET_SIZE: usize = nix::sched::CpuSet::count();

/// Parses a CPU list; an empty or malformed list, or a CPU number past [`CPU_SET_SIZE`], is an
/// error naming the bad part.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, ValueError> {
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("invalid CPU list `{text}`: `{part}` is not a CPU number or range");
        let number = |s: &str| -> Result<usize, ValueError> {
            let n: u64 = s.trim().parse().map_err(|_| bad())?;
            if n >= CPU_SET_SIZE as u64 {
                return Err(format!(
                    "invalid CPU list `{text}`: CPU {n} is past the largest CPU number ({})",
                    CPU_SET_SIZE - 1
                )
                .into());
            }
            Ok(n as usize)
        };
        if let Some((a, b)) = part.split_once('-') {
            let (a, b) = (number(a)?, number(b)?);
            if b < a {
                return Err(bad().into());
            }
            cpus.extend(a..=b);
        } else {
            cpus.push(number(part)?);
        }
    }
    if cpus.is_empty() {
        return Err(format!("invalid CPU list `{text}`: no CPU named").into());
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The CPUs of `wanted` that are not in `online`, for an error that names them.
pub fn missing_cpus(wanted: &[usize], online: &[usize]) -> Vec<usize> {
    wanted
        .iter()
        .copied()
        .filter(|c| !online.contains(c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("0-2,5").unwrap(), vec![0, 1, 2, 5]);
        assert!(parse_cpu_list("a").unwrap_err().0.contains("`a`"));
        assert!(parse_cpu_list("3-1").is_err());
    }

    #[test]
    fn huge_numbers_are_refused_before_expanding() {
        for t in [
            "0-99999999999",
            "5000",
            "0-18446744073709551615",
            "99999999999999999999999",
        ] {
            let e = parse_cpu_list(t).unwrap_err();
            assert!(e.0.contains(t), "{e}");
        }
        assert_eq!(parse_cpu_list("1023").unwrap(), vec![1023]);
        assert_eq!(missing_cpus(&[0, 3, 5], &[0, 1, 2, 3]), vec![5]);
    }
}
