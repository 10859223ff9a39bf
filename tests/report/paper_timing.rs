//! Fig. 16's timing claims: a ratio is decided only beyond its own noise band, measured by
//! the re-timings of the same solves.

use contactbench::paper::claims::{Claim, Verdict};
use contactbench::paper::timing::{
    ratios, within_noise, NoisyRatio, Replay, Take, NOISE_FLOOR, NOISE_MARGIN,
};

const STEPS: usize = 60;
const ROUNDS: usize = 5;

/// A replay whose time at step `k` is `base(k)`, and `base(k) · drift[j]` in re-timing `j`
/// (a machine whose load changes between re-timings), pooled as their mean.
fn replay(base: impl Fn(usize) -> f64, drift: [f64; ROUNDS]) -> Replay {
    let retimings: Vec<Vec<f64>> = drift
        .iter()
        .map(|d| (0..STEPS).map(|k| base(k) * d).collect())
        .collect();
    let times = (0..STEPS)
        .map(|k| retimings.iter().map(|r| r[k]).sum::<f64>() / ROUNDS as f64)
        .collect();
    Replay {
        times,
        retimings,
        ..Replay::default()
    }
}

/// Step times that vary along the trajectory (10 to 30 µs).
fn cold_times(k: usize) -> f64 {
    10.0 + 20.0 * ((k * 7) % 11) as f64 / 10.0
}

/// The paired warm / cold ratio of two replays, and the claim "warm ≤ cold" decided on it.
fn warm_over_cold(cold: &Replay, warm: &Replay) -> (NoisyRatio, Claim) {
    let ratio = NoisyRatio::of(ROUNDS, 7, |take: Take| {
        ratios(warm.times_of(take), cold.times_of(take))
    });
    let claim = Claim::at_most("warm faster", "t warm / cold", ratio.ratio.value, 1.0)
        .unless(within_noise("t warm / cold", &ratio, 1.0));
    (ratio, claim)
}

const STEADY: [f64; ROUNDS] = [1.0; ROUNDS];
/// Re-timings that differ by up to 8 % (warm measured under another load than cold).
const SHAKEN: [f64; ROUNDS] = [1.0, 1.08, 0.95, 1.03, 0.99];

#[test]
fn a_ratio_far_outside_its_noise_band_is_decided() {
    let cold = replay(cold_times, STEADY);
    let faster = replay(|k| 0.5 * cold_times(k), SHAKEN);
    let (ratio, claim) = warm_over_cold(&cold, &faster);
    assert!((ratio.ratio.value - 0.5).abs() < 0.01, "{ratio:?}");
    assert_eq!(claim.verdict, Verdict::Holds);
    let slower = replay(|k| 1.6 * cold_times(k), SHAKEN);
    assert_eq!(
        warm_over_cold(&cold, &slower).1.verdict,
        Verdict::DoesNotHold
    );
}

#[test]
fn a_ratio_inside_its_noise_band_is_not_measurable_and_says_its_band() {
    let cold = replay(cold_times, STEADY);
    // 8 % slower warm: beyond the floor's band, but within 1.5 times the ±7 % of its
    // re-timings.
    let warm = replay(|k| 1.08 * cold_times(k), SHAKEN);
    let (ratio, claim) = warm_over_cold(&cold, &warm);
    let noise = ratio.noise();
    assert!(noise > 0.05 && noise < 0.09, "{noise}");
    let Verdict::NotMeasurable(reason) = &claim.verdict else {
        panic!("{:?}", claim.verdict);
    };
    assert!(
        reason.contains("timing noise ±") && reason.contains("covers 1"),
        "{reason}"
    );
    // The same ratio with steady re-timings is decided: the band is the claim's own.
    let steady = replay(|k| 1.08 * cold_times(k), STEADY);
    let (steady_ratio, steady_claim) = warm_over_cold(&cold, &steady);
    assert!((steady_ratio.noise() - NOISE_FLOOR.ln_1p()).abs() < 1e-12);
    assert_eq!(steady_claim.verdict, Verdict::DoesNotHold);
}

#[test]
fn steady_re_timings_still_leave_the_floor_band_around_the_threshold() {
    let cold = replay(cold_times, STEADY);
    let just_faster = 1.0 / (1.0 + NOISE_FLOOR).powf(NOISE_MARGIN) + 0.005;
    let warm = replay(|k| just_faster * cold_times(k), STEADY);
    assert!(matches!(
        warm_over_cold(&cold, &warm).1.verdict,
        Verdict::NotMeasurable(_)
    ));
}

#[test]
fn the_noise_band_is_reproducible_and_infinite_without_re_timings() {
    let cold = replay(cold_times, STEADY);
    let warm = replay(|k| 0.9 * cold_times(k), SHAKEN);
    assert_eq!(
        warm_over_cold(&cold, &warm).0,
        warm_over_cold(&cold, &warm).0
    );
    let none = NoisyRatio::of(0, 1, |take: Take| {
        ratios(warm.times_of(take), cold.times_of(take))
    });
    assert!(none.noise().is_infinite());
    assert!(within_noise("x", &none, 1.0).is_some());
}
