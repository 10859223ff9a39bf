//! Axes: ranges and tick marks chosen from the data, labels that never repeat.
//!
//! - Linear axes get 1-2-5 steps and as many decimals as the step needs (a span of 2e-5
//!   is labelled `0.10002, 0.10004`, never `0.1` four times). When the span is tiny next
//!   to the values (a height that moves by 0.1 mm around 0.1 m), the axis shows the
//!   difference from a round offset, and its title says so (`z (m) − 0.1`).
//! - Log axes are drawn on `log10` of the values, ticks at whole decades (every second or
//!   third decade when there are many), labelled with the value itself (`1e-6`, `0.01`,
//!   `100`).

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};

/// Linear or logarithmic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    /// Linear.
    #[default]
    Linear,
    /// Base-10 logarithmic (non-positive values are not drawn).
    Log,
}

/// A laid-out axis: the drawn range (in plotted coordinates: the values, less the offset,
/// or their `log10`), tick positions and their labels.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisLayout {
    /// Scale.
    pub scale: Scale,
    /// Drawn range `[lo, hi]` in plotted coordinates.
    pub range: (f64, f64),
    /// Subtracted from linear values before plotting (0 when none).
    pub offset: f64,
    /// Major tick positions (plotted coordinates).
    pub ticks: Vec<f64>,
    /// Minor tick positions (plotted coordinates).
    pub minor: Vec<f64>,
    /// Step between major ticks (linear; decades between ticks on a log axis), for the
    /// label precision.
    pub step: f64,
}

/// Largest number of major ticks on an axis.
const MAX_TICKS: usize = 8;
/// The least distance between two labelled ticks on an x axis (pixels): a label such as
/// `0.001` or `1e-10` is about 40 pixels wide in the figures' font.
pub const LABEL_SPACING: f64 = 48.0;

/// A "nice" step (1, 2 or 5 × 10^k) giving at most `max_ticks` ticks over `span`.
pub fn nice_step(span: f64, max_ticks: usize) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / max_ticks.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw * (1.0 - 1e-12))
        .unwrap_or(10.0 * magnitude)
}

/// Decimals needed to print multiples of `step` (1, 2 or 5 × 10^k) distinctly.
fn decimals(step: f64) -> usize {
    (-(step.log10() + 1e-9).floor()).max(0.0) as usize
}

/// `[min, max]` of the finite values (and positive ones on a log axis), if any.
pub fn data_range(values: impl Iterator<Item = f64>, scale: Scale) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    lo.is_finite().then_some((lo, hi))
}

impl AxisLayout {
    /// Lays out an axis over `[lo, hi]` (data values), padded by 5 % on a linear axis and
    /// to whole decades on a log axis. `None` data gives `[0, 1]` (or `[1, 10]`).
    pub fn new(data: Option<(f64, f64)>, scale: Scale) -> Self {
        match scale {
            Scale::Linear => {
                let (lo, hi) = data.unwrap_or((0.0, 1.0));
                Self::linear(lo, hi, true)
            }
            Scale::Log => {
                let (lo, hi) = data.unwrap_or((1.0, 10.0));
                Self::log(lo, hi)
            }
        }
    }

    /// A linear axis over `[lo, hi]`, padded by 5 % of the span when `pad`; a flat range
    /// gets `±max(1 %, 1e-3)` of its value (drawn flat, not magnified).
    pub fn linear(lo: f64, hi: f64, pad: bool) -> Self {
        let magnitude = lo.abs().max(hi.abs());
        let (lo, hi) = if hi - lo > 1e-9 * magnitude + 1e-300 {
            let p = if pad { 0.05 * (hi - lo) } else { 0.0 };
            (lo - p, hi + p)
        } else {
            let p = (0.01 * magnitude).max(1e-3);
            (lo - p, hi + p)
        };
        let span = hi - lo;
        let step = nice_step(span, MAX_TICKS);
        // A span that is tiny next to the values: plot the difference from a round offset.
        let offset = if span < 1e-3 * lo.abs().max(hi.abs()) {
            let coarse = 10f64.powf((span * 10.0).log10().ceil());
            ((lo + hi) / 2.0 / coarse).round() * coarse
        } else {
            0.0
        };
        let (a, b) = (lo - offset, hi - offset);
        let first = (a / step).ceil() as i64;
        let last = (b / step).floor() as i64;
        let ticks: Vec<f64> = (first..=last).map(|k| k as f64 * step).collect();
        let minor_step = step / 5.0;
        let minor: Vec<f64> = ((a / minor_step).ceil() as i64..=(b / minor_step).floor() as i64)
            .map(|k| k as f64 * minor_step)
            .collect();
        Self {
            scale: Scale::Linear,
            range: (a, b),
            offset,
            ticks,
            minor,
            step,
        }
    }

