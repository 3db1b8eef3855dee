//! Request mixes: several requests on one origin, each chosen by weight from a fixed, seeded
//! sequence per connection (a run is repeatable), each serialised once per body it sends.

use crate::h2::H2Request;
use crate::url::Target;
use crate::LoadError;
use serde::{Deserialize, Serialize};

/// Most requests one mix may name.
pub const MAX_MIX_REQUESTS: usize = 1024;
/// Most bodies (lines of a `body_lines` file) kept serialised, over every request of a mix.
pub const MAX_MIX_BODIES: usize = 1 << 20;
/// Most bytes the serialised requests of a mix may take in memory.
const MAX_MIX_BYTES: usize = 256 << 20;

/// One request of a mix: where it goes on the run's origin, how, and how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MixRequest {
    /// Names its figures (`load.req.NAME.*`): letters, digits, `_` and `-`.
    pub name: String,
    /// Path and query on the run's URL's origin, starting with `/`.
    pub path: String,
    pub method: String,
    pub headers: Vec<(String, String)>,
    /// Bodies sent in turn: none, one (every request sends it), or several (a file of lines:
    /// each request sends the next).
    pub bodies: Vec<Vec<u8>>,
    /// Its share of the requests is `weight` over the sum of the mix's weights; at least 1.
    pub weight: u32,
}

/// The requests a run sends instead of its one request, and the seed of every connection's
/// sequence of choices.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RequestMix {
    pub requests: Vec<MixRequest>,
    pub seed: u64,
}

/// Whether `name` can name a request's figures (it becomes part of a measurement id).
pub fn valid_request_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A mix serialised for the run: every (request, body) pair is a variant with its bytes.
#[derive(Debug)]
pub(crate) struct PreparedMix {
    pub names: Vec<String>,
    /// HTTP/1.1 bytes of each variant.
    pub h1: Vec<Vec<u8>>,
    /// HTTP/2 frames of each variant (HTTP/2 runs only).
    pub h2: Vec<H2Request>,
    /// The request each variant belongs to.
    pub entry_of: Vec<u32>,
    /// Each request's variants: the first's index and how many.
    pub variants: Vec<(usize, usize)>,
    /// Whether each request is a HEAD (answers describe a body they do not send).
    pub head: Vec<bool>,
    /// Running sums of the weights, for the weighted choice.
    cumulative: Vec<u64>,
}

impl PreparedMix {
    /// Checks `mix` and serialises each of its requests for `target` (over HTTP/2 too).
    pub fn new(mix: &RequestMix, target: &Target, http2: bool) -> Result<PreparedMix, LoadError> {
        let bad = |m: String| Err(LoadError::InvalidSpec(m));
        if mix.requests.is_empty() {
            return bad("a request mix needs at least one request".into());
        }
        if mix.requests.len() > MAX_MIX_REQUESTS {
            return bad(format!(
                "a request mix may name at most {MAX_MIX_REQUESTS} requests, got {}",
                mix.requests.len()
            ));
        }
        let bodies: usize = mix.requests.iter().map(|r| r.bodies.len()).sum();
        if bodies > MAX_MIX_BODIES {
            return bad(format!(
                "a request mix may carry at most {MAX_MIX_BODIES} bodies, got {bodies}"
            ));
        }
        let mut p = PreparedMix {
            names: Vec::new(),
            h1: Vec::new(),
            h2: Vec::new(),
            entry_of: Vec::new(),
            variants: Vec::new(),
            head: Vec::new(),
            cumulative: Vec::new(),
        };
        let mut total = 0u64;
        let mut bytes = 0usize;
        for (i, r) in mix.requests.iter().enumerate() {
            if !valid_request_name(&r.name) {
                return bad(format!(
                    "request name `{}` must be 1 to 64 letters, digits, `_` or `-` (it names \
                     the request's figures, load.req.NAME.*)",
                    r.name
                ));
            }
            if p.names.contains(&r.name) {
                return bad(format!(
                    "request name `{}` is used twice in the mix",
                    r.name
                ));
            }
            if r.weight == 0 {
                return bad(format!(
                    "request `{}`: weight must be at least 1, got 0",
                    r.name
                ));
            }
            if !r.path.starts_with('/') {
                return bad(format!(
                    "request `{}`: path `{}` must start with `/`",
                    r.name, r.path
                ));
            }
            if r.path.bytes().any(|b| b <= b' ' || b == 0x7f) {
                return bad(format!(
                    "request `{}`: path `{}` has a space or a control character",
                    r.name, r.path
                ));
            }
            let named = |e: LoadError| match e {
                LoadError::InvalidRequest(m) => {
                    LoadError::InvalidRequest(format!("request `{}`: {m}", r.name))
                }
                e => e,
            };
            let target = Target {
                path: r.path.clone(),
                ..target.clone()
            };
            let one: [Option<&[u8]>; 1] = [None];
            let bodies: Vec<Option<&[u8]>> = if r.bodies.is_empty() {
                one.to_vec()
            } else {
                r.bodies.iter().map(|b| Some(b.as_slice())).collect()
            };
            p.variants.push((p.h1.len(), bodies.len()));
            for body in bodies {
                let wire = crate::request::serialize(&target, &r.method, &r.headers, body, false)
                    .map_err(named)?;
                bytes += wire.len();
                if http2 {
                    let frames =
                        H2Request::new(&target, &r.method, &r.headers, body).map_err(named)?;
                    bytes += frames.wire_len();
                    p.h2.push(frames);
                }
                if bytes > MAX_MIX_BYTES {
                    return bad(format!(
                        "the request mix takes more than {} MiB serialised",
                        MAX_MIX_BYTES >> 20
                    ));
                }
                p.h1.push(wire);
                p.entry_of.push(i as u32);
            }
            total += u64::from(r.weight);
            p.cumulative.push(total);
            p.names.push(r.name.clone());
            p.head.push(r.method == "HEAD");
        }
        Ok(p)
    }

