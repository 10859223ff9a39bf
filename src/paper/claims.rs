//! Claims of the paper checked against our data, and paper-vs-ours comparisons.
//!
//! A [`Claim`] pairs a statement of the paper with a test computed from measured numbers
//! (a threshold, a ratio, an ordering). Its verdict comes only from that computation:
//! there is no way to build a claim with a fixed verdict. A missing number (a run that
//! failed, a NaN) gives "not evaluated", never "holds"; a measurement that cannot decide
//! the test (run and reference identical, the iteration cap reached, a tolerance above
//! the signal, values at round-off, a difference inside the timing noise) gives "not
//! measurable here" with that reason, counted neither as holding nor as failing.
//!
//! Every claim states where its threshold comes from ([`Claim::threshold`]: the paper's
//! number, or a stated factor of it) and carries its **margin**: the factor by which the
//! measured value clears its threshold (above 1) or misses it (below 1). A claim within
//! 20 % of its threshold says so ([`Claim::is_close`]).

use crate::report::axis::format_value;

/// The outcome of a claim's test.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The test passes on our numbers.
    Holds,
    /// The test fails on our numbers.
    DoesNotHold,
    /// Our numbers cannot decide the test here, for the reason given.
    NotMeasurable(String),
    /// A number the test needs is missing or not finite.
    NotEvaluated(String),
}

impl Verdict {
    /// `holds`, `does not hold`, `not measurable here (…)` or `not evaluated (…)`.
    pub fn text(&self) -> String {
        match self {
            Verdict::Holds => "holds".into(),
            Verdict::DoesNotHold => "does not hold".into(),
            Verdict::NotMeasurable(why) => format!("not measurable here ({why})"),
            Verdict::NotEvaluated(why) => format!("not evaluated ({why})"),
        }
    }

    /// The verdict without its reason: `holds`, `does not hold`, `not measurable`,
    /// `not evaluated` (what the committed verdict file records).
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::DoesNotHold => "does not hold",
            Verdict::NotMeasurable(_) => "not measurable",
            Verdict::NotEvaluated(_) => "not evaluated",
        }
    }
}

/// Why a claim does not hold on our data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Our set-up or protocol differs from the paper's in a way that decides the test.
    Protocol,
    /// A finding against the paper: measured as the paper measures, it does not hold.
    Finding,
}

impl Why {
    /// `protocol difference` or `finding against the paper`.
    pub fn text(self) -> &'static str {
        match self {
            Why::Protocol => "protocol difference",
            Why::Finding => "finding against the paper",
        }
    }
}

/// A claim of the paper and its computed test.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The paper's statement (with where it is made).
    pub claim: String,
    /// The test, with its threshold (`e(CCP/PGS) / e(NCP/PGS) at ε = 1e-2 ≥ 10`).
    pub test: String,
    /// The measured numbers (`4.8e-2 / 5.3e-6 = 9.1e3`).
    pub measured: String,
    /// Computed from the numbers.
    pub verdict: Verdict,
    /// Where the threshold comes from (the paper's number, or a stated factor of it).
    pub threshold: String,
    /// The factor by which the measured value clears its threshold (> 1) or misses it
    /// (< 1); `None` for a sign test or a missing number.
    pub margin: Option<f64>,
    /// Why it does not hold, with the evidence (shown when it does not hold).
    pub why: Option<(Why, String)>,
    /// Decided on wall-clock timings: its "not measurable" band is the machine's timing
    /// noise, which a second run may cross ([`Claim::timing`]).
    pub timing: bool,
}

/// `x` written with 3 significant digits.
pub fn num(x: f64) -> String {
    format_value(x)
}

fn finite(values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
}

/// `value / bound` for positive numbers, 0 for a non-positive value above a positive
/// bound, `None` otherwise (a sign test).
fn factor(value: f64, bound: f64) -> Option<f64> {
    match (value > 0.0, bound > 0.0) {
        (true, true) => Some(value / bound),
        (false, true) if value.is_finite() => Some(0.0),
        _ => None,
    }
}

/// The margin of `value ≥ bound`.
fn margin_above(value: f64, bound: f64) -> Option<f64> {
    factor(value, bound)
}

/// The margin of `value ≤ bound`.
fn margin_below(value: f64, bound: f64) -> Option<f64> {
    match (value > 0.0, bound > 0.0) {
        (true, true) => Some(bound / value),
        (false, true) if value.is_finite() => Some(f64::INFINITY),
        _ => None,
    }
}

