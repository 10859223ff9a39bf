//! One look per solver, everywhere: a fixed colour, dash pattern and marker for each
//! solver id (design.md §4), so that a reader who learnt that `ncp-pgs` is the dashed sky
//! blue line in one figure finds it so in every other. Families share a hue: NCP blues,
//! CCP oranges and reds, LCP greens, RaiSim purples (Okabe-Ito based, readable by most
//! colour-blind readers); within a family the dash tells the algorithm apart.

use plotters::style::RGBColor;

use crate::solvers::SolverId;

/// A line's dash pattern, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    /// A continuous line.
    Solid,
    /// Dashes of `on` pixels separated by `off` pixels.
    Dashed {
        /// Dash length (px).
        on: u32,
        /// Gap length (px).
        off: u32,
    },
}

/// A point marker shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A hollow circle.
    Circle,
    /// A hollow triangle.
    Triangle,
    /// A cross.
    Cross,
    /// A hollow square.
    Square,
}

/// How one curve is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineStyle {
    /// Colour.
    pub color: RGBColor,
    /// Dash pattern.
    pub dash: Dash,
    /// Marker drawn when the curve must be told apart from one it coincides with.
    pub marker: Marker,
}

const SOLID: Dash = Dash::Solid;
const DASHED: Dash = Dash::Dashed { on: 10, off: 5 };
const DOTTED: Dash = Dash::Dashed { on: 3, off: 4 };
const LONG_DASHED: Dash = Dash::Dashed { on: 18, off: 6 };

/// The fixed style of a solver.
pub fn solver_style(id: SolverId) -> LineStyle {
    let (color, dash, marker) = match id {
        SolverId::NcpAdmm => (RGBColor(0, 114, 178), SOLID, Marker::Circle),
        SolverId::NcpPgs => (RGBColor(86, 180, 233), DASHED, Marker::Triangle),
        SolverId::NcpStagproj => (RGBColor(31, 59, 115), DOTTED, Marker::Square),
        SolverId::CcpAdmm => (RGBColor(213, 94, 0), SOLID, Marker::Circle),
        SolverId::CcpPgs => (RGBColor(230, 159, 0), DASHED, Marker::Triangle),
        SolverId::CcpNewton => (RGBColor(140, 45, 4), DOTTED, Marker::Cross),
        SolverId::CcpIpm => (RGBColor(204, 121, 167), LONG_DASHED, Marker::Square),
        SolverId::LcpPgs => (RGBColor(0, 158, 115), DASHED, Marker::Triangle),
        SolverId::LcpQp => (RGBColor(0, 77, 64), SOLID, Marker::Circle),
        SolverId::LcpStagproj => (RGBColor(102, 194, 165), DOTTED, Marker::Square),
        SolverId::Raisim => (RGBColor(123, 50, 148), SOLID, Marker::Cross),
        SolverId::RaisimCorrected => (RGBColor(194, 165, 207), DASHED, Marker::Triangle),
    };
    LineStyle {
        color,
        dash,
        marker,
    }
}

/// The solver id a label starts with (`ncp-pgs:eps_abs=1e-8` → `ncp-pgs`), if any.
pub fn solver_of_label(label: &str) -> Option<SolverId> {
    let head = label.split([':', ' ', '(', ',']).next().unwrap_or(label);
    head.parse().ok()
}

const DASHES: [Dash; 4] = [SOLID, DASHED, DOTTED, LONG_DASHED];
const MARKERS: [Marker; 4] = [
    Marker::Circle,
    Marker::Triangle,
    Marker::Cross,
    Marker::Square,
];

fn text_hash(text: &str) -> usize {
    text.bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31) ^ u32::from(b)) as usize
}

/// The style of a curve labelled by a solver text (`ncp-pgs:eps_abs=1e-8` keeps
/// `ncp-pgs`'s; [`separate`] tells two settings of one solver apart in a figure); other
/// labels get a grey line whose dash and marker are fixed by the text, so that they too
/// keep their look between figures.
pub fn label_style(label: &str) -> LineStyle {
    match solver_of_label(label) {
        Some(id) => solver_style(id),
        None => {
            let h = text_hash(label);
            LineStyle {
                color: RGBColor(90, 90, 90),
                dash: DASHES[h % DASHES.len()],
                marker: MARKERS[(h / DASHES.len()) % MARKERS.len()],
            }
        }
    }
}

