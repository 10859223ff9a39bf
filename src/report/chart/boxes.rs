//! Box plots: median, quartiles and whiskers of each sample, in groups along the x axis.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::legend::{draw_legend, legend_size, LegendEntry};
use super::strokes::shape_style;
use super::{BoxChart, FONT, MARGIN, X_LABEL_AREA, Y_LABEL_AREA};
use crate::report::axis::{data_range, AxisLayout, Scale, TickedRange};
use crate::report::style::{Dash, LineStyle, Marker};

/// Median, quartiles and whisker ends (1.5 interquartile ranges, within the data).
fn box_stats(samples: &[f64]) -> Option<[f64; 5]> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let pos = p * (v.len() - 1) as f64;
        let (i, w) = (pos.floor() as usize, pos - pos.floor());
        v[i] * (1.0 - w) + v[(i + 1).min(v.len() - 1)] * w
    };
    let (q1, q2, q3) = (q(0.25), q(0.5), q(0.75));
    let iqr = q3 - q1;
    let lo = v
        .iter()
        .copied()
        .find(|x| *x >= q1 - 1.5 * iqr)
        .unwrap_or(q1);
    let hi = v
        .iter()
        .rev()
        .copied()
        .find(|x| *x <= q3 + 1.5 * iqr)
        .unwrap_or(q3);
    Some([lo, q1, q2, q3, hi])
}

pub(super) fn draw_box_chart<DB: DrawingBackend>(
    chart: &BoxChart,
    cell: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    let area = if chart.title.is_empty() {
        cell.clone()
    } else {
        cell.titled(&chart.title, (FONT, 18))
            .map_err(|e| e.to_string())?
    };
    let area = area.margin(MARGIN, MARGIN, MARGIN, MARGIN + 6);
    let entries: Vec<LegendEntry> = chart
        .legend
        .iter()
        .map(|(label, color, filled)| LegendEntry {
            label: label.clone(),
            style: LineStyle {
                color: *color,
                dash: Dash::Solid,
                marker: Marker::Square,
            },
            marker: false,
            patch: Some(*filled),
        })
        .collect();
    // The legend sits in a strip on the right, so that no box or outlier hides under it.
    let (lw, _) = legend_size(&area, &entries);
    let (w, _) = area.dim_in_pixel();
    let (area, strip) = if entries.is_empty() {
        (area.clone(), None)
    } else {
        let (left, right) = area.split_horizontally(w as i32 - lw - 8);
        (left, Some(right))
    };
    let all = chart
        .groups
        .iter()
        .flat_map(|g| g.boxes.iter().flat_map(|b| b.samples.iter().copied()));
    let y_axis = AxisLayout::new(data_range(all, chart.y_scale), chart.y_scale);
    let n = chart.groups.len().max(1);
    let x_layout = AxisLayout {
        scale: Scale::Linear,
        range: (-0.6, n as f64 - 0.4),
        offset: 0.0,
        ticks: (0..n).map(|k| k as f64).collect(),
        minor: Vec::new(),
        step: 1.0,
    };
    let x_spec = TickedRange(x_layout);
    let y_spec = TickedRange(y_axis.clone());
    let mut ctx = ChartBuilder::on(&area)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(x_spec, y_spec)
        .map_err(|e| e.to_string())?;
    let labels: Vec<String> = chart.groups.iter().map(|g| g.label.clone()).collect();
    ctx.configure_mesh()
        .disable_x_mesh()
        .y_desc(y_axis.title(&chart.y_label))
        .x_label_formatter(&|v| {
            labels
                .get(v.round().max(0.0) as usize)
                .cloned()
                .unwrap_or_default()
        })
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .bold_line_style(RGBColor(205, 205, 205))
        .light_line_style(RGBColor(238, 238, 238))
        .draw()
        .map_err(|e| e.to_string())?;
    let inside = |v: f64| v.clamp(y_axis.range.0, y_axis.range.1);
    for (g, group) in chart.groups.iter().enumerate() {
        let k = group.boxes.len().max(1) as f64;
        let width = 0.7 / k;
        for (b, spec) in group.boxes.iter().enumerate() {
            let plotted: Vec<f64> = spec
                .samples
                .iter()
                .filter_map(|v| y_axis.to_plot(*v))
                .collect();
            let Some([lo, q1, q2, q3, hi]) = box_stats(&plotted) else {
                continue;
            };
            let centre = g as f64 - 0.35 + width * (b as f64 + 0.5);
            let (l, r) = (centre - 0.4 * width, centre + 0.4 * width);
            let stroke = shape_style(spec.color, 2, false);
            let area = ctx.plotting_area();
            if spec.filled {
                let light = RGBColor(
                    ((u16::from(spec.color.0) + 2 * 255) / 3) as u8,
                    ((u16::from(spec.color.1) + 2 * 255) / 3) as u8,
                    ((u16::from(spec.color.2) + 2 * 255) / 3) as u8,
                );
                area.draw(&Rectangle::new(
                    [(l, inside(q1)), (r, inside(q3))],
                    shape_style(light, 1, true),
                ))
                .map_err(|e| e.to_string())?;
            }
            area.draw(&Rectangle::new([(l, inside(q1)), (r, inside(q3))], stroke))
                .map_err(|e| e.to_string())?;
            area.draw(&PathElement::new(
                vec![(l, inside(q2)), (r, inside(q2))],
                shape_style(spec.color, 3, false),
            ))
            .map_err(|e| e.to_string())?;
            for (from, to) in [(q3, hi), (q1, lo)] {
                area.draw(&PathElement::new(
                    vec![(centre, inside(from)), (centre, inside(to))],
                    stroke,
                ))
                .map_err(|e| e.to_string())?;
                area.draw(&PathElement::new(
                    vec![
                        (centre - 0.2 * width, inside(to)),
                        (centre + 0.2 * width, inside(to)),
                    ],
                    stroke,
                ))
                .map_err(|e| e.to_string())?;
            }
            for v in plotted.iter().filter(|v| **v < lo || **v > hi) {
                area.draw(&Circle::new(
                    (centre, inside(*v)),
                    2,
                    shape_style(spec.color, 1, false),
                ))
                .map_err(|e| e.to_string())?;
            }
        }
    }
    match strip {
        Some(right) => draw_legend(&right, (4, 6), &entries),
        None => Ok(()),
    }
}