/// A margin within this factor of 1 is "close to its threshold".
pub const CLOSE: f64 = 1.2;

impl Claim {
    /// A claim whose test is `holds` (`None`: a number was missing).
    fn from_test(
        claim: &str,
        test: String,
        measured: String,
        holds: Option<bool>,
        margin: Option<f64>,
    ) -> Self {
        let verdict = match holds {
            Some(true) => Verdict::Holds,
            Some(false) => Verdict::DoesNotHold,
            None => Verdict::NotEvaluated("a number is missing".into()),
        };
        Self {
            claim: claim.to_string(),
            test,
            measured,
            verdict,
            threshold: String::new(),
            margin: holds.and(margin),
            why: None,
            timing: false,
        }
    }

    /// `what ≥ bound`.
    pub fn at_least(claim: &str, what: &str, value: f64, bound: f64) -> Self {
        Self::from_test(
            claim,
            format!("{what} ≥ {}", num(bound)),
            format!("{what} = {}", num(value)),
            finite(&[value, bound]).then_some(value >= bound),
            margin_above(value, bound),
        )
    }

    /// `what ≤ bound`.
    pub fn at_most(claim: &str, what: &str, value: f64, bound: f64) -> Self {
        Self::from_test(
            claim,
            format!("{what} ≤ {}", num(bound)),
            format!("{what} = {}", num(value)),
            finite(&[value, bound]).then_some(value <= bound),
            margin_below(value, bound),
        )
    }

    /// `num / den ≥ bound`.
    pub fn ratio_at_least(claim: &str, num_: (&str, f64), den: (&str, f64), bound: f64) -> Self {
        let ratio = num_.1 / den.1;
        Self::from_test(
            claim,
            format!("{} / {} ≥ {}", num_.0, den.0, num(bound)),
            format!("{} / {} = {}", num(num_.1), num(den.1), num(ratio)),
            (finite(&[num_.1, den.1, bound]) && den.1 != 0.0).then_some(ratio >= bound),
            margin_above(ratio, bound),
        )
    }

    /// `num / den ≤ bound`.
    pub fn ratio_at_most(claim: &str, num_: (&str, f64), den: (&str, f64), bound: f64) -> Self {
        let ratio = num_.1 / den.1;
        Self::from_test(
            claim,
            format!("{} / {} ≤ {}", num_.0, den.0, num(bound)),
            format!("{} / {} = {}", num(num_.1), num(den.1), num(ratio)),
            (finite(&[num_.1, den.1, bound]) && den.1 != 0.0).then_some(ratio <= bound),
            margin_below(ratio, bound),
        )
    }

    /// `target / factor ≤ what ≤ target · factor`.
    pub fn within_factor(claim: &str, what: &str, value: f64, target: f64, factor_: f64) -> Self {
        let (lo, hi) = (target / factor_, target * factor_);
        let margin = match (margin_above(value, lo), margin_below(value, hi)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            _ => None,
        };
        Self::from_test(
            claim,
            format!(
                "{} ≤ {what} ≤ {} (within {}× of {})",
                num(lo),
                num(hi),
                num(factor_),
                num(target)
            ),
            format!("{what} = {}", num(value)),
            finite(&[value, target, factor_]).then_some(value >= lo && value <= hi),
            margin,
        )
    }

    /// `|what − target| ≤ tolerance`.
    pub fn near(claim: &str, what: &str, value: f64, target: f64, tolerance: f64) -> Self {
        Self::from_test(
            claim,
            format!("|{what} − {}| ≤ {}", num(target), num(tolerance)),
            format!("{what} = {}", num(value)),
            finite(&[value, target, tolerance]).then(|| (value - target).abs() <= tolerance),
            margin_below((value - target).abs(), tolerance),
        )
    }

    /// `items[0] < items[1] < …` (strictly increasing values).
    pub fn increasing(claim: &str, items: &[(String, f64)]) -> Self {
        let names: Vec<&str> = items.iter().map(|(n, _)| n.as_str()).collect();
        let values: Vec<f64> = items.iter().map(|(_, v)| *v).collect();
        let margin = values
            .windows(2)
            .map(|w| margin_above(w[1], w[0]))
            .try_fold(f64::INFINITY, |m, x| x.map(|x| m.min(x)));
        Self::from_test(
            claim,
            names.join(" < "),
            items
                .iter()
                .map(|(n, v)| format!("{n} = {}", num(*v)))
                .collect::<Vec<_>>()
                .join(", "),
            finite(&values).then(|| values.windows(2).all(|w| w[0] < w[1])),
            margin,
        )
    }