    /// A log axis from the decade below `lo` to the decade above `hi` (values > 0).
    pub fn log(lo: f64, hi: f64) -> Self {
        let lo = if lo > 0.0 && lo.is_finite() {
            lo
        } else {
            1e-300
        };
        let hi = if hi >= lo && hi.is_finite() { hi } else { lo };
        let mut a = lo.log10().floor();
        let mut b = hi.log10().ceil();
        if b - a < 1.0 {
            b = a + 1.0;
        }
        // Keep a little room so that values on a decade are not drawn on the frame.
        if (lo.log10() - a).abs() < 0.02 {
            a -= 0.1;
        }
        if (b - hi.log10()).abs() < 0.02 {
            b += 0.1;
        }
        let decades = (b.floor() - a.ceil()) as i64;
        let every = ((decades as f64) / MAX_TICKS as f64).ceil().max(1.0) as i64;
        let mut ticks: Vec<f64> = (a.ceil() as i64..=b.floor() as i64)
            .filter(|k| k.rem_euclid(every) == 0)
            .map(|k| k as f64)
            .collect();
        if b - a <= 2.5 {
            // Few decades: label 2 and 5 too.
            ticks = (a.floor() as i64..=b.ceil() as i64)
                .flat_map(|k| [1.0f64, 2.0, 5.0].map(|m| k as f64 + m.log10()))
                .filter(|x| *x >= a && *x <= b)
                .collect();
        }
        let minor = if every == 1 {
            (a.floor() as i64..=b.ceil() as i64)
                .flat_map(|k| (2..10).map(move |m| k as f64 + f64::from(m).log10()))
                .filter(|x| *x > a && *x < b)
                .collect()
        } else {
            (a.ceil() as i64..=b.floor() as i64)
                .map(|k| k as f64)
                .collect()
        };
        Self {
            scale: Scale::Log,
            range: (a, b),
            offset: 0.0,
            ticks,
            minor,
            step: every as f64,
        }
    }

    /// The labelled ticks thinned so that their labels do not run into each other on an
    /// axis `pixels` wide (at least [`LABEL_SPACING`] pixels apart): a log axis keeps its
    /// whole decades first, then every k-th tick is kept.
    pub fn keep_labels_apart(&mut self, pixels: i32) {
        let room = ((f64::from(pixels.max(1)) / LABEL_SPACING).floor() as usize).max(2);
        if self.ticks.len() <= room {
            return;
        }
        if self.scale == Scale::Log {
            let decades: Vec<f64> = self
                .ticks
                .iter()
                .copied()
                .filter(|x| (x - x.round()).abs() < 1e-9)
                .collect();
            if decades.len() >= 2 {
                self.ticks = decades;
            }
        }
        let every = self.ticks.len().div_ceil(room);
        if every > 1 {
            self.ticks = self.ticks.iter().copied().step_by(every).collect();
        }
    }

    /// The plotted coordinate of a data value (`None`: not drawable, e.g. ≤ 0 on a log
    /// axis, or not finite).
    pub fn to_plot(&self, v: f64) -> Option<f64> {
        match self.scale {
            Scale::Linear => v.is_finite().then_some(v - self.offset),
            Scale::Log => (v.is_finite() && v > 0.0).then(|| v.log10()),
        }
    }

    /// The label of a tick at plotted coordinate `x`.
    pub fn label(&self, x: f64) -> String {
        match self.scale {
            Scale::Linear => format_linear(x, self.step),
            Scale::Log if (x - x.round()).abs() < 1e-9 => format_decade(x.round() as i32),
            Scale::Log => format_value(10f64.powf(x)),
        }
    }

    /// The axis title with the offset, when there is one (`z (m) − 0.1`).
    pub fn title(&self, title: &str) -> String {
        if self.offset == 0.0 {
            title.to_string()
        } else {
            let sign = if self.offset > 0.0 { '−' } else { '+' };
            format!("{title} {sign} {}", format_value(self.offset.abs()))
        }
    }
}

/// A multiple of `step` with the decimals the step needs; scientific notation for very
/// small or large magnitudes.
pub fn format_linear(x: f64, step: f64) -> String {
    if (x / step).round() == 0.0 {
        return "0".into();
    }
    let scale = x.abs().max(step);
    if scale >= 1e5 || step < 1e-4 {
        let exponent = scale.log10().floor();
        let digits = ((exponent - step.log10().floor()).max(0.0) as usize).min(6);
        return tidy_exponent(&format!("{x:.digits$e}"));
    }
    let d = decimals(step);
    let text = format!("{x:.d$}");
    if text.starts_with('-') && text[1..].chars().all(|c| c == '0' || c == '.') {
        text[1..].to_string()
    } else {
        text
    }
}

/// `10^k` written as a value: `1e-6`, `0.001`, `0.1`, `1`, `10`, `1000`, `1e5`.
pub fn format_decade(k: i32) -> String {
    match k {
        -3..=-1 => format!("{}", 10f64.powi(k)),
        0..=4 => format!("{}", 10i64.pow(k as u32)),
        _ => format!("1e{k}"),
    }
}