    /// The request a draw `x` (uniform over u64) picks, by weight.
    #[inline]
    pub fn pick(&self, x: u64) -> usize {
        let total = *self.cumulative.last().expect("a mix has a request");
        // Multiply-shift: uniform over 0..total without a division's bias worth counting.
        let r = ((u128::from(x) * u128::from(total)) >> 64) as u64;
        self.cumulative.partition_point(|&c| c <= r)
    }

    /// The largest variant, in bytes on the wire over `http2` or HTTP/1.1.
    pub fn max_len(&self, http2: bool) -> usize {
        if http2 {
            self.h2.iter().map(H2Request::wire_len).max().unwrap_or(0)
        } else {
            self.h1.iter().map(Vec::len).max().unwrap_or(0)
        }
    }
}

/// The seed of one connection's sequence: the run's seed, the worker and the connection mixed
/// so neighbouring connections draw unrelated sequences.
pub(crate) fn connection_seed(seed: u64, worker: usize, conn: usize) -> u64 {
    let mut s = seed ^ 0x9e37_79b9_7f4a_7c15;
    s = splitmix(&mut s) ^ (worker as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    s = splitmix(&mut s) ^ (conn as u64).wrapping_mul(0x94d0_49bb_1331_11eb);
    splitmix(&mut s)
}

/// SplitMix64: the next draw of the sequence whose state is `state`.
#[inline]
pub(crate) fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(name: &str, weight: u32) -> MixRequest {
        MixRequest {
            name: name.into(),
            path: format!("/{name}"),
            method: "GET".into(),
            headers: Vec::new(),
            bodies: Vec::new(),
            weight,
        }
    }

    #[test]
    fn choices_follow_the_weights_and_repeat_with_the_seed() {
        let t = crate::url::parse("http://127.0.0.1:8080/").unwrap();
        let mix = RequestMix {
            requests: vec![req("a", 3), req("b", 1)],
            seed: 7,
        };
        let p = PreparedMix::new(&mix, &t, false).unwrap();
        let draw = |seed| {
            let mut s = connection_seed(seed, 0, 0);
            (0..100_000)
                .map(|_| p.pick(splitmix(&mut s)))
                .collect::<Vec<_>>()
        };
        let a = draw(7);
        let share = a.iter().filter(|&&i| i == 0).count() as f64 / a.len() as f64;
        assert!((share - 0.75).abs() < 0.01, "{share}");
        assert_eq!(a, draw(7), "the same seed draws the same sequence");
        assert_ne!(a, draw(8));
        assert_eq!(
            String::from_utf8_lossy(&p.h1[1]),
            "GET /b HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"
        );
    }

    #[test]
    fn bad_mixes_are_refused_by_name() {
        let t = crate::url::parse("http://127.0.0.1:8080/").unwrap();
        let check = |requests: Vec<MixRequest>| {
            PreparedMix::new(&RequestMix { requests, seed: 0 }, &t, false)
                .unwrap_err()
                .to_string()
        };
        assert!(check(vec![]).contains("at least one request"));
        assert!(check(vec![req("a", 0)]).contains("weight must be at least 1"));
        assert!(check(vec![req("a", 1), req("a", 2)]).contains("used twice"));
        assert!(check(vec![req("a.b", 1)]).contains("letters, digits"));
        let mut r = req("a", 1);
        r.path = "x".into();
        assert!(check(vec![r]).contains("must start with `/`"));
        let mut r = req("a", 1);
        r.headers = vec![("Content-Length".into(), "3".into())];
        let e = check(vec![r]);
        assert!(
            e.contains("request `a`") && e.contains("set by the engine"),
            "{e}"
        );
    }
}
