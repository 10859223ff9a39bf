//! Lines and markers in pixels: dashes laid along a path, paths split at sharp turns (so
//! that a plotters path does not spike at a U-turn), hollow and filled markers.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::style::{Dash, LineStyle, Marker};

pub(super) fn shape_style(color: RGBColor, width: u32, filled: bool) -> ShapeStyle {
    ShapeStyle {
        color: color.to_rgba(),
        filled,
        stroke_width: width,
    }
}

/// Draws a marker of `style` at pixel `p` on `area`.
pub(super) fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: (i32, i32),
    style: &LineStyle,
) -> Result<(), String> {
    let s = shape_style(style.color, 2, false);
    let r = 5;
    let result = match style.marker {
        Marker::Circle => area.draw(&Circle::new(p, r, s)),
        Marker::Square => area.draw(&Rectangle::new([(p.0 - r, p.1 - r), (p.0 + r, p.1 + r)], s)),
        Marker::Triangle => area
            .draw(&Polygon::new(
                vec![(p.0, p.1 - r - 1), (p.0 - r, p.1 + r), (p.0 + r, p.1 + r)],
                shape_style(style.color, 1, false),
            ))
            .and_then(|_| {
                area.draw(&PathElement::new(
                    vec![
                        (p.0, p.1 - r - 1),
                        (p.0 - r, p.1 + r),
                        (p.0 + r, p.1 + r),
                        (p.0, p.1 - r - 1),
                    ],
                    s,
                ))
            }),
        Marker::Cross => area
            .draw(&PathElement::new(
                vec![(p.0 - r, p.1 - r), (p.0 + r, p.1 + r)],
                s,
            ))
            .and_then(|_| {
                area.draw(&PathElement::new(
                    vec![(p.0 - r, p.1 + r), (p.0 + r, p.1 - r)],
                    s,
                ))
            }),
    };
    result.map_err(|e| e.to_string())
}

/// Draws a polyline in pixels with the style's dash pattern.
pub(super) fn draw_pixel_path<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pixels: &[(i32, i32)],
    style: &LineStyle,
) -> Result<(), String> {
    let s = shape_style(style.color, 2, false);
    match style.dash {
        Dash::Solid => {
            for piece in split_at_sharp_turns(pixels) {
                area.draw(&PathElement::new(piece, s))
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        }
        Dash::Dashed { on, off } => {
            for dash in dash_pieces(pixels, f64::from(on), f64::from(off)) {
                area.draw(&PathElement::new(dash, s))
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        }
    }
}

/// Splits a pixel polyline at its vertices where it turns by more than 90°: the bitmap
/// backend joins wide segments with mitres, and the mitre of a U-turn shoots far beyond
/// the point (lines across the title and axes). Consecutive repeated pixels are dropped.
fn split_at_sharp_turns(pixels: &[(i32, i32)]) -> Vec<Vec<(i32, i32)>> {
    let mut points = pixels.to_vec();
    points.dedup();
    let mut pieces = Vec::new();
    let mut current: Vec<(i32, i32)> = Vec::new();
    for (k, p) in points.iter().enumerate() {
        current.push(*p);
        if k + 1 < points.len() && current.len() >= 2 {
            let a = current[current.len() - 2];
            let n = points[k + 1];
            let (u, v) = ((p.0 - a.0, p.1 - a.1), (n.0 - p.0, n.1 - p.1));
            if i64::from(u.0) * i64::from(v.0) + i64::from(u.1) * i64::from(v.1) <= 0 {
                pieces.push(std::mem::replace(&mut current, vec![*p]));
            }
        }
    }
    if current.len() > 1 || (pieces.is_empty() && !current.is_empty()) {
        pieces.push(current);
    }
    pieces
}

/// Cuts a pixel polyline into dashes of `on` px separated by `off` px, the pattern
/// running on along the whole path (not restarted at each vertex).
fn dash_pieces(pixels: &[(i32, i32)], on: f64, off: f64) -> Vec<Vec<(i32, i32)>> {
    let mut pieces = Vec::new();
    let mut current: Vec<(i32, i32)> = Vec::new();
    let period = on + off;
    let mut phase = 0.0; // distance along the pattern
    for w in pixels.windows(2) {
        let (a, b) = (
            (f64::from(w[0].0), f64::from(w[0].1)),
            (f64::from(w[1].0), f64::from(w[1].1)),
        );
        let length = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let mut s = 0.0;
        while s < length {
            let in_dash = phase < on;
            let left = if in_dash { on - phase } else { period - phase };
            let step = left.min(length - s);
            let at = |t: f64| {
                let u = t / length.max(1e-12);
                (
                    (a.0 + u * (b.0 - a.0)).round() as i32,
                    (a.1 + u * (b.1 - a.1)).round() as i32,
                )
            };
            if in_dash {
                if current.is_empty() {
                    current.push(at(s));
                }
                current.push(at(s + step));
            }
            s += step;
            phase += step;
            if phase >= on && in_dash && current.len() > 1 {
                pieces.push(std::mem::take(&mut current));
            }
            if phase >= period {
                phase -= period;
            }
        }
    }
    if current.len() > 1 {
        pieces.push(current);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u_turns_split_the_path() {
        let pieces = split_at_sharp_turns(&[(0, 0), (10, 0), (10, 0), (0, 1), (-5, 2)]);
        assert_eq!(
            pieces,
            vec![vec![(0, 0), (10, 0)], vec![(10, 0), (0, 1), (-5, 2)]]
        );
    }

    #[test]
    fn dashes_follow_the_path() {
        let pieces = dash_pieces(&[(0, 0), (100, 0)], 10.0, 5.0);
        assert_eq!(pieces.len(), 7);
        assert_eq!(pieces[0], vec![(0, 0), (10, 0)]);
        assert_eq!(pieces[1], vec![(15, 0), (25, 0)]);
    }
}