/// A value with 3 significant digits, scientific outside [1e-3, 1e4].
pub fn format_value(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if (1e-3..1e4).contains(&a) {
        let d = (2 - a.log10().floor() as i64).max(0) as usize;
        let text = format!("{v:.d$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    } else {
        tidy_exponent(&format!("{v:.2e}"))
    }
}

/// `1.50e-3` → `1.5e-3`, `2.00e4` → `2e4`.
fn tidy_exponent(text: &str) -> String {
    match text.split_once('e') {
        Some((mantissa, exponent)) if mantissa.contains('.') => {
            let m = mantissa.trim_end_matches('0').trim_end_matches('.');
            format!("{m}e{exponent}")
        }
        _ => text.to_string(),
    }
}

/// An [`AxisLayout`] as a plotters coordinate: maps plotted coordinates to pixels, gives
/// our ticks (major, and minor for the light grid) and labels them.
#[derive(Debug, Clone)]
pub struct TickedRange(pub AxisLayout);

impl Ranged for TickedRange {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let (lo, hi) = self.0.range;
        let t = if hi > lo {
            (value - lo) / (hi - lo)
        } else {
            0.5
        };
        let pixel = f64::from(limit.0) + t * f64::from(limit.1 - limit.0);
        pixel.clamp(-1e6, 1e6).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.0.minor.clone()
        } else {
            self.0.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.0.range.0..self.0.range.1
    }
}

impl ValueFormatter<f64> for TickedRange {
    fn format_ext(&self, value: &f64) -> String {
        self.0.label(*value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps_are_1_2_5() {
        assert_eq!(nice_step(1.0, 8), 0.2);
        assert_eq!(nice_step(0.7, 8), 0.1);
        assert!((nice_step(2e-5, 8) - 5e-6).abs() < 1e-18);
    }

    #[test]
    fn narrow_ranges_get_distinct_labels() {
        let axis = AxisLayout::linear(0.10001, 0.10009, true);
        let labels: Vec<String> = axis.ticks.iter().map(|t| axis.label(*t)).collect();
        assert!(labels.len() >= 3, "{labels:?}");
        for (i, a) in labels.iter().enumerate() {
            for b in &labels[i + 1..] {
                assert_ne!(a, b, "repeated tick label in {labels:?}");
            }
        }
        assert!(axis.offset > 0.0, "a narrow range far from zero is offset");
        assert!(axis.title("z (m)").contains("0.1"));
    }

    #[test]
    fn ordinary_ranges_are_not_offset() {
        let axis = AxisLayout::linear(0.0, 0.5, true);
        assert_eq!(axis.offset, 0.0);
        let labels: Vec<String> = axis.ticks.iter().map(|t| axis.label(*t)).collect();
        assert!(labels.contains(&"0.1".to_string()), "{labels:?}");
        assert!(labels.contains(&"0".to_string()), "{labels:?}");
    }

    #[test]
    fn log_axis_ticks_whole_decades() {
        let axis = AxisLayout::log(3e-7, 2e-2);
        assert_eq!(axis.range.0, -7.0);
        assert_eq!(axis.range.1, -1.0);
        assert_eq!(axis.label(-6.0), "1e-6");
        assert_eq!(axis.label(-2.0), "0.01");
        assert_eq!(axis.label(2.0), "100");
        assert_eq!(axis.to_plot(-1.0), None);
        let short = AxisLayout::log(1.5, 9.0);
        let labels: Vec<String> = short.ticks.iter().map(|t| short.label(*t)).collect();
        assert_eq!(labels, vec!["1", "2", "5", "10"]);
    }

    #[test]
    fn a_narrow_log_axis_keeps_its_decades_and_a_wide_one_its_1_2_5_ticks() {
        let mut wide = AxisLayout::log(1e-3, 0.1);
        wide.keep_labels_apart(600);
        let labels: Vec<String> = wide.ticks.iter().map(|t| wide.label(*t)).collect();
        assert_eq!(
            labels,
            vec!["0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1"]
        );
        let mut narrow = AxisLayout::log(1e-3, 0.1);
        narrow.keep_labels_apart(200);
        let labels: Vec<String> = narrow.ticks.iter().map(|t| narrow.label(*t)).collect();
        assert_eq!(labels, vec!["0.001", "0.01", "0.1"]);
    }

    #[test]
    fn values_are_printed_with_three_digits() {
        assert_eq!(format_value(0.000153), "1.53e-4");
        assert_eq!(format_value(0.00153), "0.00153");
        assert_eq!(format_value(0.0153), "0.0153");
        assert_eq!(format_value(2.0), "2");
        assert_eq!(format_value(123456.0), "1.23e5");
    }
}
