//! Legends: their size in pixels, where they go (the corner of the plot that hides no
//! data, or outside on the right) and their drawing.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::strokes::{draw_marker, draw_pixel_path, shape_style};
use super::FONT;
use crate::report::style::LineStyle;

/// A legend entry.
pub(super) struct LegendEntry {
    pub(super) label: String,
    pub(super) style: LineStyle,
    pub(super) marker: bool,
    /// A filled or hollow box instead of a line.
    pub(super) patch: Option<bool>,
}

const LEGEND_ROW: i32 = 20;
const LEGEND_SAMPLE: i32 = 34;

pub(super) fn legend_size<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
) -> (i32, i32) {
    let font: TextStyle = (FONT, 14).into_font().into();
    let width = entries
        .iter()
        .map(|e| {
            area.estimate_text_size(&e.label, &font)
                .map_or(7 * e.label.len() as u32, |s| s.0) as i32
        })
        .max()
        .unwrap_or(0);
    (
        width + LEGEND_SAMPLE + 22,
        LEGEND_ROW * entries.len() as i32 + 10,
    )
}

/// Draws the legend with its top-left corner at `origin` (pixels of `area`).
pub(super) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    origin: (i32, i32),
    entries: &[LegendEntry],
) -> Result<(), String> {
    if entries.is_empty() {
        return Ok(());
    }
    let (w, h) = legend_size(area, entries);
    let (x, y) = origin;
    area.draw(&Rectangle::new(
        [(x, y), (x + w, y + h)],
        shape_style(RGBColor(255, 255, 255), 1, true),
    ))
    .map_err(|e| e.to_string())?;
    area.draw(&Rectangle::new(
        [(x, y), (x + w, y + h)],
        shape_style(RGBColor(120, 120, 120), 1, false),
    ))
    .map_err(|e| e.to_string())?;
    for (k, e) in entries.iter().enumerate() {
        let row = y + 5 + LEGEND_ROW * k as i32 + LEGEND_ROW / 2;
        let (a, b) = ((x + 6, row), (x + 6 + LEGEND_SAMPLE - 6, row));
        match e.patch {
            Some(filled) => {
                area.draw(&Rectangle::new(
                    [(a.0, row - 6), (b.0, row + 6)],
                    shape_style(e.style.color, 2, filled),
                ))
                .map_err(|err| err.to_string())?;
            }
            None => {
                draw_pixel_path(area, &[a, b], &e.style)?;
                if e.marker {
                    draw_marker(area, ((a.0 + b.0) / 2, row), &e.style)?;
                }
            }
        }
        area.draw(&Text::new(
            e.label.clone(),
            (x + LEGEND_SAMPLE + 10, row - 8),
            (FONT, 14).into_font(),
        ))
        .map_err(|err| err.to_string())?;
    }
    Ok(())
}

/// Where the legend goes: the corner of the plot hiding the fewest points (normalized
/// plot coordinates), or outside on the right when every corner hides some.
pub(super) enum LegendPlace {
    Inside(f64, f64),
    Outside,
}

pub(super) fn place_legend(points: &[(f64, f64)], size: (f64, f64)) -> LegendPlace {
    let (w, h) = size;
    if w >= 0.6 || h >= 0.9 {
        return LegendPlace::Outside;
    }
    let corners = [
        (1.0 - w, 1.0),
        (0.0, 1.0),
        (1.0 - w, h),
        (0.0, h),
        ((1.0 - w) / 2.0, 1.0),
        ((1.0 - w) / 2.0, h),
    ];
    let hidden = |(x0, y1): (f64, f64)| {
        points
            .iter()
            .filter(|p| {
                p.0 >= x0 - 0.02 && p.0 <= x0 + w + 0.02 && p.1 <= y1 + 0.02 && p.1 >= y1 - h - 0.02
            })
            .count()
    };
    let best = corners
        .iter()
        .map(|c| (hidden(*c), *c))
        .min_by_key(|(n, _)| *n);
    match best {
        Some((0, (x, y))) => LegendPlace::Inside(x, y),
        _ => LegendPlace::Outside,
    }
}