    /// Every part holds. A part not evaluated makes the claim not evaluated; else a part
    /// that does not hold makes it fail (it was measured); else a part not measurable
    /// makes it not measurable (its reasons joined). Its margin is the smallest of the
    /// measured parts'.
    pub fn all(claim: &str, parts: Vec<Claim>) -> Self {
        let joined = |f: fn(&Claim) -> &str, separator: &str| {
            parts
                .iter()
                .map(f)
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(separator)
        };
        let unmeasurable: Vec<String> = parts
            .iter()
            .filter_map(|p| match &p.verdict {
                Verdict::NotMeasurable(why) => Some(why.clone()),
                _ => None,
            })
            .collect();
        let verdict = if parts
            .iter()
            .any(|p| matches!(p.verdict, Verdict::NotEvaluated(_)))
        {
            Verdict::NotEvaluated("a number is missing".into())
        } else if parts.iter().any(|p| p.verdict == Verdict::DoesNotHold) {
            Verdict::DoesNotHold
        } else if !unmeasurable.is_empty() {
            Verdict::NotMeasurable(unmeasurable.join("; "))
        } else {
            Verdict::Holds
        };
        let margin = parts
            .iter()
            .filter(|p| matches!(p.verdict, Verdict::Holds | Verdict::DoesNotHold))
            .filter_map(|p| p.margin)
            .reduce(f64::min);
        Self {
            claim: claim.to_string(),
            test: joined(|p| p.test.as_str(), "; and "),
            measured: joined(|p| p.measured.as_str(), "; "),
            verdict,
            threshold: joined(|p| p.threshold.as_str(), "; "),
            margin,
            why: None,
            timing: parts.iter().any(|p| p.timing),
        }
    }

    /// The same claim, marked as decided on wall-clock timings.
    pub fn timing(mut self) -> Self {
        self.timing = true;
        self
    }

    /// The same claim with where its threshold comes from.
    pub fn threshold(mut self, source: impl Into<String>) -> Self {
        self.threshold = source.into();
        self
    }

    /// The same claim, not measurable here when `reason` is given (unless a number is
    /// missing: that stays "not evaluated").
    pub fn unless(mut self, reason: Option<String>) -> Self {
        if let Some(reason) = reason {
            if !matches!(self.verdict, Verdict::NotEvaluated(_)) {
                self.verdict = Verdict::NotMeasurable(reason);
            }
        }
        self
    }

    /// The same claim with why it does not hold (shown only when it does not).
    pub fn why(mut self, why: Why, evidence: impl Into<String>) -> Self {
        self.why = Some((why, evidence.into()));
        self
    }

    /// The same claim with `what` named after its statement (the metric it reads).
    pub fn metric(mut self, what: &str) -> Self {
        self.test = format!("{} [metric: {what}]", self.test);
        self
    }

    /// True when the claim was decided within 20 % of its threshold.
    pub fn is_close(&self) -> bool {
        matches!(self.verdict, Verdict::Holds | Verdict::DoesNotHold)
            && self.margin.is_some_and(|m| m < CLOSE && m > 1.0 / CLOSE)
    }

    /// The margin as text: `×3.2 clear`, `misses ×2.5`, with the 20 % warning.
    pub fn margin_text(&self) -> String {
        let Some(m) = self.margin else {
            return "–".into();
        };
        let text = if m.is_infinite() {
            "∞ (the measured value is 0)".to_string()
        } else if m == 0.0 {
            "misses (wrong sign)".to_string()
        } else if m >= 1.0 {
            format!("×{} clear", num(m))
        } else {
            format!("misses ×{}", num(1.0 / m))
        };
        if self.is_close() {
            format!("{text}, **within 20 % of its threshold**")
        } else {
            text
        }
    }
}

/// A number of the paper beside ours.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// What is compared (with its unit).
    pub quantity: String,
    /// The paper's value, when it gives one.
    pub paper: Option<f64>,
    /// What the paper says instead of a number (`figure only: the cube bounces`).
    pub paper_text: String,
    /// Ours.
    pub ours: Option<f64>,
}

impl Comparison {
    /// A quantity the paper gives a number for.
    pub fn number(quantity: impl Into<String>, paper: f64, ours: Option<f64>) -> Self {
        Self {
            quantity: quantity.into(),
            paper: Some(paper),
            paper_text: String::new(),
            ours,
        }
    }

