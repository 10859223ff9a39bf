//! Claims of the paper checked against our data, and paper-vs-ours comparisons.
//!
//! A [`Claim`] pairs a statement of the paper with a test computed from measured numbers
//! (a threshold, a ratio, an ordering). Its verdict comes only from that computation:
//! there is no way to build a claim with a fixed verdict. A missing number (a run that
//! failed, a NaN) gives "not evaluated", never "holds".

use crate::report::axis::format_value;

/// The outcome of a claim's test.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The test passes on our numbers.
    Holds,
    /// The test fails on our numbers.
    DoesNotHold,
    /// A number the test needs is missing or not finite.
    NotEvaluated(String),
}

impl Verdict {
    /// `holds`, `does not hold` or `not evaluated (…)`.
    pub fn text(&self) -> String {
        match self {
            Verdict::Holds => "holds".into(),
            Verdict::DoesNotHold => "does not hold".into(),
            Verdict::NotEvaluated(why) => format!("not evaluated ({why})"),
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
}

/// `x` written with 3 significant digits.
pub fn num(x: f64) -> String {
    format_value(x)
}

fn finite(values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
}

impl Claim {
    /// A claim whose test is `holds` (`None`: a number was missing).
    fn from_test(claim: &str, test: String, measured: String, holds: Option<bool>) -> Self {
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
        }
    }

    /// `what ≥ bound`.
    pub fn at_least(claim: &str, what: &str, value: f64, bound: f64) -> Self {
        Self::from_test(
            claim,
            format!("{what} ≥ {}", num(bound)),
            format!("{what} = {}", num(value)),
            finite(&[value, bound]).then_some(value >= bound),
        )
    }

    /// `what ≤ bound`.
    pub fn at_most(claim: &str, what: &str, value: f64, bound: f64) -> Self {
        Self::from_test(
            claim,
            format!("{what} ≤ {}", num(bound)),
            format!("{what} = {}", num(value)),
            finite(&[value, bound]).then_some(value <= bound),
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
        )
    }

    /// `target / factor ≤ what ≤ target · factor`.
    pub fn within_factor(claim: &str, what: &str, value: f64, target: f64, factor: f64) -> Self {
        Self::from_test(
            claim,
            format!(
                "{} ≤ {what} ≤ {} (within {}× of {})",
                num(target / factor),
                num(target * factor),
                num(factor),
                num(target)
            ),
            format!("{what} = {}", num(value)),
            finite(&[value, target, factor])
                .then(|| value >= target / factor && value <= target * factor),
        )
    }

    /// `|what − target| ≤ tolerance`.
    pub fn near(claim: &str, what: &str, value: f64, target: f64, tolerance: f64) -> Self {
        Self::from_test(
            claim,
            format!("|{what} − {}| ≤ {}", num(target), num(tolerance)),
            format!("{what} = {}", num(value)),
            finite(&[value, target, tolerance]).then(|| (value - target).abs() <= tolerance),
        )
    }

    /// `items[0] < items[1] < …` (strictly increasing values).
    pub fn increasing(claim: &str, items: &[(String, f64)]) -> Self {
        let names: Vec<&str> = items.iter().map(|(n, _)| n.as_str()).collect();
        let values: Vec<f64> = items.iter().map(|(_, v)| *v).collect();
        Self::from_test(
            claim,
            names.join(" < "),
            items
                .iter()
                .map(|(n, v)| format!("{n} = {}", num(*v)))
                .collect::<Vec<_>>()
                .join(", "),
            finite(&values).then(|| values.windows(2).all(|w| w[0] < w[1])),
        )
    }

    /// Every part holds (`parts`: test, measured, holds); "not evaluated" if a part is.
    pub fn all(claim: &str, parts: Vec<Claim>) -> Self {
        let holds = if parts
            .iter()
            .any(|p| matches!(p.verdict, Verdict::NotEvaluated(_)))
        {
            None
        } else {
            Some(parts.iter().all(|p| p.verdict == Verdict::Holds))
        };
        Self::from_test(
            claim,
            parts
                .iter()
                .map(|p| p.test.clone())
                .collect::<Vec<_>>()
                .join("; and "),
            parts
                .iter()
                .map(|p| p.measured.clone())
                .collect::<Vec<_>>()
                .join("; "),
            holds,
        )
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
