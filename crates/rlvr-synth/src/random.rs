//! Seeding and the few distributions the generator needs. Every independent stream of choices
//! (the plan, one row, one problem's text, one pool block) gets its own generator derived from
//! the file seed, a stream tag and an index, so rendering order never changes the output.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

/// The generator type used everywhere: fast, portable and reproducible across platforms.
pub(crate) type Random = ChaCha8Rng;

/// Independent streams of randomness derived from one file seed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stream {
    Plan = 1,
    Row = 2,
    Problem = 3,
    PoolBlock = 4,
    Hash = 5,
}

/// A generator for one stream and index, decorrelated from every other (stream, index).
pub(crate) fn random_for(seed: u64, stream: Stream, index: u64) -> Random {
    let mut state = seed ^ (stream as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    state = split_mix(state ^ split_mix(index.wrapping_add(0xD1B5_4A32_D192_ED03)));
    Random::seed_from_u64(state)
}

/// SplitMix64 finalizer: a bijective scramble of 64 bits.
fn split_mix(value: u64) -> u64 {
    let mut mixed = value.wrapping_add(0x9E37_79B9_7F4A_7C15);
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    mixed ^ (mixed >> 31)
}

/// A standard normal draw (Box-Muller).
pub(crate) fn standard_normal(random: &mut Random) -> f64 {
    let uniform: f64 = random.random::<f64>().max(f64::MIN_POSITIVE);
    let angle: f64 = random.random::<f64>() * std::f64::consts::TAU;
    (-2.0 * uniform.ln()).sqrt() * angle.cos()
}

/// A log-normal draw with the given median and log-scale spread, rounded and clamped.
pub(crate) fn log_normal_clamped(
    random: &mut Random,
    median: f64,
    sigma: f64,
    minimum: u32,
    maximum: u32,
) -> u32 {
    let value = median * (sigma * standard_normal(random)).exp();
    (value.round() as u32).clamp(minimum, maximum)
}

/// A positive factor with mean 1 and the given log-scale spread.
pub(crate) fn unit_mean_factor(random: &mut Random, sigma: f64) -> f64 {
    (sigma * standard_normal(random) - sigma * sigma / 2.0).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_and_indices_give_different_sequences() {
        let first = random_for(1, Stream::Row, 0).random::<u64>();
        assert_eq!(first, random_for(1, Stream::Row, 0).random::<u64>());
        assert_ne!(first, random_for(1, Stream::Row, 1).random::<u64>());
        assert_ne!(first, random_for(1, Stream::Problem, 0).random::<u64>());
        assert_ne!(first, random_for(2, Stream::Row, 0).random::<u64>());
    }

    #[test]
    fn log_normal_median_is_close() {
        let mut random = random_for(3, Stream::Plan, 0);
        let mut values: Vec<u32> = (0..20_001)
            .map(|_| log_normal_clamped(&mut random, 102.0, 0.75, 16, 1226))
            .collect();
        values.sort_unstable();
        let median = values[values.len() / 2];
        assert!((95..=110).contains(&median), "median {median}");
    }
}