/// The styles of curves drawn together: [`label_style`] of each, made [`separate`].
pub fn distinct_styles<S: AsRef<str>>(labels: &[S]) -> Vec<LineStyle> {
    let mut styles: Vec<LineStyle> = labels.iter().map(|l| label_style(l.as_ref())).collect();
    separate(&mut styles);
    styles
}

/// Moves any style equal to an earlier one's (two settings of one solver hashed alike, two
/// grey labels) to the next dash and marker not yet taken in its colour, so that no two
/// curves of a figure look alike while there are such left; the first keeps its style.
pub fn separate(styles: &mut [LineStyle]) {
    for j in 1..styles.len() {
        let (earlier, rest) = styles.split_at_mut(j);
        let style = &mut rest[0];
        let start = DASHES.iter().position(|d| *d == style.dash).unwrap_or(0);
        for k in 1..=DASHES.len() * MARKERS.len() {
            if !earlier.contains(style) {
                break;
            }
            style.dash = DASHES[(start + k) % DASHES.len()];
            style.marker = MARKERS[(start + k) / DASHES.len() % MARKERS.len()];
        }
    }
}

/// The analytical (reference) curve: black, dashed.
pub const ANALYTICAL: LineStyle = LineStyle {
    color: RGBColor(0, 0, 0),
    dash: Dash::Dashed { on: 6, off: 4 },
    marker: Marker::Cross,
};

/// `n` colours of a sequential scale (dark blue → yellow, viridis-like) for curves that
/// differ by a parameter (Δt, ε), `k` the index from the smallest value.
pub fn sequential(k: usize, n: usize) -> RGBColor {
    const STOPS: [(u8, u8, u8); 5] = [
        (68, 1, 84),
        (59, 82, 139),
        (33, 145, 140),
        (94, 201, 98),
        (220, 190, 30),
    ];
    if n <= 1 {
        let (r, g, b) = STOPS[1];
        return RGBColor(r, g, b);
    }
    let t = k.min(n - 1) as f64 / (n - 1) as f64 * (STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let w = t - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) * (1.0 - w) + f64::from(b) * w).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_solver_has_a_distinct_look() {
        let styles: Vec<LineStyle> = SolverId::ALL.iter().map(|id| solver_style(*id)).collect();
        for (i, a) in styles.iter().enumerate() {
            for b in &styles[i + 1..] {
                assert!(a.color != b.color, "{a:?} and {b:?} share a colour");
            }
        }
    }

    #[test]
    fn every_solver_has_a_distinct_colour_and_dash_pair() {
        let looks: Vec<(RGBColor, Dash)> = SolverId::ALL
            .iter()
            .map(|id| (solver_style(*id).color, solver_style(*id).dash))
            .collect();
        for (i, a) in looks.iter().enumerate() {
            assert!(!looks[..i].contains(a), "{a:?} twice");
        }
    }

    #[test]
    fn labels_with_settings_keep_the_solver_style() {
        assert_eq!(
            label_style("ncp-pgs:eps_abs=1e-8,max_iter=500"),
            solver_style(SolverId::NcpPgs)
        );
        assert_eq!(solver_of_label("raisim (cold)"), Some(SolverId::Raisim));
        assert_eq!(solver_of_label("analytical"), None);
    }

    #[test]
    fn curves_drawn_together_never_share_a_look() {
        let labels = [
            "ncp-pgs",
            "ncp-pgs:block=exact",
            "ncp-pgs:block=diagonal",
            "ncp-pgs:max_iter=10",
            "other",
            "other too",
            "ncp-admm",
        ];
        let styles = distinct_styles(&labels);
        for (i, a) in styles.iter().enumerate() {
            assert!(
                !styles[..i].contains(a),
                "{} looks like an earlier curve",
                labels[i]
            );
        }
        assert_eq!(styles[0], solver_style(SolverId::NcpPgs));
        assert_eq!(styles[1].color, styles[0].color);
        assert_ne!(styles[1].dash, styles[0].dash);
        assert_eq!(styles[6], solver_style(SolverId::NcpAdmm));
    }

    #[test]
    fn sequential_scale_ends_at_its_stops() {
        assert_eq!(sequential(0, 3), RGBColor(68, 1, 84));
        assert_eq!(sequential(2, 3), RGBColor(220, 190, 30));
    }
}