    /// A quantity the paper shows without a number.
    pub fn qualitative(
        quantity: impl Into<String>,
        paper_text: impl Into<String>,
        ours: Option<f64>,
    ) -> Self {
        Self {
            quantity: quantity.into(),
            paper: None,
            paper_text: paper_text.into(),
            ours,
        }
    }

    /// `ours / paper`, when both are numbers.
    pub fn ratio(&self) -> Option<f64> {
        match (self.paper, self.ours) {
            (Some(p), Some(o)) if p != 0.0 && p.is_finite() && o.is_finite() => Some(o / p),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_numbers() {
        assert_eq!(Claim::at_least("c", "x", 2.0, 1.0).verdict, Verdict::Holds);
        assert_eq!(
            Claim::at_least("c", "x", 0.5, 1.0).verdict,
            Verdict::DoesNotHold
        );
        assert!(matches!(
            Claim::at_least("c", "x", f64::NAN, 1.0).verdict,
            Verdict::NotEvaluated(_)
        ));
        let r = Claim::ratio_at_least("c", ("a", 4.8e-2), ("b", 5.3e-6), 10.0);
        assert_eq!(r.verdict, Verdict::Holds);
        assert!(r.measured.contains("= 9057"), "{}", r.measured);
    }

    #[test]
    fn ordering_and_conjunction() {
        let up = Claim::increasing("c", &[("a".into(), 1.0), ("b".into(), 2.0)]);
        assert_eq!(up.verdict, Verdict::Holds);
        let down = Claim::increasing("c", &[("a".into(), 3.0), ("b".into(), 2.0)]);
        assert_eq!(down.verdict, Verdict::DoesNotHold);
        assert_eq!(
            Claim::all("c", vec![up.clone(), down]).verdict,
            Verdict::DoesNotHold
        );
        assert_eq!(Claim::all("c", vec![up]).verdict, Verdict::Holds);
    }

    #[test]
    fn margins_say_by_how_much_a_threshold_is_cleared() {
        let c = Claim::ratio_at_least("c", ("a", 30.0), ("b", 1.0), 10.0);
        assert_eq!(c.margin, Some(3.0));
        assert!(!c.is_close());
        let c = Claim::at_most("c", "x", 0.67e-6, 1e-6);
        assert!((c.margin.expect("margin") - 1.0 / 0.67).abs() < 1e-9);
        assert!(!c.is_close(), "1.49 is not within 20 %");
        let c = Claim::within_factor("c", "x", 5.83, 10.0, 2.0);
        assert!(c.is_close(), "5.83 is within 20 % of the bound 5");
        assert!(c.margin_text().contains("within 20 %"));
        let miss = Claim::at_least("c", "x", 0.5, 1.0);
        assert_eq!(miss.margin, Some(0.5));
        assert_eq!(miss.margin_text(), "misses ×2");
    }

    #[test]
    fn an_unmeasurable_part_is_counted_neither_way() {
        let holds = Claim::at_least("", "x", 2.0, 1.0);
        let degenerate =
            Claim::ratio_at_least("", ("a", 0.0), ("b", 3e-11), 1.0).unless(Some("same".into()));
        assert!(matches!(degenerate.verdict, Verdict::NotMeasurable(_)));
        let both = Claim::all("c", vec![holds.clone(), degenerate.clone()]);
        assert_eq!(both.verdict, Verdict::NotMeasurable("same".into()));
        assert_eq!(both.margin, Some(2.0), "the measured part's margin");
        let fails = Claim::at_least("", "x", 0.5, 1.0);
        assert_eq!(
            Claim::all("c", vec![fails, degenerate]).verdict,
            Verdict::DoesNotHold
        );
        let missing = Claim::at_least("", "x", f64::NAN, 1.0).unless(Some("cap".into()));
        assert!(matches!(missing.verdict, Verdict::NotEvaluated(_)));
    }

    #[test]
    fn ratio_needs_both_numbers() {
        let c = Comparison::number("e", 1.5e-3, Some(3.0e-3));
        assert_eq!(c.ratio(), Some(2.0));
        assert_eq!(Comparison::number("e", 1.5e-3, None).ratio(), None);
        assert_eq!(
            Comparison::qualitative("e", "figure", Some(1.0)).ratio(),
            None
        );
    }
}
